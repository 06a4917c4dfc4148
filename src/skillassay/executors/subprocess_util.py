"""What the CLI-driving executors share around running an agent: its output as redacted events,
the skill installed where the agent finds it, a private work dir. The child itself runs through
the one process-group runner, process_group.run_process_group (re-exported here).

Agent CLIs spawn their own children (shells, MCP servers, node workers). Killing only the
direct child on timeout would leave those running and holding the stdout pipe open, so the
trial would never finish: every run therefore gets its own process group and the whole
group is terminated (SIGTERM, then SIGKILL after a grace period)."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from skillassay.executors.process_group import ProcessOutcome, run_process_group
from skillassay.spec.skill import Skill
from skillassay.store.layout import checked_child, copy_skill_tree, remove_tree
from skillassay.store.redact import redact as _redact


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


__all__ = ["ProcessOutcome", "events_from_lines", "installed_skill", "isolated_workdir",
           "redact", "run_process_group", "tail"]
