"""A matrix iteration on disk for the viewer's tests (issue 37): two agents' folders under
agents/<name>/, each a real iteration written by iteration_factory, iteration.json listing them
(sonnet first: the config's order, not the alphabet's), and matrix.json when asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from iteration_factory import write_iteration

from skillassay.analyze.matrix import AgentPart, summarize_matrix
from skillassay.store.jsonio import write_json

EVALS = {1: ("P", "F"), 2: ("F", "F")}
AGENTS = ("sonnet", "haiku")


def matrix_iteration(tmp_path: Path) -> Path:
    it = tmp_path / "ws" / "iteration-1"
    for name in AGENTS:
        shutil.move(write_iteration(tmp_path / "parts" / name, 1, EVALS), it / "agents" / name)
    write_json(it / "iteration.json", {"schema_version": 1, "iteration": 1, "agents": [
        {"name": "sonnet", "executor": "claude-code", "model": "claude-sonnet-4-5", "required": True},
        {"name": "haiku", "executor": "claude-code", "model": "claude-haiku-4-5", "required": True}]})
    return it


def write_matrix(it: Path) -> None:
    parts = [AgentPart(name, True, "claude-code", None,
                       json.loads((it / "agents" / name / "benchmark.json").read_text(encoding="utf-8")))
             for name in AGENTS]
    write_json(it / "matrix.json", summarize_matrix(parts))
