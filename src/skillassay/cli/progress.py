"""Progress display for `run` (a rich bar on a terminal, plain log lines otherwise: CI logs)
and for `aggregate` (a bar on a terminal, nothing otherwise)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from skillassay.run.engine import Progress as EngineProgress
from skillassay.store.records import TrialRecord


class RichProgress(EngineProgress):
    def __init__(self, console: Console) -> None:
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
        node = self.node_of(record.run_dir) if self.node_of else None
        self.console.print(
            f"[{self.done}/{self.total}] eval {record.eval_id} {record.configuration} run-{record.run_number}"
            f"{f' on {node}' if node else ''}: "
            f"{verdict} ({self.failures} errored so far, {time.perf_counter() - self.t0:.1f}s elapsed)",
            highlight=False)

    def finish(self) -> None:
        pass


@contextmanager
def count_bar(console: Console, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """An update(done, total) callback drawing a bar that vanishes when done; None when the
    console is not a terminal, so logs only get the command's result lines."""
    if not console.is_terminal:
        yield None
        return
    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
