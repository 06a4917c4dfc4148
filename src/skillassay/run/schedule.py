"""Running a list of trials: in this thread (concurrency 1) or in `concurrency` worker threads,
until the list is done, the same-error streak trips (run/stop.py) or the run is told to stop
(run/interrupt.py).

The workers are daemon threads taking trials one at a time from a shared queue, not a
ThreadPoolExecutor with every trial submitted up front: a pool's queued trials all ran after a
Ctrl-C (its shutdown waits for them), and its threads are joined at exit, so one trial stuck in
a call nobody can interrupt held the process. Here a stop is seen before each trial is taken;
the main thread waits for the trials in flight at most STOP_WAIT_SECONDS after it and then
leaves them, and a worker's exception (a failed write, say) stops the others taking more and
is raised in the caller once the trials in flight are back."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, Protocol, TypeVar

from skillassay.executors.process_group import stop_requested
from skillassay.run.budget import Budget
from skillassay.run.interrupt import STOP_WAIT_SECONDS
from skillassay.run.plan import Trial
from skillassay.run.stop import SameErrorStreak
from skillassay.store.records import TrialRecord


class Progress(Protocol):
    def trial_done(self, record: TrialRecord) -> None: ...


T = TypeVar("T")
R = TypeVar("R")
Runner = Callable[[Trial], "TrialRecord | None"]  # None: the trial was stopped, nothing recorded
_EXIT = object()  # a worker's last message: it takes no more trials
ADMIT_WAIT_SECONDS = 0.05  # how often a held-back item is asked again (a budget waiting on trials in flight)
Admission = Literal["start", "wait", "stop"]


def execute_all(todo: list[Trial], runner: Runner, concurrency: int, progress: Progress,
                streak: SameErrorStreak | None = None, budget: Budget | None = None) -> list[TrialRecord]:
    """The records of the trials that ran to the end, in the order they finished. `todo` is
    emptied (each Trial is dropped once it has run: memory stays flat on big suites). Once
    `streak` trips no trial starts; those already running finish and are recorded. With a
    `budget`, a trial starts only when the budget allows it (run/budget.py); the trials it holds
    back stay unrun."""
    streak = streak or SameErrorStreak(0)
    pending = deque(todo)
    todo.clear()
    lock = threading.Lock()

    def halted() -> bool:
        return streak.tripped or stop_requested()

    def guarded(trial: Trial, reserved: float = 0.0) -> TrialRecord | None:
        rec = None
        try:
            rec = runner(trial)
        finally:
            if budget is not None:
                budget.settle(rec, reserved)
        if rec is not None:
            with lock:
                streak.add(rec)
        return rec

    results: list[TrialRecord] = []
    if concurrency <= 1:
        while pending and not halted():
            decision, reserved = budget.decide() if budget is not None else ("start", 0.0)
            if decision != "start" or (rec := guarded(budgeted(pending.popleft(), reserved), reserved)) is None:
                break
            results.append(rec)
            progress.trial_done(rec)
        return results
    return _in_workers(pending, guarded, concurrency, progress, halted, results, budget)


def budgeted(trial: Trial, reserved: float) -> Trial:
    """The trial with its share of the budget (what its worst case reserved), for a metering
    proxy to hold it to; unchanged without a budget."""
    return trial if reserved == 0.0 and trial.max_cost_usd is None else replace(trial, max_cost_usd=reserved)


def _in_workers(pending: deque[Trial], guarded: Callable[[Trial, float], TrialRecord | None], concurrency: int,
                progress: Progress, halted: Callable[[], bool], results: list[TrialRecord],
                budget: Budget | None) -> list[TrialRecord]:
    def done(rec: TrialRecord | None) -> None:
        if rec is not None:
            results.append(rec)
            progress.trial_done(rec)

    def admit(trial: Trial) -> tuple[Admission, tuple[Trial, float]]:
        decision, reserved = budget.decide() if budget is not None else ("start", 0.0)
        return decision, (budgeted(trial, reserved), reserved)

    run_queue(pending, lambda pair: guarded(*pair), concurrency, halted, done, admit)
    return results


def run_queue(pending: deque[T], call: Callable[[Any], R], concurrency: int, halted: Callable[[], bool],
              done: Callable[[R], None], admit: Callable[[T], tuple[Admission, Any]] | None = None) -> None:
    """`call` on each item in `concurrency` daemon worker threads; `done` with each result, in
    this thread, in the order they finish. No item is taken once `halted()`; after a stop
    (stop_requested) the items in flight are waited for at most STOP_WAIT_SECONDS. A worker's
    exception stops the others taking more and is raised here once those in flight are back.
    `admit` (a budget) is asked before each item is taken: start it (as the item it returns),
    wait (ask again shortly: items in flight may free room), or stop taking items."""
    inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
    take = threading.Lock()
    failed = threading.Event()

    def work() -> None:
        try:
            while True:
                with take:
                    if not pending or failed.is_set() or halted():
                        return
                    decision, item = admit(pending[0]) if admit is not None else ("start", pending[0])
                    if decision == "stop":
                        return
                    if decision == "start":
                        pending.popleft()
                if decision == "wait":
                    time.sleep(ADMIT_WAIT_SECONDS)
                    continue
                try:
                    inbox.put(_Result(call(item)))
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
                    failed.set()
                    inbox.put(exc)
                    return
        finally:
            inbox.put(_EXIT)

    workers = min(concurrency, len(pending))
    for i in range(workers):
        threading.Thread(target=work, daemon=True, name=f"skillassay-worker-{i}").start()
    running, error, leave_at = workers, None, None
    while running:
        if leave_at is None and stop_requested():
            leave_at = time.monotonic() + STOP_WAIT_SECONDS
        try:
            got = inbox.get(timeout=0.1 if leave_at is None else max(leave_at - time.monotonic(), 0.001))
        except queue.Empty:
            if leave_at is not None and time.monotonic() >= leave_at:
                break  # calls that cannot be stopped (in-process): left to their daemon threads
            continue
        if got is _EXIT:
            running -= 1
        elif isinstance(got, BaseException):
            error = error or got
        elif isinstance(got, _Result):
            done(got.value)  # type: ignore[arg-type] # what `call` returned
    if error is not None:
        raise error


class _Result:
    """A worker's result, told apart from its exception and its exit."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


__all__ = ["execute_all", "run_queue"]
