"""Where a matrix iteration keeps each agent (issue 37): `iteration-N/agents/<name>/`, a complete
skill-creator iteration of its own, and the agents listed in the top `iteration.json`. A name
read from a file is checked against the agent-name pattern before any path is built from it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillassay.errors import InputError
from skillassay.models.agents import AGENT_NAME_PATTERN
from skillassay.store.jsonio import load_json_lenient
from skillassay.store.layout import ensure_inside

AGENTS_DIR = "agents"
_NAME = re.compile(AGENT_NAME_PATTERN)


def agent_dir(top: Path, name: str) -> Path:
    """The agent's folder; a name outside the pattern is refused (exit 2), never joined."""
    if not _NAME.match(name):
        raise InputError.one(top / "iteration.json", "agents", f"{name!r} is not a valid agent name")
    folder = top / AGENTS_DIR / name
    for link in (top / AGENTS_DIR, folder):  # a link would carry reads and writes out of the iteration
        if link.is_symlink():
            raise InputError.one(link, "", "is a symbolic link: an agent's folder must be a real folder inside "
                                           f"{top}")
    return ensure_inside(top, folder)


def recorded_agents(top: Path) -> list[dict[str, Any]] | None:
    """The agents of a matrix iteration as its iteration.json records them (name, executor,
    model, options_sha256, required), or None for a one-agent iteration. A malformed list is
    an error naming the file and field, not a guess."""
    record = load_json_lenient(top / "iteration.json")
    agents = record.get("agents") if isinstance(record, dict) else None
    if agents is None:
        return None
    where = top / "iteration.json"
    if not isinstance(agents, list) or not agents:
        raise InputError.one(where, "$.agents", "expected a list of the agents run")
    for i, agent in enumerate(agents):
        name = agent.get("name") if isinstance(agent, dict) else None
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError.one(where, f"$.agents[{i}].name", f"{name!r} is not a valid agent name")
    return agents


def is_matrix_iteration(top: Path) -> bool:
    return (top / AGENTS_DIR).is_dir() and recorded_agents(top) is not None
