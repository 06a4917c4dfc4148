"""report.md's Summary says which evals a delta is over when a changed eval is left out of the
comparison (issue 34): "25% | 13% | +14 pts" read as arithmetic gone wrong, the rates being the
whole suite's and the change the 7 evals in both iterations'."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration


def test_the_summary_delta_names_the_evals_compared(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "PPP"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), 4: ("FFF", "FFF")})
    it = write_iteration(tmp_path, 2, {1: ("PPP", "PPP"), 2: ("PPF", "FFF"), 3: ("PPF", "FFF"), 4: ("PPF", "FFF")})
    meta = next(it.glob("eval-1-*")) / "eval_metadata.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "prompt": "a different question"}))
    assert cli(["compare", str(it)]).exit_code == 0
    assert cli(["report", str(it)]).exit_code == 0
    row = next(line for line in (it / "report.md").read_text().splitlines() if line.startswith("| Pass rate |"))
    assert "+67 pts" in row and "on the 3 evals in both" in row, row


def test_an_unchanged_suite_has_no_scope_note(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "PFF")})
    it = write_iteration(tmp_path, 2, {1: ("PPP", "FFF"), 2: ("PPF", "PFF")})
    assert cli(["compare", str(it)]).exit_code == 0 and cli(["report", str(it)]).exit_code == 0
    assert "evals in both" not in (it / "report.md").read_text()
