"""timing.json's duration limits (store.read.DURATION_LIMITS), at the limit and just past it,
through both read paths: read_trial takes a duration at its limit and reports one past it as
missing; read_plain_run takes the same run at the limit and hands the one past it over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iteration_factory import read_plain

from skillassay.store import read

GRADING = {"expectations": [{"text": "t", "passed": True, "evidence": "e"}], "summary": {"passed": 1, "total": 1}}
SECONDS = {"total_duration_seconds": 1.0, "duration_ms": 1000.0, "executor_duration_seconds": 1.0}  # per unit


def run_with(tmp_path: Path, key: str, value: float) -> Path:
    run = tmp_path / "with_skill" / "run-1"
    run.mkdir(parents=True)
    (run / "grading.json").write_text(json.dumps(GRADING))
    (run / "timing.json").write_text(json.dumps({key: value}))
    return run


def test_the_table_holds_every_duration_key_at_a_billion_seconds() -> None:
    assert {k: v / SECONDS[k] for k, v in read.DURATION_LIMITS.items()} == dict.fromkeys(SECONDS, 1e9)


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("key", list(SECONDS))
def test_both_paths_take_a_duration_at_its_limit(tmp_path: Path, key: str, sign: int) -> None:
    value = sign * read.DURATION_LIMITS[key]
    run = run_with(tmp_path, key, value)
    record, issues = read.read_trial(str(run), 1, "one", "with_skill", 1)
    assert record is not None and not issues
    assert record.duration_seconds == value / SECONDS[key]
    taken = read_plain(run)
    assert taken is not None and taken.figures.duration == record.duration_seconds


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("key", list(SECONDS))
def test_past_its_limit_read_trial_reports_it_missing_and_the_plain_path_hands_it_over(
        tmp_path: Path, key: str, sign: int) -> None:
    value = sign * read.DURATION_LIMITS[key] * (1 + 1e-9)
    run = run_with(tmp_path, key, value)
    record, issues = read.read_trial(str(run), 1, "one", "with_skill", 1)
    assert record is not None and record.duration_seconds is None
    assert [i.message for i in issues] == [f"$.{key}: unexpected value {value!r}; reported as missing"]
    assert read_plain(run) is None
