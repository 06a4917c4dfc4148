"""One agent of a matrix run (issue 37): an executor with its own model and options, under a
short name that becomes a folder (`iteration-N/agents/<name>/`), so the name is checked here."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skillassay.models.base import ClosedSpecModel

AGENT_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,39}$"


class AgentConfig(ClosedSpecModel):
    """`{"name": "haiku", "executor": "claude-code", "model": "claude-haiku-4-5", "options": {...}}`."""

    name: str = Field(pattern=AGENT_NAME_PATTERN,
                      description="A short name (lower case letters, digits, . _ -; at most 40): the agent's folder "
                                  "and its line in the report.")
    executor: str = Field(min_length=1, description="Executor plugin name, as --executor takes it.")
    model: str | None = Field(None, description="The executor's model (default: the run's --model or `model`).")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Executor options, as -o KEY=VALUE takes them; over the run's.")
    required: bool = Field(True, strict=True,
                           description="false: the agent is measured and reported, but its verdict does not "
                                       "gate the matrix.")
