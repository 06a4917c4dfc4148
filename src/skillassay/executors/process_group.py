"""Every child an executor or a check starts runs in a process group of its own, known here.

Why a registry: agents spawn their own children (shells, MCP servers, node workers) in their
group, and the group is in a session of its own, so a terminal's Ctrl-C never reaches it. A run
that is told to stop (Ctrl-C, SIGTERM, SIGHUP: run/interrupt.py) must end them itself, or they
keep working, and spending, after the run is gone. So every group is registered while it runs,
and `end_all` signals every group still registered. Once a stop is requested, a group started
after the sweep is ended as soon as it is registered, so a trial thread that was just starting
its agent cannot slip past the stop.

The one way to end a group (`kill_group`): SIGTERM so the agent can flush its last events, then
SIGKILL for whatever ignores it after a grace period (0: SIGKILL at once). The one way to run a
child to its end (`run_process_group`): every agent CLI, shell tool call, `command` agent and
`command`/`python` check goes through it (executors/group_run.py adds the sandbox)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

STOP_GRACE_SECONDS = 3.0  # how long a group asked to stop may take before it is killed
STDERR_LIMIT = 200_000  # characters of an agent's stderr kept (its end says why it failed)
DRAIN_SECONDS = 5.0  # how long output is still read after a SIGKILL (a descendant may hold the pipes)

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


@dataclass
class ProcessOutcome:
    """What a finished (or killed) child left behind."""

    stdout_lines: list[str] = field(default_factory=list)
    stderr: str = ""
    returncode: int | None = None
    timed_out: bool = False
    duration_ms: int = 0
    pid: int | None = None  # also the process group id
    stopped_early: bool = False  # ended by the caller's stop_when, not by the CLI itself
    stdout: str = ""  # exactly as printed (stdout_lines are its lines without their endings)


def run_process_group(
    argv: Sequence[str],
    *,
    cwd: os.PathLike[str] | str,
    env: Mapping[str, str] | None = None,
    timeout_seconds: float,
    on_line: Callable[[str], None] | None = None,
    grace_seconds: float = STOP_GRACE_SECONDS,
    stop_when: Callable[[str], bool] | None = None,
    stop_poll: Callable[[], bool] | None = None,
    stderr_limit: int | None = STDERR_LIMIT,
) -> ProcessOutcome:
    """Run argv in a group of its own to completion or timeout, reading its output as it comes;
    never raises for the child's own failure. The whole group is ended afterwards (kill_group
    with `grace_seconds`), on a normal exit too: stray grandchildren must not outlive the run.
    What was printed before a kill is kept: a partial transcript is the only evidence of why a
    trial stalled. `stop_when(line)` True for a stdout line ends the run there (a trigger run
    is decided once the agent loads the skill); `stop_poll()`, asked every 0.1 s, the same way.

    Raises FileNotFoundError when argv[0] does not exist (a setup problem, not a trial result)."""
    start = time.monotonic()
    with group(list(argv), cwd=cwd, env=dict(os.environ if env is None else env), stdin=subprocess.DEVNULL,
               stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        return _run_group(proc, start, timeout_seconds, on_line, grace_seconds, stop_when, stop_poll, stderr_limit)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _pump_stdout(stream: IO[bytes], sink: list[str], on_line: Callable[[str], None]) -> None:
    for raw in stream:  # bytes up to b"\n": a UTF-8 character never spans one
        line = _decode(raw)
        sink.append(line)
        on_line(line.rstrip("\r\n"))


def _pump_stderr(stream: IO[bytes], sink: list[bytes], limit: int | None) -> None:
    size = 0
    for chunk in stream:
        if limit is None or size < limit:
            sink.append(chunk)
            size += len(chunk)


def _run_group(proc: subprocess.Popen[bytes], start: float, timeout_seconds: float,
               on_line: Callable[[str], None] | None, grace_seconds: float, stop_when: Callable[[str], bool] | None,
               stop_poll: Callable[[], bool] | None, stderr_limit: int | None) -> ProcessOutcome:
    out: list[str] = []
    err: list[bytes] = []
    stop = threading.Event()

    def watch(line: str) -> None:
        if on_line is not None:
            on_line(line)
        if stop_when is not None and not stop.is_set() and stop_when(line):
            stop.set()

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=_pump_stdout, args=(proc.stdout, out, watch), daemon=True),
               threading.Thread(target=_pump_stderr, args=(proc.stderr, err, stderr_limit), daemon=True)]
    for t in readers:
        t.start()
    timed_out = False
    deadline = start + timeout_seconds
    watched = stop_when is not None or stop_poll is not None
    try:
        while True:
            try:
                proc.wait(timeout=min(0.1, max(deadline - time.monotonic(), 0.001)) if watched else timeout_seconds)
                break
            except subprocess.TimeoutExpired:
                if stop.is_set() or (stop_poll is not None and stop_poll()):
                    stop.set()
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
    finally:  # also on a normal exit, and on KeyboardInterrupt: leave nothing of it running
        kill_group(proc, grace_seconds)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_seconds if grace_seconds > 0 else DRAIN_SECONDS)
    for t in readers:
        t.join(timeout=grace_seconds if grace_seconds > 0 else DRAIN_SECONDS)
    stderr = _decode(b"".join(err))  # past the limit: the chunks up to it, whole
    return ProcessOutcome(
        stdout_lines=[line.rstrip("\r\n") for line in out], stderr=stderr,
        returncode=proc.returncode, timed_out=timed_out, duration_ms=int((time.monotonic() - start) * 1000),
        pid=proc.pid, stopped_early=stop.is_set() and not timed_out, stdout="".join(out),
    )


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


__all__ = ["STOP_GRACE_SECONDS", "ProcessOutcome", "clear_stop", "end_all", "group", "kill_group", "live_groups",
           "run_process_group", "signal_group", "stop_requested"]
