"""Reading graded runs from a workspace into TrialRecords."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from skillassay.grade import trial_passed
from skillassay.jsonio import json_path
from skillassay.models import ExpectationResult, Grading, Metrics, Timing
from skillassay.records import TrialRecord

_RUN = re.compile(r"run-(\d+)")


def _read(path: Path) -> Any | None:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def load_grading(run_dir: Path) -> Grading | None:
    """The run's grading.json if present and valid, else None (the trial is not done)."""
    data = _read(run_dir / "grading.json")
    if data is None:
        return None
    try:
        return Grading.model_validate(data)
    except ValueError:
        return None


def load_metrics(run_dir: Path) -> Metrics:
    for p in (run_dir / "outputs" / "metrics.json", run_dir / "metrics.json"):
        data = _read(p)
        if isinstance(data, dict):
            try:
                return Metrics.model_validate(data)
            except ValueError:
                break
    return Metrics()


def load_timing(run_dir: Path) -> Timing:
    data = _read(run_dir / "timing.json")
    try:
        return Timing.model_validate(data) if isinstance(data, dict) else Timing()
    except ValueError:
        return Timing()


def duration_of(t: Timing) -> float | None:
    """The run's duration in timing.json's own precedence: `total_duration_seconds` (what
    skill-creator derives from the task notification's `duration_ms`, and what its viewer
    shows), then `duration_ms`, then `executor_duration_seconds` (start/end stamps, which the
    spec's own example shows disagreeing with the notification). Our executors write all three
    from one clock, so for them the order changes nothing."""
    return _duration(t.total_duration_seconds, t.duration_ms, t.executor_duration_seconds)


def _duration(total_s: float | None, ms: float | None, executor_s: float | None) -> float | None:
    if total_s is not None:
        return float(total_s)
    if ms is not None:
        return ms / 1000
    return float(executor_s) if executor_s is not None else None


def tokens_of(t: Timing, m: Metrics) -> int | None:
    if t.total_tokens is not None:
        return int(t.total_tokens)
    usage = (m.model_extra or {}).get("usage") or {}
    ins, outs = usage.get("input_tokens"), usage.get("output_tokens")
    return None if ins is None and outs is None else (ins or 0) + (outs or 0)


def make_record(eval_id: int | str, eval_name: str, configuration: str, run_number: int,
                grading: Grading, metrics: Metrics, timing: Timing, run_dir: Path | None) -> TrialRecord:
    status = metrics.status or "ok"
    notes: list[str] = []
    if grading.user_notes_summary:
        u = grading.user_notes_summary
        notes = [*u.uncertainties, *u.needs_review, *u.workarounds]
    usage = (metrics.model_extra or {}).get("usage") or {}
    return TrialRecord(
        eval_id=eval_id, eval_name=eval_name, configuration=configuration, run_number=run_number,
        status=status,
        passed=trial_passed(grading) if status == "ok" else None,
        passed_count=grading.summary.passed, total_count=grading.summary.total,
        tokens=tokens_of(timing, metrics), duration_seconds=duration_of(timing),
        tool_calls=metrics.total_tool_calls, skill_triggered=metrics.skill_triggered,
        cost_usd=usage.get("cost_usd"),
        expectations=tuple(grading.expectations), notes=tuple(notes), run_dir=run_dir,
        errors=metrics.errors_encountered, error=metrics.error,
    )


def read_run(run_dir: Path, eval_id: int | str, eval_name: str, configuration: str) -> TrialRecord | None:
    grading = load_grading(run_dir)
    if grading is None:
        return None
    m = _RUN.fullmatch(run_dir.name)
    return make_record(eval_id, eval_name, configuration, int(m.group(1)) if m else 1, grading,
                       load_metrics(run_dir), load_timing(run_dir), run_dir)


# --- Lenient, fast reading of any skill-creator workspace (`skillassay aggregate`) ---------------
#
# Other tools' grading.json may lack fields our own model requires (summary.failed,
# summary.pass_rate, evidence, even the whole summary), and an iteration can hold 200,000 runs.
# So this path reads bytes and checks plain dicts instead of validating full pydantic models,
# keeps the checks that change a number (counts are non-negative integers, passed <= total,
# verdicts are booleans), and never substitutes one quantity for another: a token count that
# is not recorded stays None.

