"""history.json: the version progression of an improved skill (schemas.md, Improve mode).

Each iteration of a workspace is a version (v0, v1, ... in iteration order). The first is the
baseline; every later one is compared with the current best on the evals both measured, and
only a difference the data can show makes it `won` or `lost`: the decision uses the paired
sign-flip test on per-eval expectation pass rates, with that test inverted as its interval
(`paired_intervals.difference_by_test_inversion`),
and a version whose difference cannot be told from noise is a `tie` and does not replace the
best. Three lucky trials therefore never crown a new best.

The per-eval rates are stored in each entry (extra fields), so the whole chain is recomputed
from history.json alone whenever an iteration is (re-)recorded: recording is idempotent and an
iteration recorded late still lands in its place.

That recomputation is a read-modify-write of one workspace-level file, so two `skillassay run`s
on one workspace (a CI matrix, a second terminal) could each read the old file and the later
write would drop the other's entry. It runs under an inter-process lock (`history.json.lock`
beside it); the write itself stays atomic, so readers, which take no lock, never see half a file."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, ValidationInfo, field_validator

from skillassay.analyze.arms import SKILL_CONFIGS
from skillassay.analyze.paired_intervals import difference_by_test_inversion
from skillassay.errors import InputError
from skillassay.models.improve import History, HistoryEntry
from skillassay.stats.multiplicity import bh_adjust, one_sided_exact_p
from skillassay.stats.paired import PairedDifference, paired_difference
from skillassay.store.jsonio import read_json, validation_problems, write_json
from skillassay.store.records import TrialRecord

HISTORY_FILE = "history.json"
LOCK_FILE = HISTORY_FILE + ".lock"  # stays after use on Unix: flock waiters must share one inode
LOCK_TIMEOUT = 60.0  # seconds; the locked work takes well under one, so this means a stuck holder
SCHEMA_VERSION = 1
ALPHA = 0.05
METRIC = "per-eval mean expectation pass rate of the with_skill arm"
Q = 0.10  # Benjamini-Hochberg level of the per-eval calls, as in `compare`
RULE = (f"won/lost when the paired sign-flip p <= {ALPHA} and the 95% t interval of the mean per-eval "
        f"difference lies entirely above/below 0, or, failing that, when evals are called improved "
        f"(resp. regressed) by one-sided exact tests with Benjamini-Hochberg at q = {Q} and none the "
        "other way; otherwise tie")

Result = Literal["baseline", "won", "lost", "tie"]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalRate:
    """One eval's with-skill expectation pass rate: the unit the comparison pairs on."""

    eval_id: int | str
    eval_name: str
    rate: float
    trials_completed: int
    passes: int | None = None  # trials whose expectations all passed (for the per-eval tests)


@dataclass(frozen=True)
class VersionFacts:
    """What one iteration contributes to the history, independent of the other versions."""

    iteration: int
    iteration_dir: str
    started_at: str | None
    skill_name: str
    skill_hash: str | None
    evals_hash: str | None
    per_eval: tuple[EvalRate, ...]

    @property
    def expectation_pass_rate(self) -> float:
        """Mean over evals (the unit of replication), so it is the mean of what is paired."""
        rates = [e.rate for e in self.per_eval]
        return sum(rates) / len(rates) if rates else 0.0


# ------------------------------------------------------------------ reading an iteration


def per_eval_rates(records: list[TrialRecord]) -> tuple[EvalRate, ...]:
    """Completed, graded with-skill trials only: an errored trial is not a 0% measurement (spec),
    and an ungraded one is no measurement of its result at all."""
    rates: dict[int | str, list[float]] = defaultdict(list)
    passes: dict[int | str, int] = defaultdict(int)
    names: dict[int | str, str] = {}
    for r in records:
        if (r.configuration in SKILL_CONFIGS and r.completed and not r.ungraded
                and r.expectation_pass_rate is not None):
            rates[r.eval_id].append(r.expectation_pass_rate)
            passes[r.eval_id] += bool(r.passed)
            names[r.eval_id] = r.eval_name
    return tuple(EvalRate(e, names[e], sum(v) / len(v), len(v), passes[e]) for e, v in rates.items())


