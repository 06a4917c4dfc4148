"""iteration.json is described in full by `skillassay schema iteration` (the audit of issue 35
found executor_runtime undescribed and 16 of 24 fields without a description), and its
`versions` names the sandbox and backend plugins too, which come through the same registry as
the executor (issue 35 item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import cli

from skillassay import __version__


def _undescribed(schema: dict[str, Any]) -> list[str]:
    """Every property of the schema and of each definition it holds that has no description."""
    out = []
    for where, node in [("iteration", schema), *schema.get("$defs", {}).items()]:
        for name, prop in (node.get("properties") or {}).items():
            if not prop.get("description"):
                out.append(f"{where}.{name}")
    return out


def test_schema_iteration_describes_every_field_and_the_runtime() -> None:
    result = cli(["schema", "iteration"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert _undescribed(schema) == []
    assert "executor_runtime" in schema["properties"]
    runtime = schema["$defs"]["ExecutorRuntime"]["properties"]
    assert {"n_threads", "n_batch", "model_sha256", "llama_cpp_python", "system_info"} <= set(runtime)
    assert {"sandbox", "backend"} <= set(schema["$defs"]["Versions"]["properties"])


def test_versions_name_the_sandbox_and_backend_plugins(example_skill: Path, tmp_path: Path) -> None:
    from skillassay.models.iteration import IterationRecord

    ws = tmp_path / "ws"
    result = cli(["run", str(example_skill), "--executor", "echo", "--trials", "1", "--sandbox", "none",
                  "--workspace", str(ws)])
    assert result.exit_code in (0, 1, 3), result.output
    record = json.loads((ws / "iteration-1" / "iteration.json").read_text())
    versions = record["versions"]
    assert versions["sandbox"] == {"name": "none", "distribution": "skillassay", "version": __version__}, versions
    assert versions["backend"] == {"name": "local", "distribution": "skillassay", "version": __version__}, versions
    IterationRecord.model_validate(record)
