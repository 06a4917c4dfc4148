"""What the stopping tests ask of a process by pid, from /proc (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped is not running)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def recorded_pids(folder: Path) -> list[int]:
    """The pids the tests' sleeping agents append to FOLDER/pids, one per line."""
    path = folder / "pids"
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def wait_for(condition: Callable[[], bool], timeout: float, proc: subprocess.Popen[str], what: str = "the run") -> None:
    """Until `condition()` holds; an AssertionError (with the process's stderr) if `proc` ends
    first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            raise AssertionError(f"{what} ended early ({proc.returncode}): {proc.communicate()[1]}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def interrupt_when(ready: Callable[[], bool], proc: subprocess.Popen[str], what: str = "the run",
                   presses: int = 1, timeout: float = 120) -> tuple[float, str]:
    """Once `ready()` holds, Ctrl-C as a terminal sends it (SIGINT to the whole group of `proc`),
    `presses` times 0.3 s apart; (seconds from the last press until `proc` ended, its stderr).
    The group is killed if anything here fails, so no agent outlives a failing test."""
    try:
        wait_for(ready, timeout, proc, what)
        for press in range(presses):
            if press:
                time.sleep(0.3)
            sent = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        return time.monotonic() - sent, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def sigint_default() -> None:
    """preexec_fn for a child that must stop on Ctrl-C: xdist's workers ignore SIGINT, a child
    inherits that, and a Python started with SIGINT ignored never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
