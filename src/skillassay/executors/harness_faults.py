"""A broken tool is an error, not a result: a trial whose agent could not run a single shell
command, for a reason that lies in the harness and not in the task (the sandbox helper
missing, bubblewrap failing to start, a sandbox refusing to run anything), measured nothing
about the skill. Recorded as "ok" it would pass or fail on what the model guessed without its
tools, and a with-skill arm that never managed to read the skill would count as a miss.

Only messages that name the harness count (bwrap's own errors, Codex's sandbox helper,
landlock/seccomp set-up, Claude Code's refusal of a tool it was not granted): a command the
task made fail ("Permission denied" writing /etc, a missing file) is a result and stays one."""

from __future__ import annotations

import re
from collections.abc import Sequence

_FAULT = re.compile(
    r"^.*(?:\bbwrap: |codex-linux-sandbox|Refusing to create helper binaries|could not create PATH aliases"
    r"|landlock|seccomp|sandbox (?:helper|initiali[sz]ation) (?:failed|missing|not found)"
    # Claude Code refusing a tool the harness did not grant (its permission mode, not the task)
    r"|requested permissions to use \w+, but you haven't granted it|permission to use \w+ (?:has been|was) denied"
    r").*$",
    re.IGNORECASE | re.MULTILINE)
PREFIX = "the agent's tools were broken by the harness, not by the task"


def fault_line(text: str) -> str | None:
    """The first line of `text` that names a harness failure, trimmed."""
    found = _FAULT.search(text or "")
    return found.group(0).strip()[:300] if found else None


def all_commands_broken(commands: Sequence[tuple[bool, str]]) -> str | None:
    """The cause when every shell command of the trial (`(failed, output)` each, at least one)
    failed with a harness message; None when any ran, or failed for the task's own reasons."""
    if not commands or not all(failed for failed, _ in commands):
        return None
    causes = [fault_line(output) for _, output in commands]
    if any(cause is None for cause in causes):
        return None
    return f"all {len(commands)} shell commands failed: {causes[0]}"


def broken_tools_error(cause: str) -> str:
    """The trial's error text: one prefix, so every such trial reads (and groups) alike."""
    return f"{PREFIX}: {cause}"


__all__ = ["PREFIX", "all_commands_broken", "broken_tools_error", "fault_line"]
