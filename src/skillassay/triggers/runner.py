"""Running trigger queries: each query K times, in parallel, resumable.

A run's record is keyed by everything that decides its outcome (the skills installed, with
their SKILL.md text, the executor's identity, the query, the run number and seed), so re-running
the command skips every run already finished, and the optimizer's candidate descriptions never
mix their runs with another's. A failed run (error, timeout) is not finished: it runs again."""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from skillassay.errors import InputError
from skillassay.executors.base import Executor, TrialRequest, TrialResult
from skillassay.models.triggers import TriggerQuery, TriggerRun
from skillassay.run.execute import RetryPolicy, call_with_retries
from skillassay.run.interrupt import RunInterrupted, StopSignals, signal_name, stop_requested
from skillassay.run.schedule import run_queue
from skillassay.run.stop import DEFAULT_LIMIT, SameErrorStreak, stop_reason
from skillassay.spec.skill import Skill
from skillassay.store.jsonio import load_json_lenient, now_iso, write_json

RECORDS_DIR = "runs"


@dataclass(frozen=True)
class RunSpec:
    """One run to make: query `index` of the set, run number `run` (1..K)."""

    index: int
    query: TriggerQuery
    run: int
    seed: int


class _AsTrigger(Executor):
    """The executor's run_trigger seen as a trial, so the engine's retry and deadline logic
    (call_with_retries) serves trigger runs unchanged."""

    name: ClassVar[str] = "trigger"

    def __init__(self, inner: Executor) -> None:
        super().__init__(inner.settings)
        self.inner = inner
        self.handles_timeout = inner.handles_timeout  # type: ignore[misc]

    def run(self, request: TrialRequest) -> TrialResult:
        return self.inner.run_trigger(request)


def skill_digest(skills: Sequence[Skill]) -> str:
    """What the agent is shown of each installed skill: its whole SKILL.md, in install order."""
    h = hashlib.sha256()
    for s in skills:
        h.update(s.name.encode() + b"\0" + s.skill_md.read_bytes() + b"\0")
    return h.hexdigest()


