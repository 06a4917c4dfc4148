"""Run an agent CLI as a child process group, shared by the CLI-driving executors.

Agent CLIs spawn their own children (shells, MCP servers, node workers). Killing only the
direct child on timeout would leave those running and holding the stdout pipe open, so the
trial would never finish: every run therefore gets its own process group and the whole
group is terminated (SIGTERM, then SIGKILL after a grace period). What was printed before a
kill is kept, because a partial transcript is the only evidence of why a trial stalled."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillassay.executors import process_group
from skillassay.executors.process_group import kill_group
from skillassay.spec.skill import Skill
from skillassay.store.layout import checked_child, copy_skill_tree, remove_tree
from skillassay.store.redact import redact as _redact

_STDERR_LIMIT = 200_000


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


def redact(text: str, env: Mapping[str, str]) -> str:
    """Mask API keys and secret-looking env values (names with KEY, TOKEN, SECRET, PASSWORD,
    AUTH) before CLI output reaches a transcript or an error message, which are kept and
    shared. Delegates to the project-wide rules so every writer masks the same things."""
    return _redact(text, env)


def events_from_lines(lines: list[str], env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Redacted JSON events in emitted order. A line that is not a JSON object (a CLI warning
    printed to stdout, a line cut short by a kill) is kept as a `_raw_line` event so the
    transcript never silently loses output."""
    events: list[dict[str, Any]] = []
    for line in lines:
        clean = redact(line, env).strip()
        if not clean:
            continue
        try:
            event = json.loads(clean)
        except json.JSONDecodeError:
            event = None
        events.append(event if isinstance(event, dict) else {"type": "_raw_line", "text": clean})
    return events


def tail(text: str, limit: int = 2000) -> str:
    """The end of a CLI's stderr is where its fatal error is; the start is banners."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


@contextlib.contextmanager
def installed_skill(skill: Skill | None, skills_root: Path) -> Iterator[Path | None]:
    """Copy the skill where the agent discovers project skills, and take it away afterwards.

    Removal matters: the engine diffs the work dir to find files the agent created, and a
    skill left behind would count as output of the with-skill arm only."""
    if skill is None:
        yield None
        return
    # The name is checked when the skill is loaded; child() asserts it again here, because the
    # folder made from it is deleted afterwards and an absolute name would delete the user's.
    dest = checked_child(skills_root, skill.name)
    copy_skill_tree(skill.path, dest, without_evals=True)  # the agent must not see the answers
    try:
        yield dest
    finally:
        with contextlib.suppress(OSError):
            remove_tree(dest, skills_root)
        _prune_empty(skills_root, stop_after=2)


@contextlib.contextmanager
def isolated_workdir(workdir: Path, prefix: str) -> Iterator[Path]:
    """Run the agent in a private copy of the work dir under the system temp dir, then mirror
    the result back (deletions included; copy2 keeps mtimes, so the engine's before/after diff
    still sees only what the agent changed).

    Why: Claude Code loads `.claude/skills` from every parent of its cwd, and Codex loads
    `.agents/skills` up to the git root. A workspace kept inside a project that holds the skill
    under test would hand that skill to the baseline arm too, silently voiding the comparison.
    Under the temp dir there are no such parents."""
    holder = Path(tempfile.mkdtemp(prefix=prefix))
    run_dir = holder / "work"
    try:
        shutil.copytree(workdir, run_dir, symlinks=True)
        yield run_dir
        _mirror(run_dir, workdir)
    finally:
        with contextlib.suppress(OSError):
            remove_tree(holder, Path(tempfile.gettempdir()))


def _mirror(src: Path, dest: Path) -> None:
    for child in list(dest.iterdir()):
        if child.is_dir() and not child.is_symlink():
            remove_tree(child, dest)
        else:
            child.unlink()
    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)


def _prune_empty(path: Path, stop_after: int) -> None:
    """Remove `path` and up to `stop_after - 1` parents while they are empty (.claude/skills)."""
    for _ in range(stop_after):
        try:
            path.rmdir()
        except OSError:
            return
        path = path.parent


def _pump_stdout(proc: subprocess.Popen, sink: list[str],
                 on_line: Callable[[str], None] | None) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.rstrip("\r\n")
        sink.append(line)
        if on_line is not None:
            on_line(line)


def _pump_stderr(proc: subprocess.Popen, sink: list[str]) -> None:
    assert proc.stderr is not None
    size = 0
    for chunk in proc.stderr:
        if size < _STDERR_LIMIT:
            sink.append(chunk)
            size += len(chunk)


def run_process_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    on_line: Callable[[str], None] | None = None,
    grace_seconds: float = 3.0,
    stop_when: Callable[[str], bool] | None = None,
    stop_poll: Callable[[], bool] | None = None,
) -> ProcessOutcome:
    """Run argv to completion or timeout; never raises for the child's own failure.
    `stop_when(line)` returning True for a stdout line ends the run there (the group is
    killed, what was printed kept): a trigger run is decided once the agent loads the skill.
    `stop_poll()`, asked every 0.1 s, ends it the same way (a provider that never answers).

    Raises FileNotFoundError when argv[0] does not exist (a setup problem, not a trial result).
    """
    start = time.monotonic()
    with process_group.group(
        list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        errors="replace", bufsize=1,
    ) as proc:
        return _run_group(proc, start, timeout_seconds, on_line, grace_seconds, stop_when, stop_poll)


def _run_group(proc: subprocess.Popen, start: float, timeout_seconds: float,
               on_line: Callable[[str], None] | None, grace_seconds: float,
               stop_when: Callable[[str], bool] | None, stop_poll: Callable[[], bool] | None) -> ProcessOutcome:
    out: list[str] = []
    err: list[str] = []
    stop = threading.Event()

    def watch(line: str) -> None:
        if on_line is not None:
            on_line(line)
        if stop_when is not None and not stop.is_set() and stop_when(line):
            stop.set()

    readers = [threading.Thread(target=_pump_stdout, args=(proc, out, watch), daemon=True),
               threading.Thread(target=_pump_stderr, args=(proc, err), daemon=True)]
    for t in readers:
        t.start()
    timed_out = False
    deadline = start + timeout_seconds
    try:
        while True:
            try:
                watched = stop_when is not None or stop_poll is not None
                proc.wait(timeout=min(0.1, max(deadline - time.monotonic(), 0.001)) if watched else timeout_seconds)
                break
            except subprocess.TimeoutExpired:
                if stop.is_set() or (stop_poll is not None and stop_poll()):
                    stop.set()
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
    finally:
        # Also on normal exit: stray grandchildren must not outlive the trial.
        kill_group(proc, grace_seconds)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_seconds)
    for t in readers:
        t.join(timeout=grace_seconds)
    return ProcessOutcome(
        stdout_lines=out, stderr="".join(err), returncode=proc.returncode,
        timed_out=timed_out, duration_ms=int((time.monotonic() - start) * 1000), pid=proc.pid,
        stopped_early=stop.is_set() and not timed_out,
    )


__all__ = ["ProcessOutcome", "events_from_lines", "installed_skill", "isolated_workdir",
           "kill_group", "redact", "run_process_group", "tail"]
