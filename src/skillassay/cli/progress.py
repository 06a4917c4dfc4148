"""Progress display for `run` (a rich bar on a terminal, plain log lines otherwise: CI logs).
`aggregate`'s bar is console.count_bar: this module imports the run engine (and through it
scipy), which `aggregate` must not wait for before its reader processes start."""

from __future__ import annotations

import time
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
    """One line per finished trial: greppable, and nothing fancy in non-TTY logs."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.done = self.total = self.failures = 0
        self.t0 = time.perf_counter()

    def notice(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)

    def start(self, total: int, skipped: int, message: str) -> None:
        self.total = total
        self.console.print(f"{message}; {skipped} trials already graded, {total} to run", highlight=False)

    def trial_done(self, record: TrialRecord) -> None:
        self.done += 1
        if not record.completed:
            self.failures += 1
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
            f"{verdict} ({self.failures} errored so far, {time.perf_counter() - self.t0:.1f}s elapsed)\n")

    def finish(self) -> None:
        pass
