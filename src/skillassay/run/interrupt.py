"""Stopping a run from outside: Ctrl-C (SIGINT), SIGTERM and SIGHUP while trials run.

The first signal stops the run cleanly: no trial starts after it, the trials in flight are
ended (their agents' process groups get SIGTERM, then SIGKILL after a grace period:
executors/process_group.py), what finished is aggregated into benchmark.json, and the command
exits 128 + the signal's number (130 for Ctrl-C) saying how to resume. A trial that was running
when the signal came is not recorded (no grading.json), so it runs again on resume. A second
signal ends the process at once: every group is killed and nothing more is written by the run.

Why handlers instead of Python's KeyboardInterrupt: the trials run in worker threads, which a
KeyboardInterrupt never reaches, and their agents run in sessions of their own, which a
terminal's Ctrl-C never reaches; and SIGTERM or SIGHUP would otherwise end this process with its
agents still running (and spending). Installed only while trials run, and only from the main
thread (Python's rule); elsewhere the defaults apply."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from skillassay.executors.process_group import STOP_GRACE_SECONDS, clear_stop, end_all, stop_requested

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long the run waits for the trials in flight after a stop: their groups' grace period and a
# little more. A trial still running then (an in-process call that cannot be killed) is left.
STOP_WAIT_SECONDS = STOP_GRACE_SECONDS + 2.0


def signal_name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class RunInterrupted(Exception):  # noqa: N818 - what happened, not an error in skillassay
    """The run stopped on a signal; what finished is on disk (and aggregated, if anything did)."""

    def __init__(self, signum: int, iteration_dir: Path, finished: int, left: int, aggregated: bool) -> None:
        self.signum, self.iteration_dir = signum, iteration_dir
        self.finished, self.left, self.aggregated = finished, left, aggregated
        super().__init__(self.message())

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def message(self) -> str:
        kept = (f"{self.finished} finished trials are kept and aggregated in {self.iteration_dir / 'benchmark.json'}"
                if self.aggregated else "no trial had finished, so nothing was aggregated")
        return (f"interrupted ({signal_name(self.signum)}): {kept}; {self.left} trials did not run or were "
                "stopped. Run the same command again to resume this iteration: finished trials are not run again")


class StopSignals:
    """The handlers, for the length of a `with` block (the trial phase). `received` is the first
    signal's number, or None."""

    def __init__(self, on_stop: Callable[[], object] | None = None,
                 kept: str = "finished trials are kept and aggregated") -> None:
        self.received: int | None = None
        self.on_stop = on_stop  # ends agents this process cannot signal (a Ray backend's), in a thread
        self.kept = kept  # what the first signal's line says becomes of the finished work
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        clear_stop()
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                with contextlib.suppress(ValueError, OSError):
                    self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        clear_stop()  # the stop was this run's: process groups started later (another command in-process) run

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        """Runs in the main thread between two bytecodes: it only signals processes and writes
        one line with os.write (no lock a print might hold)."""
        if self.received is not None:
            end_all(0)
            _say(f"\n{signal_name(signum)} again: stopped at once; finished work is kept, nothing more was "
                 "written. Run the same command again to resume.\n")
            os._exit(128 + self.received)
        self.received = signum
        ended = end_all(STOP_GRACE_SECONDS)
        if self.on_stop is not None:
            threading.Thread(target=self.on_stop, daemon=True, name="skillassay-stop-backend").start()
        _say(f"\n{signal_name(signum)}: stopping the run: no new trial starts, {ended} running agent(s) told to "
             f"stop (killed after {STOP_GRACE_SECONDS:g}s); {self.kept}. "
             f"{signal_name(signum)} again to quit at once.\n")


def _say(text: str) -> None:
    with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
        os.write(2, text.encode("utf-8", "replace"))


__all__ = ["STOP_SIGNALS", "STOP_WAIT_SECONDS", "RunInterrupted", "StopSignals", "signal_name", "stop_requested"]