_EXPECTATIONS: TypeAdapter[list[ExpectationResult]] = TypeAdapter(list[ExpectationResult])
_BOM = b"\xef\xbb\xbf"
MISSING = object()


@dataclass(frozen=True)
class RunIssue:
    """A file that could not be used (or only partly), by path, and why."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def load_json_file(path: str) -> Any:
    """Parsed JSON, or MISSING when there is no such file. Raises OSError / ValueError (with
    json's line and column) for anything else, so the caller can say what was wrong."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return MISSING
    if raw.startswith(_BOM):
        raw = raw[3:]
    return json.loads(raw)


def describe_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, expected a JSON file"
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or type(exc).__name__}"
    return str(exc)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


@dataclass(frozen=True)
class GradingFacts:
    """What aggregation needs from a grading.json, whoever wrote it."""

    passed: int
    total: int
    expectations: tuple[ExpectationResult, ...]
    notes: tuple[str, ...]
    tool_calls: int | None
    errors: int | None
    executor_seconds: float | None


def grading_facts(data: Any) -> GradingFacts | str:
    """The counts, verdicts and notes of a grading.json, or why it cannot be used (a JSON path
    and what was expected). A missing `summary` is counted from `expectations`; a summary
    without `total` uses passed + failed."""
    if not isinstance(data, dict):
        return "expected a JSON object"
    exps, summary = data.get("expectations"), data.get("summary")
    if exps is None and summary is None:
        return "$.expectations and $.summary: neither is present, so there is nothing to count"
    if exps is None:
        exps = []
    elif not isinstance(exps, list):
        return "$.expectations: expected an array"
    try:
        results = tuple(_EXPECTATIONS.validate_python(exps)) if exps else ()
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        return f"{json_path(('expectations', *err['loc']))}: {err['msg']}"
    counted = (sum(1 for r in results if r.passed is True), len(results))
    counts = summary_counts(summary, counted)
    if isinstance(counts, str):
        return counts
    metrics = data.get("execution_metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    timing = data.get("timing")
    executor_s = timing.get("executor_duration_seconds") if isinstance(timing, dict) else None
    return GradingFacts(
        passed=counts[0], total=counts[1], expectations=results, notes=user_notes(data.get("user_notes_summary")),
        tool_calls=_int_or_none(metrics.get("total_tool_calls")),
        errors=_int_or_none(metrics.get("errors_encountered")),
        executor_seconds=float(executor_s) if _is_num(executor_s) else None,
    )


def summary_counts(summary: Any, counted: tuple[int, int]) -> tuple[int, int] | str:
    if summary is None:
        return counted
    if not isinstance(summary, dict):
        return "$.summary: expected an object"
    passed = summary.get("passed", counted[0])
    if not _is_int(passed) or passed < 0:
        return "$.summary.passed: expected a non-negative integer"
    total = summary.get("total")
    if total is None:
        failed = summary.get("failed")
        if failed is not None and (not _is_int(failed) or failed < 0):
            return "$.summary.failed: expected a non-negative integer"
        total = passed + failed if failed is not None else max(counted[1], passed)
    if not _is_int(total) or total < 0:
        return "$.summary.total: expected a non-negative integer"
    if passed > total:
        return f"$.summary: passed ({passed}) is greater than total ({total})"
    return passed, total


def user_notes(u: Any) -> tuple[str, ...]:
    if not isinstance(u, dict):
        return ()
    return tuple(n for key in ("uncertainties", "needs_review", "workarounds")
                 if isinstance(u.get(key), list) for n in u[key] if isinstance(n, str))


def _int_or_none(v: Any) -> int | None:
    return v if _is_int(v) else None


def _optional_json(path: str, issues: list[RunIssue]) -> dict | None:
    """A side file (timing, metrics) that is allowed to be absent; a broken one is reported
    and treated as absent, so its figures are missing rather than invented."""
    try:
        data = load_json_file(path)
    except (OSError, ValueError) as exc:
        issues.append(RunIssue(path, describe_error(exc) + "; its figures are reported as missing"))
        return None
    if data is MISSING:
        return None
    if not isinstance(data, dict):
        issues.append(RunIssue(path, "expected a JSON object; its figures are reported as missing"))
        return None
    return data


def _typed(d: dict, key: str, ok: Callable[[Any], bool], path: str, issues: list[RunIssue]) -> Any:
    v = d.get(key)
    if v is None or ok(v):
        return v
    issues.append(RunIssue(path, f"$.{key}: unexpected value {v!r}; reported as missing"))
    return None


def _metrics_file(run_dir: str, issues: list[RunIssue]) -> tuple[dict | None, str]:
    """metrics.json at outputs/metrics.json (spec) or beside grading.json."""
    for path in (os.path.join(run_dir, "outputs", "metrics.json"), os.path.join(run_dir, "metrics.json")):
        n = len(issues)
        data = _optional_json(path, issues)
        if data is not None or len(issues) > n:
            return data, path
    return None, ""


def _tokens(timing: dict | None, timing_path: str, usage: Any, metrics_path: str,
            issues: list[RunIssue]) -> int | None:
    if timing is not None:
        t = _typed(timing, "total_tokens", lambda v: _is_int(v) and v >= 0, timing_path, issues)
        if t is not None:
            return t
    if not isinstance(usage, dict):
        return None
    if _is_int(usage.get("total_tokens")):
        return usage["total_tokens"]
    ins, outs = _int_or_none(usage.get("input_tokens")), _int_or_none(usage.get("output_tokens"))
    return None if ins is None and outs is None else (ins or 0) + (outs or 0)


def read_trial(run_dir: str, eval_id: int | str, eval_name: str, configuration: str,
               run_number: int) -> tuple[TrialRecord | None, list[RunIssue]]:
    """One run folder -> a TrialRecord, or None with the reason when its grading.json is
    missing or unusable. Problems with timing/metrics are returned beside a record."""
    issues: list[RunIssue] = []
    grading_path = os.path.join(run_dir, "grading.json")
    try:
        data = load_json_file(grading_path)
    except (OSError, ValueError) as exc:
        return None, [RunIssue(grading_path, describe_error(exc))]
    if data is MISSING:
        return None, [RunIssue(grading_path, "missing (run not graded)")]
    facts = grading_facts(data)
    if isinstance(facts, str):
        return None, [RunIssue(grading_path, facts)]

    timing_path = os.path.join(run_dir, "timing.json")
    timing = _optional_json(timing_path, issues)
    metrics, metrics_path = _metrics_file(run_dir, issues)
    m = metrics or {}
    duration = None
    if timing is not None:
        duration = _duration(*(_typed(timing, k, _is_num, timing_path, issues) for k in
                               ("total_duration_seconds", "duration_ms", "executor_duration_seconds")))
    if duration is None:
        duration = facts.executor_seconds  # grading.json's copy of the same executor figure
    status = m.get("status")
    status = status if isinstance(status, str) and status else "ok"
    usage = m.get("usage")
    tool_calls = _int_or_none(m.get("total_tool_calls"))
    errors = _int_or_none(m.get("errors_encountered"))
    cost = usage.get("cost_usd") if isinstance(usage, dict) else None
    triggered = m.get("skill_triggered")
    error = m.get("error")
    return TrialRecord(
        eval_id=eval_id, eval_name=eval_name, configuration=configuration, run_number=run_number,
        status=status,
        passed=(facts.total > 0 and facts.passed == facts.total) if status == "ok" else None,
        passed_count=facts.passed, total_count=facts.total,
        tokens=_tokens(timing, timing_path, usage, metrics_path, issues),
        duration_seconds=duration,
        tool_calls=tool_calls if tool_calls is not None else facts.tool_calls,
        skill_triggered=triggered if isinstance(triggered, bool) else None,
        cost_usd=float(cost) if _is_num(cost) else None,
        expectations=facts.expectations, notes=facts.notes, run_dir=Path(run_dir),
        errors=errors if errors is not None else (facts.errors or 0),
        error=error if isinstance(error, str) else None,
    ), issues
