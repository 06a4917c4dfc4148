"""Reading graded runs from a workspace into TrialRecords: one reader (read_trial) for every
command, whoever wrote the files; load_* give the pydantic models where a command needs them."""

from __future__ import annotations

import math
import os
import reprlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

import orjson
from pydantic import TypeAdapter, ValidationError

from skillassay.errors import describe_error
from skillassay.models import ExpectationResult, Grading, Metrics, Timing
from skillassay.models.runfiles import MAX_SECONDS
from skillassay.store.jsonio import json_path, parse_json_bytes
from skillassay.store.records import Outcome, TrialRecord, compact, trial_verdict


def _read(path: Path) -> Any | None:
    try:
        return parse_json_bytes(path.read_bytes(), allow_surrogates=True)
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
    s = grading.summary
    return TrialRecord(
        eval_id=eval_id, eval_name=eval_name, configuration=configuration, run_number=run_number,
        status=status,
        passed=trial_verdict(status, s.passed, s.total, grading.expectations),
        passed_count=s.passed, total_count=s.total,
        tokens=tokens_of(timing, metrics), duration_seconds=duration_of(timing),
        tool_calls=metrics.total_tool_calls, skill_triggered=metrics.skill_triggered,
        cost_usd=usage.get("cost_usd"),
        expectations=compact(grading.expectations), notes=tuple(notes), run_dir=run_dir,
        errors=metrics.errors_encountered, error=metrics.error,
    )


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
_SEP = os.sep
MISSING = object()


