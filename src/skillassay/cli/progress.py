"""Progress display for `run` (a rich bar on a terminal, plain log lines otherwise: CI logs).
`aggregate`'s bar is console.count_bar: this module imports the run engine (and through it
scipy), which `aggregate` must not wait for before its reader processes start."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console

from skillassay.run.engine import Progress as EngineProgress
from skillassay.store.records import TrialRecord

if TYPE_CHECKING:
    from rich.progress import TaskID


class RichProgress(EngineProgress):
    def __init__(self, console: Console) -> None:
        # a terminal's bar only: CI logs get LineProgress, without rich.progress's import
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console
        self.failures = 0
        self.bar = Progress(TextColumn("[bold]trials"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("errored {task.fields[failed]}"), TimeElapsedColumn(),
                            TextColumn("{task.fields[node]}"), console=console, transient=False)
        self.task: TaskID | None = None

    def notice(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)

    def start(self, total: int, skipped: int, message: str) -> None:
        self.console.print(f"{message}; {skipped} trials already graded, {total} to run")
        self.bar.start()
        self.task = self.bar.add_task("trials", total=total, failed=0, node="")

    def trial_done(self, record: TrialRecord) -> None:
        if not record.completed:
            self.failures += 1
        if self.task is not None:
            node = self.node_of(record.run_dir) if self.node_of else None
            self.bar.update(self.task, advance=1, failed=self.failures, node=f"last on {node}" if node else "")

    def finish(self) -> None:
        self.bar.stop()


class LineProgress(EngineProgress):
    """Plain lines for non-TTY logs (CI), throttled: a line for a finished trial only when
    `every` seconds have passed since the last one or the run crossed another `step` of its
    trials (5%), and always for the first and the last trial and for every errored one. One
    line per trial put 50,006 lines in a CI log for a 50,000-trial run; a small run still
    gets a line per trial (each is more than 5% of it)."""

    def __init__(self, console: Console, every: float = 10.0, step: float = 0.05,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.console = console
        self.done = self.total = self.failures = 0
        self.every, self.step, self.clock = every, step, clock
        self.t0 = self.last_time = clock()
        self.last_step = 0

    def notice(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)

    def start(self, total: int, skipped: int, message: str) -> None:
        self.total = total
        self.console.print(f"{message}; {skipped} trials already graded, {total} to run", highlight=False)

    def _due(self, record: TrialRecord, now: float) -> bool:
        step = int(self.done / max(self.total, 1) / self.step) if self.step > 0 else self.done
        due = (self.done in (1, self.total) or not record.completed or step > self.last_step
               or now - self.last_time >= self.every)
        if due:
            self.last_time, self.last_step = now, step
        return due

    def trial_done(self, record: TrialRecord) -> None:
        self.done += 1
        if not record.completed:
            self.failures += 1
        now = self.clock()
        if not self._due(record, now):
            return
        verdict = ("PASS" if record.passed else "UNGRADED" if record.ungraded
                   else "FAIL" if record.completed else record.status.upper())
        # "errored so far", not "failed": a trial that ran and failed its expectations is not an
        # error, and "FAIL (0 failed)" read as a contradiction
        # Straight to the stream: rich's print costs ~0.1 ms a line, a fifth of the engine's own
        # per-trial budget at 20,000 trials, for a line it neither wraps (soft_wrap) nor styles.
        node = self.node_of(record.run_dir) if self.node_of else None
        self.console.file.write(
            f"[{self.done}/{self.total}] eval {record.eval_id} {record.configuration} run-{record.run_number}"
            f"{f' on {node}' if node else ''}: "
            f"{verdict} ({self.failures} errored so far, {now - self.t0:.1f}s elapsed)\n")

    def finish(self) -> None:
        pass
