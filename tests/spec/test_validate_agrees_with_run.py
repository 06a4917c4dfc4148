"""`validate` and `run` agree (run/preflight.py, issue 34): what `run` refuses, `validate` refuses,
said against the file and key that hold it; `validate` accepts every file the tool writes."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import invoke


def cli(*args: str) -> tuple[int, str]:
    result = invoke(*args)
    return result.exit_code, result.output


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_misspelt_executor_in_the_config_is_refused_by_both_naming_the_config(example_skill: Path,
                                                                                 tmp_path: Path) -> None:
    config = example_skill / "evals" / "benchmark_config.json"
    edit(config, lambda d: d.update(executor="lokal"))
    for code, out in (cli("validate", str(example_skill)), cli("validate", str(config)),
                      cli("run", str(example_skill), "--workspace", str(tmp_path / "ws"))):
        assert code == 2, out
        assert "benchmark_config.json" in out and "$.executor" in out and "did you mean 'local'" in out, out
        assert "--executor" not in out, out  # a flag the user never passed
    assert not (tmp_path / "ws").exists()


def test_plain_expectations_need_a_judge_in_validate_as_in_run(example_skill: Path, tmp_path: Path) -> None:
    evals = example_skill / "evals" / "evals.json"
    edit(evals, lambda d: d["evals"][0]["expectations"].append("The answer names the port."))
    code, out = cli("validate", str(example_skill))
    assert code == 2 and "needs a judge" in out and "--judge" in out, out
    code, out = cli("run", str(example_skill), "--executor", "echo", "--workspace", str(tmp_path / "ws"))
    assert code == 2 and "needs a judge" in out, out
    assert cli("validate", str(example_skill), "--judge", "local") == (0, "1 valid\n")
    code, out = cli("validate", str(example_skill), "--judge", "lokal")
    assert code == 2 and "--judge" in out, out


def test_an_unknown_assertion_type_suggests_the_nearest(example_skill: Path) -> None:
    evals = example_skill / "evals" / "evals.json"
    edit(evals, lambda d: d["evals"][0]["expectations"].append({"type": "contians", "value": "4433"}))
    code, out = cli("validate", str(example_skill))
    assert code == 2 and "unknown assertion type 'contians' (did you mean 'contains'?)" in out, out


def test_validate_accepts_every_file_the_tool_writes(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert cli("run", str(example_skill), "--executor", "echo", "--workspace", str(ws), "--trials", "1")[0] in (0, 1, 3)
    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nOne more line.\n")
    assert cli("run", str(example_skill), "--executor", "echo", "--workspace", str(ws), "--trials", "1")[0] in (0, 1, 3)
    files = sorted(p for p in ws.rglob("*.json") if "skill-snapshot" not in p.parts)
    names = {p.name for p in files}
    assert {"comparison_previous.json", "iteration.json", "benchmark.json", "history.json", "grading.json",
            "metrics.json", "timing.json", "eval_metadata.json"} <= names
    code, out = cli("validate", *map(str, files))
    assert code == 0, out