def read_version(iteration_dir: Path, records: list | None = None) -> VersionFacts:
    """The version's facts; `records` (when the caller has them in memory, as `run` does)
    saves reading every run back from disk."""
    from skillassay.store.iteration_files import read_iteration_record
    from skillassay.workflows.aggregate import collect, default_skill_name, iteration_number

    record = read_iteration_record(iteration_dir)
    number = iteration_number(iteration_dir, record)
    if number is None:
        raise InputError.one(iteration_dir, "", "not an iteration folder (expected iteration-N or an iteration.json)")
    per_eval = per_eval_rates(records if records is not None else collect(iteration_dir).records)
    if not per_eval:
        raise InputError.one(iteration_dir, "with_skill", "no completed with_skill run to record")
    fingerprint: dict[str, Any] = record["fingerprint"] if isinstance(record.get("fingerprint"), dict) else {}
    return VersionFacts(
        iteration=number, iteration_dir=iteration_dir.name, started_at=record.get("started_at"),
        skill_name=default_skill_name(iteration_dir, record), skill_hash=fingerprint.get("skill"),
        evals_hash=fingerprint.get("evals"), per_eval=per_eval)


# ------------------------------------------------------------------ deciding


def compare_versions(new: VersionFacts, best: VersionFacts, best_version: str, seed: int = 0) -> dict[str, Any]:
    """The statistical evidence for one entry, with its `result`. Pairs by eval id; evals only
    one version measured are named, not silently dropped."""
    best_rates = {e.eval_id: e.rate for e in best.per_eval}
    common = [e for e in new.per_eval if e.eval_id in best_rates]
    # The interval is the sign-flip test printed beside it, inverted (issue 34): 0 is inside it
    # exactly when that p is >= 0.05, never a t interval excluding 0 beside "tie".
    pa, pb = [e.rate for e in common], [best_rates[e.eval_id] for e in common]
    d = paired_difference(pa, pb, seed=seed, bounds=(-1.0, 1.0))
    if d.n:
        inverted = difference_by_test_inversion(pa, pb, seed=seed, p_at_zero=d.p_value)
        d = dataclasses.replace(d, interval=inverted.interval)
    lo, hi = d.interval if d.interval is not None else (None, None)
    significant = d.p_value is not None and d.p_value <= ALPHA
    result: Result = "tie"
    if significant and lo is not None and lo > 0:
        result = "won"
    elif significant and hi is not None and hi < 0:
        result = "lost"
    calls = per_eval_calls(new, best)
    if result == "tie" and calls["regressed"] and not calls["improved"]:
        result = "lost"
    elif result == "tie" and calls["improved"] and not calls["regressed"]:
        result = "won"
    evidence: dict[str, Any] = {
        "against": best_version, "metric": METRIC, "rule": RULE, "result": result,
        "n_paired_evals": d.n, "mean_difference": _round(d.mean), "interval": None if d.interval is None
        else [_round(lo), _round(hi)], "p_value": _round(d.p_value), "method": d.method,
        "n_nonzero": d.n_nonzero, "significance_reachable": d.significance_reachable,
        "explanation": d.explanation, "reason": _reason(result, d, best_version, calls),
        "evals_regressed": calls["regressed"], "evals_improved": calls["improved"],
        "evals_only_in_this_version": [e.eval_id for e in new.per_eval if e.eval_id not in best_rates],
        "evals_only_in_best": [e.eval_id for e in best.per_eval
                               if e.eval_id not in {x.eval_id for x in new.per_eval}],
    }
    if new.evals_hash and best.evals_hash and new.evals_hash != best.evals_hash:
        evidence["warning"] = (f"the eval set changed since {best_version}: paired by eval id, so an eval "
                               "whose prompt or expectations changed is compared as if it had not")
    return evidence


def per_eval_calls(new: VersionFacts, best: VersionFacts) -> dict[str, list[int | str]]:
    """Evals whose trial pass rate changed beyond chance: the same one-sided exact tests and
    false-discovery control `compare` uses, so history and the regression gate agree. A suite
    of few evals can lose clearly on some of them while the suite-level test cannot reach
    significance (fewer than 6 differing evals)."""
    before = {e.eval_id: e for e in best.per_eval}
    pairs, tests = [], []
    for n in new.per_eval:
        b = before.get(n.eval_id)
        if b is not None and n.passes is not None and b.passes is not None:
            pairs.append((n, b))
            tests.append(one_sided_exact_p(b.passes, b.trials_completed, n.passes, n.trials_completed,
                                                 only_observed_direction=True))
    reg = bh_adjust([t[0] for t in tests])
    imp = bh_adjust([t[1] for t in tests])
    return {"regressed": [n.eval_id for (n, _), p in zip(pairs, reg, strict=True) if p is not None and p <= Q],
            "improved": [n.eval_id for (n, _), p in zip(pairs, imp, strict=True) if p is not None and p <= Q]}


