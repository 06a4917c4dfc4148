"""One writing command at a time per workspace: `run` (and `grade`) fail fast on a busy one.

Two `skillassay run`s on one workspace (a CI matrix, a second terminal) would both choose the
same iteration (or both start N+1) and execute the same trials into the same run folders: model
calls paid twice and two agents' outputs/ mixed in one run. So a command that writes an iteration
holds an exclusive inter-process lock on the workspace for its whole length, and a second one
fails at once with an input error (exit 2) naming the workspace and, when known, the holder,
rather than waiting behind a run that may take hours.

The lock is an OS lock (flock on Unix, through filelock) on `.skillassay-run.lock`: the kernel
drops it when its holder dies, so a killed run never leaves the workspace locked. Who holds it
(pid, host, command, start) goes in a side file, `.skillassay-run.holder.json`, not in the lock
file, which filelock may truncate when a contender opens it. Both names are dotted and are not
iteration-N folders, so nothing that lists a workspace (existing_iterations, charts, discover,
the viewer) sees them. history.json keeps its own short, blocking lock (history.py), taken inside
this one by `run`: it is a different file, so holding this lock never blocks it."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from skillassay.errors import InputError
from skillassay.store.jsonio import load_json_lenient

RUN_LOCK_FILE = ".skillassay-run.lock"  # stays after use on Unix: flock waiters must share one inode
HOLDER_FILE = ".skillassay-run.holder.json"


class WorkspaceLock:
    """Exclusive, non-blocking by default. Acquire once per command, never per trial; usable as a
    context manager or with acquire()/release() when the caller must clean up on refusal."""

    def __init__(self, workspace: Path, command: str, timeout: float = 0.0) -> None:
        self.workspace = workspace
        self.command = command
        self.timeout = timeout
        self._lock = FileLock(str(workspace / RUN_LOCK_FILE), timeout=timeout)

    def acquire(self) -> None:
        """Take the lock or raise InputError saying who has it; the workspace is created if new."""
        self.workspace.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise InputError.one(self.workspace, "", busy_message(self.workspace, self.timeout)) from None
        write_holder(self.workspace / HOLDER_FILE, self.command)

    def release(self) -> None:
        """Holder file first, while still locked, so it never describes the next holder's lock."""
        if not self._lock.is_locked:
            return
        try:
            with contextlib.suppress(OSError):  # informational only; the next holder overwrites it
                (self.workspace / HOLDER_FILE).unlink(missing_ok=True)
        finally:
            self._lock.release()

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def write_holder(path: Path, command: str) -> None:
    """Best effort: the lock works without it, it only makes the refusal message say who."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
            "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
    with contextlib.suppress(OSError):
        path.write_text(json.dumps(info) + "\n", encoding="utf-8")


def read_holder(workspace: Path) -> dict[str, object]:
    """The holder's record, or {} when missing or unreadable (it may be mid-write or stale)."""
    data = load_json_lenient(workspace / HOLDER_FILE)
    return data if isinstance(data, dict) else {}


def busy_message(workspace: Path, timeout: float) -> str:
    """Say who is using the workspace when the side file tells, and what to do about it."""
    holder = read_holder(workspace)
    command = holder.get("command") if isinstance(holder.get("command"), str) else "run or grade"
    details = []
    if isinstance(holder.get("pid"), int):
        host = holder.get("host")
        details.append(f"pid {holder['pid']}" + (f" on {host}" if isinstance(host, str) and host != socket.gethostname()
                                                  else ""))
    if isinstance(holder.get("started_at"), str):
        details.append(f"started {holder['started_at']}")
    who = f"another skillassay {command}" + (f" ({', '.join(details)})" if details else "")
    waited = f" (waited {timeout:g} s)" if timeout > 0 else ""
    return (f"{who} is using this workspace{waited}; wait for it to finish (or stop it) and retry, "
            f"or use another workspace (lock: {RUN_LOCK_FILE})")
