"""report.md's lines about who produced and graded the answers (report/judge_note.py): the
embedded model is called tiny wherever its answers are the evidence, and a judge graded under
--allow-weak-judge is named with its measured agreement (or the lack of one)."""

from __future__ import annotations

import json
from pathlib import Path

from skillassay.report.judge_note import judge_warnings


def write_record(tmp_path: Path, **fields: object) -> Path:
    (tmp_path / "iteration.json").write_text(json.dumps({"iteration": 1, **fields}), encoding="utf-8")
    return tmp_path


def test_the_embedded_models_answers_are_called_tiny(tmp_path: Path) -> None:
    notes = judge_warnings(write_record(tmp_path, executor={"executor": "local", "options": {}}))
    assert len(notes) == 1 and "tiny model" in notes[0]
    assert judge_warnings(write_record(tmp_path, executor={"executor": "openai", "options": {}})) == []
    assert judge_warnings(write_record(tmp_path, executor={"executor": "local", "options": {"model_path": "x.gguf"}})) == []


def test_a_weak_judge_allowed_by_the_override_is_reported(tmp_path: Path) -> None:
    judge = {"judge": "local", "model": "SmolLM2-135M-Instruct"}
    below = {"judge": judge, "allowed_by": "--allow-weak-judge", "measured": True, "agreed": 8, "cases": 56,
             "low": 0.07, "high": 0.26, "floor": 0.8, "meets_floor": False}
    [note] = judge_warnings(write_record(tmp_path, judge_check=below))
    assert "8 of 56" in note and "7%..26%" in note and "below the floor of 80%" in note and "--allow-weak-judge" in note
    [note] = judge_warnings(write_record(tmp_path, judge_check={"judge": judge, "allowed_by": "--allow-weak-judge",
                                                                "measured": False}))
    assert "without a measured agreement" in note and "judge-check --judge local" in note
    assert judge_warnings(write_record(tmp_path, judge_check={**below, "allowed_by": None})) == []
    assert judge_warnings(write_record(tmp_path, judge_check={**below, "meets_floor": True})) == []
    (tmp_path / "iteration.json").write_text("[1, 2]", encoding="utf-8")
    assert judge_warnings(tmp_path) == []