def _round(x: float | None) -> float | None:
    return None if x is None or x != x else round(float(x), 6)


def _reason(result: Result, d: PairedDifference, best_version: str,
            calls: dict[str, list[int | str]] | None = None) -> str:
    if d.n == 0:
        return f"no eval measured by both this version and {best_version}: nothing to compare, so tie"
    iv = "no interval (fewer than 2 paired evals)" if d.interval is None else \
        f"95% CI {d.interval[0]:+.3f}..{d.interval[1]:+.3f}"
    core = (f"mean per-eval difference in expectation pass rate {d.mean:+.3f} vs {best_version} "
            f"({iv}, p={d.p_value:.3g}, {d.n} evals)")
    calls = calls or {"regressed": [], "improved": []}
    if result == "won":
        extra = f"; evals improved: {', '.join(map(str, calls['improved']))}" if calls["improved"] else ""
        return f"better than {best_version}: {core}{extra}"
    if result == "lost":
        extra = f"; evals regressed: {', '.join(map(str, calls['regressed']))}" if calls["regressed"] else ""
        return f"worse than {best_version}: {core}{extra}"
    if not d.significance_reachable and d.n_nonzero:
        return f"indistinguishable from {best_version}: {core}; {d.explanation}"
    return f"indistinguishable from {best_version}: {core}"


# ------------------------------------------------------------------ the chain


def build_history(versions: list[VersionFacts], started_at: str | None = None, seed: int = 0) -> History:
    """Versions in iteration order; each compared with the best before it. The parent is that
    best (improvement starts from the best version so far, as skill-creator's Improve mode
    does), and only a `won` version replaces it."""
    ordered = sorted(versions, key=lambda v: v.iteration)
    if not ordered:
        raise ValueError("build_history needs at least one version")
    entries: list[dict[str, Any]] = []
    best_index = 0
    for i, v in enumerate(ordered):
        name = f"v{i}"
        entry: dict[str, Any] = {"version": name, "parent": None, "grading_result": "baseline",
                                 "expectation_pass_rate": round(v.expectation_pass_rate, 6)}
        if i > 0:
            best_name = f"v{best_index}"
            evidence = compare_versions(v, ordered[best_index], best_name, seed)
            entry.update(parent=best_name, grading_result=evidence["result"], comparison=evidence)
            if evidence["result"] == "won":
                best_index = i
        entry.update(_facts_extra(v))
        entries.append(entry)
    for i, entry in enumerate(entries):
        entry["is_current_best"] = i == best_index
    return History.model_validate({
        "started_at": started_at or ordered[0].started_at or _now(),
        "skill_name": ordered[-1].skill_name,
        "current_best": f"v{best_index}",
        "iterations": entries,
        "schema_version": SCHEMA_VERSION,
    })


def _facts_extra(v: VersionFacts) -> dict[str, Any]:
    return {"iteration": v.iteration, "iteration_dir": v.iteration_dir, "iteration_started_at": v.started_at,
            "skill_hash": v.skill_hash, "evals_hash": v.evals_hash,
            "per_eval": [{"eval_id": e.eval_id, "eval_name": e.eval_name, "expectation_pass_rate": round(e.rate, 6),
                          "trials_completed": e.trials_completed, "passes": e.passes} for e in v.per_eval]}


MAX_TRIALS = 10**9  # per eval and arm: more than any run records, and what the exact tests can take


class StoredEvalRate(BaseModel):
    """One item of an entry's per_eval, as we write it: checked on reading, because every later
    comparison pairs on these numbers."""

    model_config = ConfigDict(extra="allow")
    eval_id: int | str
    eval_name: Any = ""
    expectation_pass_rate: float = Field(ge=0, le=1, allow_inf_nan=False)
    trials_completed: int = Field(0, ge=0, le=MAX_TRIALS)
    passes: Any = None

    @field_validator("passes")
    @classmethod
    def _passes_within_trials(cls, p: Any, info: ValidationInfo) -> Any:
        """The exact tests take these counts as they are: a count no run can have (negative,
        more passes than trials) is refused here, naming the field, not crashed on there."""
        trials = info.data.get("trials_completed")
        if type(p) is int and isinstance(trials, int) and not 0 <= p <= trials:
            shown = p if abs(p) < 10**12 else "a number of over 12 digits"
            raise ValueError(f"passes must be between 0 and trials_completed ({trials}), got {shown}")
        return p


