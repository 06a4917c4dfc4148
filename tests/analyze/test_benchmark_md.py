"""benchmark.md never writes "None" where a person reads it (issue 34's plain words): an
executor that names no model (echo, command) gave "executor model `None`"."""

from __future__ import annotations

from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration


def test_a_missing_model_is_not_written_as_none(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPF", "FFF")})
    assert cli(["aggregate", str(it)]).exit_code == 0
    text = (it / "benchmark.md").read_text()
    assert "None" not in text, text.splitlines()[:4]
    assert "executor model not recorded" in text.splitlines()[2], text.splitlines()[2]