def run_key(spec: RunSpec, skills_digest: str, identity: dict[str, Any]) -> str:
    blob = json.dumps({"skills": skills_digest, "executor": identity, "query": spec.query.query,
                       "run": spec.run, "seed": spec.seed}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def plan_runs(queries: Sequence[TriggerQuery], indexes: Sequence[int], runs: int, seed: int) -> list[RunSpec]:
    """Seeds follow the query's index in the whole set, so a query keeps its seeds whichever
    split (train, test) it is run in."""
    return [RunSpec(i, queries[i], k, seed + 1000 * i + k) for i in indexes for k in range(1, runs + 1)]


def _finished(path: Path) -> dict[str, Any] | None:
    data = load_json_lenient(path)
    return data if isinstance(data, dict) and data.get("status") == "ok" and isinstance(data.get("loaded"), list) else None


def _execute(executor: Executor, skills: tuple[Skill, ...], spec: RunSpec, policy: RetryPolicy) -> dict[str, Any]:
    names = [s.name for s in skills]
    with tempfile.TemporaryDirectory(prefix="skillassay-trigger-") as work:
        request = TrialRequest(prompt=spec.query.query, workdir=Path(work), skill=skills[0], seed=spec.seed,
                               settings=executor.settings, extra_skills=skills[1:], give_up=policy.give_up)
        started = now_iso()
        result, attempts = call_with_retries(_AsTrigger(executor), request, policy)
    loaded = executor.skills_loaded(result, names) if result.status == "ok" else None
    return {"query_index": spec.index, "query": spec.query.query, "should_trigger": spec.query.should_trigger,
            "run": spec.run, "seed": spec.seed, "status": result.status, "error": result.error,
            "loaded": loaded, "attempts": attempts, "started_at": started, "ended_at": now_iso(),
            "duration_ms": result.agent_duration_ms, "tokens": result.usage.total_tokens,
            "model": result.model, "final_text": result.final_text, "transcript": result.transcript}


def as_run(record: dict[str, Any], skill_name: str, rel: str) -> TriggerRun:
    loaded = [str(n) for n in record.get("loaded") or []]
    ok = record.get("status") == "ok" and record.get("loaded") is not None
    return TriggerRun(run=int(record["run"]), seed=int(record["seed"]), status=record.get("status", "error"),
                      error=record.get("error"), loaded=loaded, triggered=(skill_name in loaded) if ok else None,
                      duration_ms=record.get("duration_ms"), tokens=record.get("tokens"), record=rel)


def execute_runs(executor: Executor, skills: tuple[Skill, ...], specs: Sequence[RunSpec], store: Path,
                 concurrency: int, on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None,
                 policy: RetryPolicy | None = None, fail_fast: int = DEFAULT_LIMIT
                 ) -> dict[tuple[int, int], tuple[dict[str, Any], Path]]:
    """Every spec's record, run now or found finished in `store`; (index, run) -> (record, path).
    Each record is written atomically as soon as its run ends: a killed command loses no run.
    The stop rule of `run` (run/stop.py) guards it too: when the first failures all have one
    error and no run succeeded, no further run starts and InputError (exit 2) says why."""
    digest, identity = skill_digest(skills), executor.identity()
    folder = store / RECORDS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[tuple[int, int], tuple[dict[str, Any], Path]] = {}
    todo: list[tuple[RunSpec, Path]] = []
    for spec in specs:
        path = folder / f"{run_key(spec, digest, identity)}.json"
        found = _finished(path)
        if found is not None:
            out[(spec.index, spec.run)] = (found, path)
            if on_done:
                on_done(spec, found, True)
        else:
            todo.append((spec, path))
    streak, lock, base = SameErrorStreak(fail_fast), threading.Lock(), policy or RetryPolicy()

    def guarded(spec: RunSpec) -> dict[str, Any] | None:
        if streak.tripped:
            return None
        with lock:
            run_policy = replace(base, attempts=1 if streak.unproven else base.attempts, give_up=streak.give_up())
        record = _execute(executor, skills, spec, run_policy)
        with lock:
            streak.add(_Outcome(str(record.get("status")), record.get("error")))
        return record

    ran = 0

    def done(result: tuple[RunSpec, Path, dict[str, Any] | None]) -> None:
        nonlocal ran
        spec, path, record = result
        if record is None or (stop_requested() and record.get("status") != "ok"):
            return  # not run, or ended by the stop: not a failure of the agent's, so not recorded
        ran += 1
        write_json(path, record)
        out[(spec.index, spec.run)] = (record, path)
        if on_done:
            on_done(spec, record, False)

    # As `run`'s trials (run/schedule.py, run/interrupt.py): Ctrl-C, SIGTERM or SIGHUP start no
    # new run and end the agents in flight; what finished is kept, and the command says so.
    with StopSignals(kept="finished runs are kept") as stop:
        run_queue(deque(todo), lambda item: (item[0], item[1], guarded(item[0])), max(1, concurrency),
                  lambda: streak.tripped or stop_requested(), done)
    if stop.received is not None:
        raise TriggersInterrupted(stop.received, store, len(out), len(specs) - len(out))
    if streak.tripped:
        raise InputError.one(store, f"--executor {executor.name}",
                             f"triggers stopped: {stop_reason(streak)}; no further runs were started ({ran} ran). "
                             f"The error: {streak.error}. Fix the cause and run the same command again to resume: "
                             "finished runs are kept and the failed ones are run again.")
    return out


class TriggersInterrupted(RunInterrupted):
    """Trigger runs stopped on a signal: the finished ones are on disk, the others run on resume."""

    def __init__(self, signum: int, store: Path, finished: int, left: int) -> None:
        super().__init__(signum, store, finished, left, aggregated=False)

    def message(self) -> str:
        return (f"interrupted ({signal_name(self.signum)}): {self.finished} finished runs are kept in "
                f"{self.iteration_dir / RECORDS_DIR}; {self.left} runs did not run or were stopped. Run the same "
                "command again to resume: finished runs are not run again")


@dataclass(frozen=True)
class _Outcome:
    """A trigger run's record as the stop rule reads it."""

    status: str
    error: str | None


__all__ = ["RunSpec", "TriggersInterrupted", "as_run", "execute_runs", "plan_runs", "run_key", "skill_digest"]
