"""read_trial opens a run's files relative to the run folder (openat); what it reads and the
problems it names (by full path) are those of opening each file by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillassay.store import read


def make_run(tmp_path: Path) -> Path:
    run = tmp_path / "eval-1" / "with_skill" / "run-1"
    (run / "outputs").mkdir(parents=True)
    (run / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True}],
                                                  "summary": {"passed": 1, "total": 1}}))
    (run / "timing.json").write_text("{not json")
    (run / "outputs" / "metrics.json").write_text(json.dumps({"total_tool_calls": 4}))
    return run


def test_relative_and_by_path_reads_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = make_run(tmp_path)
    relative = read.read_trial(str(run), 1, "e", "with_skill", 1)
    monkeypatch.setattr(read, "open_run_dir", lambda run_dir: None)
    by_path = read.read_trial(str(run), 1, "e", "with_skill", 1)
    assert relative == by_path
    record, issues = relative
    assert record is not None and record.tool_calls == 4 and record.duration_seconds is None
    assert [i.path for i in issues] == [str(run / "timing.json")]


def test_problems_name_the_full_path(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    (run / "grading.json").unlink()
    (run / "grading.json").mkdir()
    record, issues = read.read_trial(str(run), 1, "e", "with_skill", 1)
    assert record is None
    assert [str(i) for i in issues] == [f"{run / 'grading.json'}: is a directory, expected a JSON file"]
    record, issues = read.read_trial(str(tmp_path / "no-such-run"), 1, "e", "with_skill", 1)
    assert record is None and issues[0].message == "missing (run not graded)"
