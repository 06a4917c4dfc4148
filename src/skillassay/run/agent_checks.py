"""The config's `agents` list checked for what `run` would refuse (issue 37), shared by
preflight (validate, and every run's inputs) and run/agents.py."""

from __future__ import annotations

import re
from pathlib import Path

from skillassay.errors import Problem
from skillassay.models.agents import AGENT_NAME_PATTERN, AgentConfig

_NAME = re.compile(AGENT_NAME_PATTERN)


def agent_problems(agents: list[AgentConfig] | None, path: Path | str) -> list[Problem]:
    """What the config's `agents` list holds that `run` would refuse: a name used twice (two
    agents in one folder), an executor that is not installed."""
    from skillassay.executors import executor_names, unknown_executor

    problems: list[Problem] = []
    seen: dict[str, int] = {}
    known = executor_names()
    for i, agent in enumerate(agents or []):
        if not _NAME.match(agent.name):  # the model checks it too; a path is never built from it unchecked
            problems.append(Problem(str(path), f"$.agents[{i}].name", f"{agent.name!r} is not a valid agent name"))
        elif agent.name in seen:
            problems.append(Problem(str(path), f"$.agents[{i}].name",
                                    f"{agent.name!r} is already the name of $.agents[{seen[agent.name]}]: "
                                    "each agent needs its own name (it is its folder)"))
        else:
            seen[agent.name] = i
        if agent.executor not in known:
            problems.append(Problem(str(path), f"$.agents[{i}].executor",
                                    f"{agent.executor!r}: {unknown_executor(agent.executor)}"))
    return problems