_STORED_RATES: TypeAdapter[list[StoredEvalRate]] = TypeAdapter(list[StoredEvalRate])


class StoredComparison(BaseModel):
    """An entry's `comparison`, the fields `history show` prints: checked on reading, so a
    hand-edited file is an input error naming the field, not a crash while printing it."""

    model_config = ConfigDict(extra="allow")
    against: str = "-"
    mean_difference: float | None = None
    interval: tuple[float, float] | None = None
    p_value: float | None = None
    reason: str | None = None


def _check_entries(history: History, path: Path) -> History:
    for entry in history.iterations:
        comparison = (entry.model_extra or {}).get("comparison")
        if comparison is None:
            continue
        try:
            StoredComparison.model_validate(comparison)
        except ValidationError as exc:
            problems = validation_problems(path, exc, comparison)
            for p in problems:
                p.location = f"iterations[{entry.version}].comparison{p.location.removeprefix('$')}"
            raise InputError(problems) from None
    return history


def facts_from_entry(entry: HistoryEntry, skill_name: str, where: Path) -> VersionFacts:
    """Back from a stored entry; an entry another tool wrote lacks the per-eval rates, and
    without them no later version could be compared with it, so that is an input error."""
    extra = entry.model_extra or {}
    if not isinstance(extra.get("iteration"), int) or not isinstance(extra.get("per_eval"), list):
        raise InputError.one(where, f"iterations[{entry.version}]",
                             "entry has no per-eval rates (not written by skillassay): move the file "
                             "away to start a new history")
    try:
        rates = _STORED_RATES.validate_python(extra["per_eval"])
    except ValidationError as exc:
        problems = validation_problems(where, exc, extra["per_eval"])
        for p in problems:
            p.location = f"iterations[{entry.version}].per_eval{p.location.removeprefix('$')}"
        raise InputError(problems) from None
    return VersionFacts(
        iteration=extra["iteration"], iteration_dir=str(extra.get("iteration_dir", "")),
        started_at=extra.get("iteration_started_at"), skill_name=skill_name,
        skill_hash=extra.get("skill_hash"), evals_hash=extra.get("evals_hash"),
        per_eval=tuple(EvalRate(p.eval_id, str(p.eval_name), p.expectation_pass_rate, p.trials_completed,
                                p.passes if type(p.passes) is int else None)
                       for p in rates))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------ the file


def load_history(workspace: Path) -> History | None:
    path = workspace / HISTORY_FILE
    if not path.is_file():
        return None
    from skillassay.store.jsonio import parse_model

    return _check_entries(parse_model(read_json(path), History, path), path)


@contextlib.contextmanager
def history_lock(workspace: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the workspace's history lock (blocking, across processes) for a read-modify-write
    of history.json. An OS lock (flock on Unix): the kernel drops it when its holder dies, so a
    killed run never leaves the workspace locked."""
    workspace.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(workspace / LOCK_FILE), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise InputError.one(workspace / LOCK_FILE, "", f"still locked after {timeout:g} s by another skillassay "
                             "process updating history.json; retry when it has finished") from None
    try:
        yield
    finally:
        lock.release()


def record_iteration(workspace: Path, iteration_dir: Path, seed: int = 0, records: list | None = None) -> History:
    """Add (or replace) the iteration's version and rewrite workspace/history.json. The
    iteration is read before locking (it is not shared); only the history update is locked."""
    path = workspace / HISTORY_FILE
    new = read_version(iteration_dir, records)
    with history_lock(workspace):
        existing = load_history(workspace)
        versions = [new]
        started_at = None
        if existing is not None:
            started_at = existing.started_at
            versions += [f for f in (facts_from_entry(e, existing.skill_name, path) for e in existing.iterations)
                         if f.iteration != new.iteration]
        history = build_history(versions, started_at, seed)
        write_json(path, history)
    return history


def record_after_run(workspace: Path, iteration_dir: Path, records: list | None = None) -> History | None:
    """The engine's hook: history is a by-product, so any failure here is logged and the run's
    benchmark (already written) stands."""
    try:
        return record_iteration(workspace, iteration_dir, records=records)
    except InputError as exc:  # bad input is said as such, naming file and field, never as a class name
        log.warning("history.json not updated (the benchmark stands): %s", exc)
        return None
    except Exception as exc:  # noqa: BLE001 - never lose a finished benchmark to bookkeeping
        log.warning("history.json not updated: %s: %s", type(exc).__name__, exc)
        return None
