"""Every child an executor or a check starts runs in a process group of its own, known here.

Why a registry: agents spawn their own children (shells, MCP servers, node workers) in their
group, and the group is in a session of its own, so a terminal's Ctrl-C never reaches it. A run
that is told to stop (Ctrl-C, SIGTERM, SIGHUP: run/interrupt.py) must end them itself, or they
keep working, and spending, after the run is gone. So every group is registered while it runs,
and `end_all` signals every group still registered. Once a stop is requested, a group started
after the sweep is ended as soon as it is registered, so a trial thread that was just starting
its agent cannot slip past the stop.

The one way to end a group (`kill_group`): SIGTERM so the agent can flush its last events, then
SIGKILL for whatever ignores it after a grace period (0: SIGKILL at once)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

STOP_GRACE_SECONDS = 3.0  # how long a group asked to stop may take before it is killed

_live: dict[int, subprocess.Popen[Any]] = {}  # pgid -> its leader, while it runs
_lock = threading.RLock()  # re-entrant: end_all may run in a signal handler on a thread holding it
_stop = threading.Event()


def signal_group(pgid: int, sig: signal.Signals | int) -> bool:
    """True if the group still existed."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):  # gone, or taken over by a setuid child
        return False
    return True


def kill_group(proc: subprocess.Popen[Any], grace_seconds: float) -> None:
    """SIGTERM first so the child can flush its last events, SIGKILL whatever ignores it."""
    pgid = proc.pid  # start_new_session=True makes the child its own group leader
    if grace_seconds <= 0:
        signal_group(pgid, signal.SIGKILL)
        return
    if not signal_group(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None and not signal_group(pgid, 0):
            return
        time.sleep(0.05)
    signal_group(pgid, signal.SIGKILL)


@contextlib.contextmanager
def group(argv: list[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """Popen(argv) as the leader of a new session (so of a new group), registered while the
    block runs. After a stop was requested, the group is killed as soon as it exists: the caller
    sees a child that died at once, which is what a stopped trial is."""
    proc = subprocess.Popen(argv, start_new_session=True, **popen)
    with _lock:
        _live[proc.pid] = proc
    if _stop.is_set():
        signal_group(proc.pid, signal.SIGKILL)
    try:
        yield proc
    finally:
        with _lock:
            _live.pop(proc.pid, None)


def stop_requested() -> bool:
    return _stop.is_set()


def clear_stop() -> None:
    """A new run in this process (tests run many): no stop pending."""
    _stop.clear()


def live_groups() -> list[int]:
    with _lock:
        return list(_live)


def end_all(grace_seconds: float = STOP_GRACE_SECONDS) -> int:
    """Request a stop and end every registered group: SIGTERM now, SIGKILL after the grace
    period for any still there (a daemon thread waits it out, so this returns at once and is
    safe in a signal handler); grace 0 kills at once. Returns how many groups were signalled."""
    _stop.set()
    with _lock:
        groups = list(_live)
    sig = signal.SIGKILL if grace_seconds <= 0 else signal.SIGTERM
    signalled = [g for g in groups if signal_group(g, sig)]
    if signalled and grace_seconds > 0:
        def finish() -> None:
            deadline = time.monotonic() + grace_seconds
            while time.monotonic() < deadline and any(signal_group(g, 0) for g in signalled):
                time.sleep(0.05)
            for g in signalled:
                signal_group(g, signal.SIGKILL)
        threading.Thread(target=finish, daemon=True, name="skillassay-stop").start()
    return len(signalled)


__all__ = ["STOP_GRACE_SECONDS", "clear_stop", "end_all", "group", "kill_group", "live_groups", "signal_group",
           "stop_requested"]