@dataclass(frozen=True)
class RunIssue:
    """A file that could not be used (or only partly), by path, and why."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
_CHUNK = 1 << 16
_O_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_HAS_DIR_FD = os.open in os.supports_dir_fd


def open_run_dir(run_dir: str) -> int | None:
    """A descriptor of the run folder, to open its files relative to it (openat): resolving a
    run's 8-component paths three times cost ~9 us of a run's ~90 on the benchmark VM, one
    open of the folder ~3. None where the platform has no dir_fd or the folder cannot be
    opened: the files are then opened by path, and say for themselves what is wrong."""
    if not _HAS_DIR_FD:
        return None
    try:
        return os.open(run_dir, _DIR_FLAGS)
    except OSError:
        return None


def read_small_file(path: str, dir_fd: int | None = None, name: str | None = None) -> bytes:
    """os.open/os.read: about 2.5 us less than open().read() per file (no buffered file object),
    which is 7 us of a run's budget; files over 64 KiB are read in further chunks. With
    `dir_fd`, `name` (relative to it) is opened instead of `path`."""
    fd = os.open(path, _O_FLAGS) if dir_fd is None or name is None else os.open(name, _O_FLAGS, dir_fd=dir_fd)
    try:
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return data


def load_json_file(path: str, dir_fd: int | None = None, name: str | None = None) -> Any:
    """Parsed JSON, or MISSING when there is no such file. Raises OSError / ValueError (with
    json's line and column) for anything else, so the caller can say what was wrong."""
    try:
        raw = read_small_file(path, dir_fd, name)
    except FileNotFoundError:
        return MISSING
    if raw.startswith(_BOM):
        raw = raw[3:]
    # orjson is ~3x faster than json on these small files, but reads integers beyond 64 bits as
    # floats: a file with a run of 19+ digits goes to json (the check costs ~1 us a file).
    if _LONG_DIGITS not in raw.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # the guarded parse decides what orjson refuses (NaN, depth) and says why
    return parse_json_bytes(raw, allow_surrogates=True)


def _is_int(v: Any) -> bool:
    return type(v) is int  # JSON gives exact types; excludes bool, which subclasses int


def _is_num(v: Any) -> TypeGuard[int | float]:
    """A finite number: json reads NaN and Infinity, and no duration or cost is either."""
    return type(v) is int or (type(v) is float and math.isfinite(v))


class GradingFacts(NamedTuple):
    """What aggregation needs from a grading.json, whoever wrote it. (A NamedTuple: built once
    per run, so construction cost matters.)"""

    passed: int
    total: int
    expectations: tuple[ExpectationResult | Outcome, ...]
    notes: tuple[str, ...]
    tool_calls: int | None
    errors: int | None
    executor_seconds: float | None


# A NamedTuple's __new__ is a Python function around tuple.__new__: calling the latter directly
# builds the same object without a Python frame (three per expectation and run at 200,000 runs).
_new_tuple = tuple.__new__


def _plain_outcomes(exps: list) -> tuple[Outcome, ...] | None:
    """The common case without pydantic: every expectation an object with exactly a string
    `text`, a boolean or null `passed` and optionally a string `evidence` gives the same Outcomes
    as validating it would. None when any is otherwise (validation then says what is wrong, or
    keeps extra fields)."""
    out = []
    for e in exps:
        if type(e) is not dict:
            return None
        text, passed, evidence = e.get("text"), e.get("passed", MISSING), e.get("evidence", "")
        if (type(text) is not str or not (passed is None or passed is True or passed is False)
                or type(evidence) is not str or len(e) != (3 if "evidence" in e else 2)):
            return None
        out.append(_new_tuple(Outcome, (sys.intern(text), passed, evidence)))
    return tuple(out)


def grading_facts(data: Any) -> GradingFacts | str:
    """The counts, verdicts and notes of a grading.json, or why it cannot be used (a JSON path
    and what was expected). A missing `summary` is counted from `expectations`; a summary
    without `total` uses passed + failed."""
    if type(data) is not dict:
        return "expected a JSON object"
    exps, summary = data.get("expectations"), data.get("summary")
    if exps is None and summary is None:
        return "$.expectations and $.summary: neither is present, so there is nothing to count"
    if exps is None:
        exps = []
    elif type(exps) is not list:
        return "$.expectations: expected an array"
    results = _plain_outcomes(exps)
    if results is None:
        for e in exps:  # the same statements recur in every run: share one string (memory at 200k runs)
            if type(e) is dict and type(text := e.get("text")) is str:
                e["text"] = sys.intern(text)
        try:
            results = compact(_EXPECTATIONS.validate_python(exps)) if exps else ()
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            return f"{json_path(('expectations', *err['loc']))}: {err['msg']}"
    counts = summary_counts(summary, results)
    if isinstance(counts, str):
        return counts
    metrics = data.get("execution_metrics")
    timing = data.get("timing")
    executor_s = timing.get("executor_duration_seconds") if type(timing) is dict else None
    notes = data.get("user_notes_summary")
    return GradingFacts(
        counts[0], counts[1], results, user_notes(notes) if notes else (),
        _int_or_none(metrics.get("total_tool_calls")) if type(metrics) is dict else None,
        _int_or_none(metrics.get("errors_encountered")) if type(metrics) is dict else None,
        float(executor_s) if _is_num(executor_s) else None,
    )


def summary_counts(summary: Any, results: tuple[ExpectationResult | Outcome, ...]) -> tuple[int, int] | str:
    """(passed, total) from the summary, filling what it lacks from the expectations."""
    if summary is None:
        return sum(1 for r in results if r.passed is True), len(results)
    if type(summary) is not dict:
        return "$.summary: expected an object"
    passed = summary.get("passed")
    if passed is None:
        passed = sum(1 for r in results if r.passed is True)
    elif not _is_int(passed) or passed < 0:
        return "$.summary.passed: expected a non-negative integer"
    total = summary.get("total")
    if total is None:
        failed = summary.get("failed")
        if failed is not None and (not _is_int(failed) or failed < 0):
            return "$.summary.failed: expected a non-negative integer"
        total = passed + failed if failed is not None else max(len(results), passed)
    elif not _is_int(total) or total < 0:
        return "$.summary.total: expected a non-negative integer"
    if passed > total:
        return f"$.summary: passed ({passed}) is greater than total ({total})"
    return passed, total


def user_notes(u: Any) -> tuple[str, ...]:
    """skill-creator's viewer shows uncertainties, needs_review and workarounds as run notes."""
    if type(u) is not dict:
        return ()
    return tuple(n for key in ("uncertainties", "needs_review", "workarounds")
                 if type(u.get(key)) is list for n in u[key] if type(n) is str)


def _int_or_none(v: Any) -> int | None:
    return v if type(v) is int else None


def _side_file(path: str, issues: list[RunIssue], dir_fd: int | None = None,
               name: str | None = None) -> dict | None:
    """A file that may be absent (timing, metrics); a broken one is reported and treated as
    absent, so its figures are missing rather than invented."""
    try:
        data = load_json_file(path, dir_fd, name)
    except (OSError, ValueError) as exc:
        issues.append(RunIssue(path, describe_error(exc) + "; its figures are reported as missing"))
        return None
    if data is MISSING:
        return None
    if type(data) is not dict:
        issues.append(RunIssue(path, "expected a JSON object; its figures are reported as missing"))
        return None
    return data


def _metrics_file(run_dir: str, issues: list[RunIssue], dir_fd: int | None = None) -> dict:
    """metrics.json at outputs/metrics.json (spec) or beside grading.json ({} when neither)."""
    for name in (f"outputs{_SEP}metrics.json", "metrics.json"):
        n = len(issues)
        data = _side_file(f"{run_dir}{_SEP}{name}", issues, dir_fd, name)
        if data is not None:
            return data
        if len(issues) > n:
            break
    return {}


def _checked(d: dict, key: str, ok: Callable[[Any], bool], path: str, issues: list[RunIssue]) -> Any:
    """d[key] if it has the right type; a wrong type is reported and read as missing."""
    v = d.get(key)
    if v is None or ok(v):
        return v
    issues.append(RunIssue(path, f"$.{key}: unexpected value {reprlib.repr(v)}; reported as missing"))
    return None


def _within(top: float) -> Callable[[Any], bool]:
    return lambda v: _is_num(v) and abs(v) <= top


# timing.json's durations, in _duration's order of precedence, and the largest magnitude each may
# have: past it no trial's (5e268 s overflowed a mean). Both read paths check against this table.
DURATION_LIMITS = {"total_duration_seconds": MAX_SECONDS, "duration_ms": MAX_SECONDS * 1000,
                   "executor_duration_seconds": MAX_SECONDS}
_TOTAL_S, _MS, _EXECUTOR_S = DURATION_LIMITS  # the keys, for the plain path's inline checks
_TOP_TOTAL_S, _TOP_MS, _TOP_EXECUTOR_S = DURATION_LIMITS.values()


def _timing_figures(timing: dict, path: str, issues: list[RunIssue]) -> tuple[int | None, float | None]:
    """(total_tokens, duration) from timing.json."""
    tokens = _checked(timing, "total_tokens", lambda v: _is_int(v) and v >= 0, path, issues)
    duration = _duration(*(_checked(timing, k, _within(top), path, issues) for k, top in DURATION_LIMITS.items()))
    return tokens, duration


def _usage_tokens(usage: Any) -> int | None:
    """metrics.json `usage` (ours): total_tokens, else input + output as the executors count."""
    if type(usage) is not dict:
        return None
    if _is_int(usage.get("total_tokens")):
        return usage["total_tokens"]
    ins, outs = _int_or_none(usage.get("input_tokens")), _int_or_none(usage.get("output_tokens"))
    return None if ins is None and outs is None else (ins or 0) + (outs or 0)


def read_trial(run_dir: str, eval_id: int | str, eval_name: str, configuration: str,
               run_number: int) -> tuple[TrialRecord | None, list[RunIssue]]:
    """One run folder -> a TrialRecord, or None with the reason when its grading.json is
    missing or unusable. Problems with timing/metrics are returned beside a record."""
    dir_fd = open_run_dir(run_dir)
    try:
        return _read_trial(run_dir, dir_fd, eval_id, eval_name, configuration, run_number)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


def _read_trial(run_dir: str, dir_fd: int | None, eval_id: int | str, eval_name: str, configuration: str,
                run_number: int) -> tuple[TrialRecord | None, list[RunIssue]]:
    grading_path = f"{run_dir}{_SEP}grading.json"
    try:
        data = load_json_file(grading_path, dir_fd, "grading.json")
    except (OSError, ValueError) as exc:
        return None, [RunIssue(grading_path, describe_error(exc))]
    if data is MISSING:
        return None, [RunIssue(grading_path, "missing (run not graded)")]
    facts = grading_facts(data)
    if isinstance(facts, str):  # (isinstance: mypy narrows on it; GradingFacts is no str)
        return None, [RunIssue(grading_path, facts)]

    issues: list[RunIssue] = []
    timing_path = f"{run_dir}{_SEP}timing.json"
    timing = _side_file(timing_path, issues, dir_fd, "timing.json")
    tokens, duration = _timing_figures(timing, timing_path, issues) if timing else (None, None)
    m = _metrics_file(run_dir, issues, dir_fd)
    return _record(eval_id, eval_name, configuration, run_number, facts, tokens, duration, m), issues


class Figures(NamedTuple):
    """A run's figures from timing.json's and metrics.json's values, as every reader takes them."""

    status: str
    tokens: int | None
    duration: float | None
    tool_calls: int | None
    errors: int
    triggered: bool | None
    cost_usd: float | None
    error: str | None


def _figures(facts: GradingFacts, tokens: int | None, duration: float | None, m: dict) -> Figures:
    """Both read paths end here (read_trial's and read_plain_run's), so they cannot disagree on
    what a run's files mean: metrics.json's figures first, grading.json's copies after."""
    if duration is None:
        duration = facts.executor_seconds  # grading.json's copy of the same executor figure
    usage = m.get("usage")
    if tokens is None:
        tokens = _usage_tokens(usage)
    status = m.get("status") or "ok"
    tool_calls, errors = _int_or_none(m.get("total_tool_calls")), _int_or_none(m.get("errors_encountered"))
    cost = usage.get("cost_usd") if type(usage) is dict else None
    triggered, error = m.get("skill_triggered"), m.get("error")
    return Figures(
        status if type(status) is str else "ok", tokens, duration,
        tool_calls if tool_calls is not None else facts.tool_calls,
        errors if errors is not None else (facts.errors or 0),
        triggered if type(triggered) is bool else None,
        float(cost) if _is_num(cost) else None,
        error if type(error) is str else None,
    )


def _record(eval_id: int | str, eval_name: str, configuration: str, run_number: int, facts: GradingFacts,
            tokens: int | None, duration: float | None, m: dict) -> TrialRecord:
    f = _figures(facts, tokens, duration, m)
    return TrialRecord(
        eval_id=eval_id, eval_name=eval_name, configuration=configuration, run_number=run_number,
        status=f.status,
        passed=trial_verdict(f.status, facts.passed, facts.total, facts.expectations),
        passed_count=facts.passed, total_count=facts.total, tokens=f.tokens, duration_seconds=f.duration,
        tool_calls=f.tool_calls, skill_triggered=f.triggered, cost_usd=f.cost_usd,
        expectations=facts.expectations, notes=facts.notes, errors=f.errors, error=f.error,
    )


# --- The common case, without a word to say (`skillassay aggregate`'s per-run path) ---------------
#
# At 20,000 runs every microsecond a run costs is 20 ms of the command, and skill-creator's own
# script (which reads one file per run) spends about 120 us a run in all. read_plain_run reads a
# run relative to its parent folder's descriptor (one open per configuration folder instead of
# one per run) and gives the facts read_trial would (grading_facts and _figures are shared); the
# moment anything would need a word in the output (a file that cannot be read or parsed, a wrong
# type, a figure read as missing) or the run is not a plain completed, graded one, it returns
# None and the caller reads that run with read_trial, which names the file and the field. So the
# errors and warnings are read_trial's by construction (tests/workflows/test_iteration_reader.py compares both
# paths over many shapes of files).

_METRICS_NAMES = (f"outputs{_SEP}metrics.json", "metrics.json")


def _load_at(dir_fd: int, name: str) -> Any:
    """load_json_file(name relative to dir_fd) without building the path an error would need."""
    try:
        raw = read_small_file(name, dir_fd, name)
    except FileNotFoundError:
        return MISSING
    if raw.startswith(_BOM):
        raw = raw[3:]
    # No digit-run scan here (bytes.translate was 7% of a run's instructions): orjson's one
    # difference from json on what it accepts, an integer beyond 64 bits read as a float, is
    # caught where a figure is used (_huge), and the run then goes to read_trial, which scans.
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json_bytes(raw, allow_surrogates=True)


_HUGE = 2.0**63  # orjson reads integers in [-2**63, 2**64) as ints, any beyond as floats


def _huge(v: Any) -> bool:
    """A float that may be an integer orjson could not hold (json keeps those exact), or NaN /
    infinity: read_trial decides what such a figure means."""
    return type(v) is float and not -_HUGE <= v < _HUGE


def _huge_figures(grading: dict, m: dict) -> bool:
    """Whether a number the figures take from grading.json or metrics.json may be _huge (timing.json's
    are checked where they are read). Counts must be ints: any float among them hands the run over
    (read_trial reads 3.0 tool calls as missing, as the plain path would, only slower)."""
    em, gt, usage = grading.get("execution_metrics"), grading.get("timing"), m.get("usage")
    if type(m.get("total_tool_calls")) is float or type(m.get("errors_encountered")) is float:
        return True
    if type(em) is dict and (type(em.get("total_tool_calls")) is float
                             or type(em.get("errors_encountered")) is float):
        return True
    if type(gt) is dict and _huge(gt.get("executor_duration_seconds")):
        return True
    return type(usage) is dict and (type(usage.get("total_tokens")) is float or type(usage.get("input_tokens")) is float
                                    or type(usage.get("output_tokens")) is float or _huge(usage.get("cost_usd")))


class PlainRun(NamedTuple):
    """A completed run whose every expectation has a verdict and is plain (an Outcome)."""

    facts: GradingFacts
    figures: Figures


def read_plain_run(dir_fd: int, name: str) -> PlainRun | None:
    """The facts read_trial would give the run folder `name` inside the folder open as `dir_fd`,
    when they need no word in the output and the run completed with every expectation graded
    and plain; None otherwise (read it with read_trial, which says what is wrong)."""
    prefix = name + _SEP
    try:
        data = _load_at(dir_fd, prefix + "grading.json")
        if data is MISSING:
            return None
        facts = grading_facts(data)
        if isinstance(facts, str):
            return None
        timing = _load_at(dir_fd, prefix + "timing.json")
        m = _load_at(dir_fd, prefix + _METRICS_NAMES[0])
        if m is MISSING:
            m = _load_at(dir_fd, prefix + _METRICS_NAMES[1])
    except (OSError, ValueError):
        return None
    for e in facts.expectations:
        if type(e) is not Outcome or e.passed is None:
            return None
    tokens = duration = None
    if timing is not MISSING:
        if type(timing) is not dict:
            return None
        if timing:
            tokens = timing.get("total_tokens")
            total_s, ms, executor_s = timing.get(_TOTAL_S), timing.get(_MS), timing.get(_EXECUTOR_S)
            # _timing_figures' checks, inline (four calls a run): anything it would report hands over,
            # a duration past its DURATION_LIMITS entry included (no NaN or infinity is within one)
            if not ((tokens is None or (type(tokens) is int and tokens >= 0))
                    and (total_s is None or (type(total_s) in (int, float) and -_TOP_TOTAL_S <= total_s <= _TOP_TOTAL_S))
                    and (ms is None or (type(ms) in (int, float) and -_TOP_MS <= ms <= _TOP_MS))
                    and (executor_s is None
                         or (type(executor_s) in (int, float) and -_TOP_EXECUTOR_S <= executor_s <= _TOP_EXECUTOR_S))):
                return None
            duration = _duration(total_s, ms, executor_s)
    if m is MISSING:
        m = {}
    elif type(m) is not dict:
        return None
    if _huge_figures(data, m):
        return None
    figures = _figures(facts, tokens, duration, m)
    return _new_tuple(PlainRun, (facts, figures)) if figures.status == "ok" else None
