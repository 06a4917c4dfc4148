"""Which agents a run measures (issue 37): the config's `agents` list or the repeatable
`--agent EXECUTOR[:MODEL]`, checked before anything runs. A name becomes a folder, so a flag's
agent gets a name derived from its model (or executor), slugified to the pattern the config's
names must match, and numbered -2, -3 when two would be the same."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillassay.errors import InputError
from skillassay.models.agents import AgentConfig
from skillassay.run.agent_checks import agent_problems

if TYPE_CHECKING:
    from skillassay.run.engine import RunRequest

MAX_NAME = 40


def slug(text: str) -> str:
    """A folder-safe agent name from a model or executor name (claude-haiku-4-5, qwen2.5:0.5b...)."""
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    out = re.sub(r"^[^a-z0-9]+", "", out)[:MAX_NAME].rstrip("-")
    return out or "agent"


def unique_names(bases: list[str]) -> list[str]:
    """Each base name, with -2, -3... on the second and later of one name (still within 40)."""
    taken: set[str] = set()
    out = []
    for base in bases:
        name, n = base, 1
        while name in taken:
            n += 1
            suffix = f"-{n}"
            name = base[:MAX_NAME - len(suffix)] + suffix
        taken.add(name)
        out.append(name)
    return out


def parse_agent_flags(values: list[str]) -> list[AgentConfig]:
    """`--agent EXECUTOR[:MODEL]` values as agents. The model may hold colons (qwen2.5:0.5b):
    only the first one splits."""
    from skillassay.executors import executor_names, unknown_executor

    parsed: list[tuple[str, str | None]] = []
    known = executor_names()
    for value in values:
        executor, _, model = value.partition(":")
        executor = executor.strip()
        if not executor:
            raise InputError.one("--agent", value, "expected EXECUTOR or EXECUTOR:MODEL (e.g. claude-code:claude-haiku-4-5)")
        if executor not in known:
            raise InputError.one("--agent", value, f"{executor!r}: {unknown_executor(executor)}")
        parsed.append((executor, model.strip() or None))
    names = unique_names([slug(model or executor) for executor, model in parsed])
    return [AgentConfig(name=name, executor=executor, model=model)
            for name, (executor, model) in zip(names, parsed, strict=True)]


def agents_for(flags: list[str], config_agents: list[AgentConfig] | None, config_path: Path | None
               ) -> list[AgentConfig]:
    """The agents this run measures: the flags' when given (they replace the config's), else
    the config's, checked again (a config passed by path was checked by preflight too)."""
    if flags:
        return parse_agent_flags(flags)
    if problems := agent_problems(config_agents, config_path or "config"):
        raise InputError(problems)
    return list(config_agents or [])


def agent_request(req: RunRequest, agent: AgentConfig) -> RunRequest:
    """The run as this agent makes it: its executor and model, its options over the run's."""
    return replace(req, executor=agent.executor, model=agent.model or req.model,
                   executor_options={**req.executor_options, **agent.options}, agents=[])


def run_agents(req: RunRequest) -> tuple[RunRequest, list[AgentConfig]]:
    """(the request to run, the agents of a matrix run). No agents, or one: ([the request, made
    as that agent's], []), a one-agent run exactly as before. Two or more: (req, agents). A
    config that does not load is left to the run's own checks, which name its problems."""
    from skillassay.models.config import BenchmarkConfig
    from skillassay.run.preflight import find_config
    from skillassay.store.jsonio import load_json_lenient

    cfg = find_config(req.skill_dir, req.config_path)
    config_agents = None
    if not req.agents and cfg is not None:
        data = load_json_lenient(cfg)
        try:
            config_agents = BenchmarkConfig.model_validate(data).agents if isinstance(data, dict) else None
        except ValueError:
            config_agents = None
    agents = agents_for(req.agents, config_agents, cfg)
    if len(agents) == 1:
        return agent_request(req, agents[0]), []
    return req, agents
