"""Run a short command (a tool call's shell, the `command` executor's agent) in its own process
group, confined by the trial's sandbox; on timeout the whole group is killed."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from skillassay.executors import process_group
from skillassay.sandbox import SandboxSpec, confined


def run_in_group(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None,
                 sandbox: SandboxSpec | None = None, writable: Sequence[Path] = (),
                 readonly: Sequence[Path] = ()) -> tuple[int | None, str, str]:
    """Run argv in its own process group; on timeout kill the whole group and return the partial
    output with exit code None. With `sandbox`, argv runs confined to `cwd` and `writable`
    (`readonly` visible); without, as it always did. Shared by run_shell and `command`."""
    if sandbox is None:
        return _run(argv, cwd, timeout, env)
    if sandbox.kind == "bwrap":  # else bwrap's own "execvp: No such file" would read as the agent's failure
        _check_program(argv[0], cwd, (env if env is not None else os.environ).get("PATH"))
    with confined(sandbox, argv, cwd=cwd, writable=[cwd, *writable], readonly=readonly,
                  env=env if env is not None else os.environ) as wrapped:
        return _run(wrapped, cwd, timeout, env)


def _check_program(program: str, cwd: Path, path: str | None) -> None:
    """Raise FileNotFoundError, as Popen would unconfined, for a program that is not there."""
    if os.sep in program and not os.path.isabs(program):
        program = str(cwd / program)
    if shutil.which(program, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory (or not executable)", program)


def _run(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None) -> tuple[int | None, str, str]:
    """The one runner (process_group.run_process_group), the group killed at once when the
    time is up (a shell command has no events to flush), its stderr kept whole."""
    done = process_group.run_process_group(argv, cwd=cwd, env=env, timeout_seconds=timeout, grace_seconds=0,
                                           stderr_limit=None)
    return (None if done.timed_out else done.returncode), done.stdout, done.stderr
