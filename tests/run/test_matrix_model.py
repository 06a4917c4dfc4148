"""The embedded model as one agent of a matrix run (issue 37): `local` (SmolLM2 through
llama.cpp, nothing faked) beside `echo`, in one queue and one iteration. Small: what this
proves is that the embedded model runs as a matrix agent and its folder is a skill-creator
iteration; the statistics are proven by the echo/command and Claude Code tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke
from test_matrix_run import make_skill, read_like_skill_creator

from skillassay.models.matrix import MatrixSummary

pytestmark = pytest.mark.model


def test_the_embedded_model_is_a_matrix_agent(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, [{"name": "smol", "executor": "local", "required": False},
                                  {"name": "echo", "executor": "echo"}], evals=2)
    config = json.loads((skill / "evals" / "benchmark_config.json").read_text())
    config.update({"max_tokens": 16, "temperature": 0.0})
    (tmp_path / "config.json").write_text(json.dumps(config))
    ws = tmp_path / "ws"
    result = invoke("run", str(skill), "--workspace", str(ws), "--config", str(tmp_path / "config.json"))
    assert result.exit_code in (0, 1, 3), result.output
    assert "smol (not required): with skill" in result.flat, result.output
    it = ws / "iteration-1"
    record = json.loads((it / "agents" / "smol" / "iteration.json").read_text())
    assert record["executor"]["executor"] == "local", record["executor"]
    runs = read_like_skill_creator(it / "agents" / "smol")
    assert len(runs["with_skill"]) == len(runs["without_skill"]) == 2
    summary = MatrixSummary.model_validate_json((it / "matrix.json").read_text())
    assert [(a.name, a.executor, a.verdict) for a in summary.agents][0] == ("smol", "local", "NOT GATED")
