"""`skillassay aggregate`'s plain-run path (store.read.read_plain_run, cell_reader._add_graded,
benchmark.graded_run_json) against the general one (read_trial, Arm.add, run_json), run folder
by run folder over many shapes of real files: wherever the plain path takes a run it must give
exactly what the general path gives, and wherever the general path would say something about a
run (a skipped run, a figure read as missing) the plain path must hand the run over (None)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iteration_factory import read_plain

from skillassay.analyze.benchmark import graded_run_json, run_json
from skillassay.analyze.cells import Arm
from skillassay.store import read
from skillassay.workflows.aggregate import aggregate_iteration
from skillassay.workflows.iteration_reader import _add_graded

EXPS = [{"text": "names John Smith", "passed": True, "evidence": "Found in step 3"},
        {"text": "has a SUM formula", "passed": False, "evidence": "No spreadsheet"}]
GRADING: dict[str, Any] = {
    "expectations": EXPS,
    "summary": {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5},
    "execution_metrics": {"total_tool_calls": 15, "errors_encountered": 0, "output_chars": 12450},
    "timing": {"executor_duration_seconds": 165.0, "total_duration_seconds": 191.0},
    "user_notes_summary": {"uncertainties": ["Used 2023 data"], "needs_review": [], "workarounds": ["x"]},
}
TIMING: dict[str, Any] = {"total_tokens": 84852, "duration_ms": 23332, "total_duration_seconds": 23.3,
                          "executor_duration_seconds": 165.0}
METRICS: dict[str, Any] = {"total_tool_calls": 18, "errors_encountered": 1, "output_chars": 12450}
GONE = object()  # the file is not written


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(base)
    for k, v in changes.items():
        if v is GONE:
            out.pop(k, None)
        else:
            out[k] = v
    return out


# (name, grading.json, timing.json, outputs/metrics.json, metrics.json beside grading.json):
# dicts are written as JSON, strings as they are, GONE not at all.
CASES: list[tuple[str, Any, Any, Any, Any]] = [
    ("spec", GRADING, TIMING, METRICS, GONE),
    ("no-timing", GRADING, GONE, METRICS, GONE),
    ("no-metrics", GRADING, TIMING, GONE, GONE),
    ("metrics-beside", GRADING, TIMING, GONE, {"total_tool_calls": 3, "skill_triggered": True}),
    ("both-metrics", GRADING, TIMING, METRICS, {"total_tool_calls": 3}),
    ("empty-timing", GRADING, {}, METRICS, GONE),
    ("tokens-from-usage", GRADING, _with(TIMING, total_tokens=GONE),
     {"usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25}}, GONE),
    ("duration-from-ms", GRADING, _with(TIMING, total_duration_seconds=GONE), METRICS, GONE),
    ("duration-from-grading", GRADING, {"total_tokens": 7}, METRICS, GONE),
    ("triggered-false", GRADING, TIMING, {"skill_triggered": False, "status": "ok"}, GONE),
    ("all-passed", _with(GRADING, expectations=[dict(e, passed=True) for e in EXPS],
                         summary={"passed": 2, "total": 2}), TIMING, METRICS, GONE),
    ("no-evidence", _with(GRADING, expectations=[{"text": "t", "passed": True}], summary=GONE), TIMING,
     METRICS, GONE),
    ("no-expectations", _with(GRADING, expectations=[], summary={"passed": 0, "total": 0}), TIMING, METRICS,
     GONE),
    ("summary-without-total", _with(GRADING, summary={"passed": 1, "failed": 1}), TIMING, METRICS, GONE),
    ("bom", "\ufeff" + json.dumps(GRADING), TIMING, METRICS, GONE),
    ("big-but-64-bit", GRADING, '{"total_tokens": 18446744073709551615, "duration_ms": 999999999999}',
     '{"total_tool_calls": 9223372036854775807, "usage": {"cost_usd": 1e18}}', GONE),
    ("long-digits-in-text", _with(GRADING, expectations=[dict(EXPS[0], evidence="id 12345678901234567890123")]),
     TIMING, METRICS, GONE),
    ("verdict-coerced", _with(GRADING, expectations=[dict(EXPS[0], passed="yes")]), TIMING, METRICS, GONE),
    ("status-not-string", GRADING, TIMING, {"status": 5}, GONE),
    ("lone-surrogate", '{"expectations": [{"text": "t", "passed": true, "evidence": "\\ud800"}]}', TIMING,
     METRICS, GONE),
    # the general path says something, or the run is not a plain completed, graded one
    # integers beyond 64 bits (orjson would read floats) where a figure is taken: json keeps them exact
    ("huge-tokens", GRADING, '{"total_tokens": 18446744073709551616, "total_duration_seconds": 2}', METRICS,
     GONE),
    ("huge-duration-ms", GRADING, '{"duration_ms": 123456789012345678901234567}', METRICS, GONE),
    ("huge-negative-seconds", GRADING, '{"total_duration_seconds": -123456789012345678901234567}', METRICS, GONE),
    ("huge-executor-seconds", GRADING, '{"executor_duration_seconds": 123456789012345678901234567}', METRICS,
     GONE),
    ("huge-tool-calls", GRADING, TIMING, '{"total_tool_calls": 123456789012345678901234567}', GONE),
    ("huge-errors", GRADING, TIMING, '{"errors_encountered": 123456789012345678901234567}', GONE),
    ("huge-usage", GRADING, {}, '{"usage": {"input_tokens": 123456789012345678901234567}}', GONE),
    ("huge-cost", GRADING, TIMING, '{"usage": {"cost_usd": 123456789012345678901234567}}', GONE),
    ("huge-grading-tool-calls", json.dumps(GRADING).replace('"total_tool_calls": 15',
                                                            '"total_tool_calls": 123456789012345678901234567'),
     TIMING, {}, GONE),
    ("huge-grading-seconds", json.dumps(_with(GRADING, timing={"executor_duration_seconds": 1})).replace(
        '"executor_duration_seconds": 1', '"executor_duration_seconds": 123456789012345678901234567'), {}, {}, GONE),
    ("nan-duration", GRADING, '{"total_duration_seconds": NaN}', METRICS, GONE),
    ("string-tokens", GRADING, _with(TIMING, total_tokens="many"), METRICS, GONE),
    ("negative-tokens", GRADING, _with(TIMING, total_tokens=-1), METRICS, GONE),
    ("timing-not-object", GRADING, "[1, 2]", METRICS, GONE),
    ("timing-broken", GRADING, "{not json", METRICS, GONE),
    ("metrics-broken", GRADING, TIMING, "{", {"total_tool_calls": 3}),
    ("metrics-not-object", GRADING, TIMING, "3", GONE),
    ("grading-broken", '{"expectations": [', TIMING, METRICS, GONE),
    ("grading-missing", GONE, TIMING, METRICS, GONE),
    ("grading-not-object", "[]", TIMING, METRICS, GONE),
    ("summary-too-many-passed", _with(GRADING, summary={"passed": 3, "total": 2}), TIMING, METRICS, GONE),
    ("verdict-not-boolean", _with(GRADING, expectations=[dict(EXPS[0], passed="maybe")]), TIMING, METRICS, GONE),
    ("ungraded", _with(GRADING, expectations=[dict(EXPS[0], passed=None), EXPS[1]]), TIMING, METRICS, GONE),
    ("extra-fields", _with(GRADING, expectations=[dict(EXPS[0], votes=[1, 0])]), TIMING, METRICS, GONE),
    ("errored", GRADING, TIMING, {"status": "error", "error": "boom"}, GONE),
    ("timed-out", GRADING, TIMING, {"status": "timeout"}, GONE),
]


def _write(path: Path, content: Any) -> None:
    if content is GONE:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")


def make_run(run: Path, case: tuple[str, Any, Any, Any, Any]) -> Path:
    _, grading, timing, metrics, beside = case
    run.mkdir(parents=True)
    _write(run / "grading.json", grading)
    _write(run / "timing.json", timing)
    _write(run / "outputs" / "metrics.json", metrics)
    _write(run / "metrics.json", beside)
    return run


TAKEN = {c[0] for c in CASES[:next(i for i, c in enumerate(CASES) if c[0] == "huge-tokens")]}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_plain_path_gives_what_the_general_path_gives_or_hands_over(tmp_path: Path, case: tuple) -> None:
    run = make_run(tmp_path / "with_skill" / "run-3", case)
    record, issues = read.read_trial(str(run), 4, "four", "with_skill", 3)
    fast = read_plain(run)
    assert (fast is not None) == (case[0] in TAKEN)
    if record is None or issues or not record.completed or record.ungraded:
        assert fast is None, "a run the general path has something to say about, or not plain, must be handed over"
    if fast is None:
        return
    assert record is not None
    facts, f = fast
    assert (facts.passed, facts.total, f.tokens, f.duration, f.tool_calls, f.errors, f.triggered, f.cost_usd) == (
        record.passed_count, record.total_count, record.tokens, record.duration_seconds, record.tool_calls,
        record.errors, record.skill_triggered, record.cost_usd)
    assert facts.expectations == record.expectations and facts.notes == record.notes
    assert graded_run_json(4, "four", "with_skill", 3, facts.passed, facts.total, f.duration, f.tokens,
                           f.tool_calls, f.errors, facts.expectations, facts.notes) == run_json(record)
    by_record, by_facts = Arm(), Arm()
    by_record.add(record)
    _add_graded(by_facts, facts.passed, facts.total, f)
    assert repr(by_facts) == repr(by_record)  # repr: NaN rates compare unequal to themselves


def test_huge_integers_are_handed_over_and_read_exactly(tmp_path: Path) -> None:
    """orjson reads an integer beyond 64 bits as a float: the plain path hands such a run over,
    and read_trial (json) keeps the exact integer."""
    run = make_run(tmp_path / "run-1", ("huge", GRADING, '{"total_tokens": 18446744073709551616}', METRICS, GONE))
    assert read_plain(run) is None
    record, issues = read.read_trial(str(run), 1, "e", "with_skill", 1)
    assert record is not None and issues == [] and record.tokens == 18446744073709551616
    assert type(record.tokens) is int


def iteration(root: Path) -> Path:
    """Every case as an eval with the skill and a baseline arm, the case's run among plain ones."""
    it = root / "ws" / "iteration-1"
    for i, case in enumerate(CASES):
        ev = it / f"eval-{i}"
        for config in ("with_skill", "without_skill"):
            for k in (1, 2):
                _write(ev / config / f"run-{k}" / "grading.json", GRADING)
                _write(ev / config / f"run-{k}" / "timing.json", _with(TIMING, total_tokens=1000 * i + k))
        make_run(ev / "with_skill" / "run-3", case)
    return it


def test_aggregate_writes_the_same_files_with_and_without_the_plain_path(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input handed over: every skipped run and warning the general path gives (file and
    field named), and benchmark.json / benchmark.md byte for byte."""
    it = iteration(tmp_path)
    fast = aggregate_iteration(it, output=tmp_path / "fast" / "benchmark.json", timestamp="T")
    import skillassay.workflows.iteration_reader as reader

    monkeypatch.setattr(reader, "read_plain_run", lambda dir_fd, name: None)
    general = aggregate_iteration(it, output=tmp_path / "general" / "benchmark.json", timestamp="T")
    assert fast.skipped == general.skipped and fast.warnings == general.warnings
    broken = next(i for i, c in enumerate(CASES) if c[0] == "grading-broken")
    assert [i.message for i in fast.skipped if i.path == str(it / f"eval-{broken}" / "with_skill" / "run-3" /
                                                            "grading.json")] == ["invalid JSON at line 1 column 19: Expecting value"]
    assert any("timing.json: $.total_tokens: unexpected value 'many'" in w for w in fast.warnings), fast.warnings
    for name in ("benchmark.json", "benchmark.md"):
        assert (tmp_path / "fast" / name).read_bytes() == (tmp_path / "general" / name).read_bytes(), name
