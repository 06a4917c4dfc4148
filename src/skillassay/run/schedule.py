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
from typing import Protocol

from skillassay.executors.process_group import stop_requested
from skillassay.run.budget import Budget
from skillassay.run.interrupt import STOP_WAIT_SECONDS
from skillassay.run.plan import Trial
from skillassay.run.stop import SameErrorStreak
from skillassay.store.records import TrialRecord


class Progress(Protocol):
    def trial_done(self, record: TrialRecord) -> None: ...


Runner = Callable[[Trial], "TrialRecord | None"]  # None: the trial was stopped, nothing recorded
_EXIT = object()  # a worker's last message: it takes no more trials
BUDGET_WAIT_SECONDS = 0.05


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
    inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
    take = threading.Lock()
    failed = threading.Event()

    def work() -> None:
        try:
            while True:
                with take:
                    if not pending or failed.is_set() or halted():
                        return
                    decision, reserved = budget.decide() if budget is not None else ("start", 0.0)
                    if decision == "stop":
                        return
                    trial = budgeted(pending.popleft(), reserved) if decision == "start" else None
                if trial is None:  # the budget waits for a trial in flight to settle
                    time.sleep(BUDGET_WAIT_SECONDS)
                    continue
                try:
                    inbox.put(guarded(trial, reserved))
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
                    failed.set()
                    inbox.put(exc)
                    return
        finally:
            inbox.put(_EXIT)

    workers = min(concurrency, len(pending))
    for i in range(workers):
        threading.Thread(target=work, daemon=True, name=f"skillassay-trial-{i}").start()
    running, error, leave_at = workers, None, None
    while running:
        if leave_at is None and stop_requested():
            leave_at = time.monotonic() + STOP_WAIT_SECONDS
        try:
            item = inbox.get(timeout=0.1 if leave_at is None else max(leave_at - time.monotonic(), 0.001))
        except queue.Empty:
            if leave_at is not None and time.monotonic() >= leave_at:
                break  # trials that cannot be stopped (in-process calls): left to their daemon threads
            continue
        if item is _EXIT:
            running -= 1
        elif isinstance(item, BaseException):
            error = error or item
        elif item is not None:
            assert isinstance(item, TrialRecord)
            results.append(item)
            progress.trial_done(item)
    if error is not None:
        raise error
    return results


__all__ = ["execute_all"]
