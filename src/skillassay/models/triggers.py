"""Trigger evals: the query set the user writes (skill-creator's trigger_evals.json), and the
files `skillassay triggers` and `optimize-description` write (triggers.json,
description_history.json). Ours, so versioned with `schema_version`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, RootModel, StrictBool, StrictStr, field_validator

from skillassay.models.base import ClosedSpecModel, SpecModel

TRIGGERS_SCHEMA_VERSION = 1


class TriggerQuery(ClosedSpecModel):
    """One query of skill-creator's trigger eval set."""

    query: StrictStr = Field(description="What the user says, exactly as the agent receives it.")
    should_trigger: StrictBool = Field(description="Whether this skill ought to be loaded for it.")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class TriggerEvalSet(RootModel[list[TriggerQuery]]):
    """The file is a bare JSON list, as skill-creator writes it."""

    @field_validator("root")
    @classmethod
    def _not_empty(cls, value: list[TriggerQuery]) -> list[TriggerQuery]:
        if not value:
            raise ValueError("needs at least one query")
        return value


Interval = list[float]


class Rate(SpecModel):
    """A proportion with its 95% interval; `value` None when nothing was measured."""

    value: float | None = Field(description="The point estimate.")
    interval: Interval | None = Field(None, description="95% interval [low, high].")
    numerator: int = Field(description="Runs counted in the numerator.")
    denominator: int = Field(description="Runs counted in the denominator.")
    method: str = Field("", description="How the interval was computed.")


class TriggerRun(SpecModel):
    """One run of one query: what the agent loaded (from its transcript)."""

    run: int = Field(description="Run number, 1..K.")
    seed: int
    status: Literal["ok", "error", "timeout"]
    error: str | None = None
    loaded: list[str] = Field(default_factory=list, description="Skills loaded, in the order first loaded.")
    triggered: bool | None = Field(None, description="This skill loaded; None when the run failed.")
    duration_ms: int | None = None
    tokens: int | None = None
    record: str = Field(description="The run's record (with its transcript), relative to triggers.json.")


class QueryResult(SpecModel):
    index: int = Field(description="Position of the query in the eval set (0-based).")
    query: str
    should_trigger: bool
    runs: list[TriggerRun]
    trigger_rate: Rate = Field(description="Completed runs that loaded this skill; Wilson interval.")
    other_skills_fired: dict[str, int] = Field(default_factory=dict,
                                               description="Other installed skills loaded, runs per skill.")
    outcome: Literal["ok", "miss", "false_trigger", "unmeasured"] = Field(
        description="miss: should trigger, fired in under half its runs; false_trigger: should not, fired in half or more.")


class TriggerGate(SpecModel):
    status: str
    exit_code: int
    headline: str
    thresholds: list[dict] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class TriggerReport(SpecModel):
    """triggers.json: does the description make the agent load the skill?"""

    schema_version: int = TRIGGERS_SCHEMA_VERSION
    skill_name: str
    description: str = Field(description="The description measured (frontmatter of SKILL.md).")
    queries_path: str
    executor: dict = Field(description="The executor's identity (name, model, sampling, options).")
    runs_per_query: int
    seed: int
    other_skills: list[str] = Field(default_factory=list, description="Skills installed beside it (--with-skills).")
    generated_at: str
    recall: Rate = Field(description="Should-trigger runs that loaded the skill (clustered by query).")
    false_trigger_rate: Rate = Field(description="Should-not-trigger runs that loaded the skill.")
    precision: Rate = Field(description="Runs that loaded the skill for a query that should trigger, of all that loaded it.")
    accuracy: Rate = Field(description="Runs whose decision matched should_trigger.")
    runs_completed: int
    runs_failed: int
    queries: list[QueryResult]
    misses: list[int] = Field(default_factory=list, description="Indexes of queries missed.")
    false_triggers: list[int] = Field(default_factory=list, description="Indexes of queries falsely triggered.")
    shadowed_by: dict[str, int] = Field(default_factory=dict,
                                        description="On should-trigger runs where this skill did not load: which other skill did, and how often.")
    gate: TriggerGate | None = None
    agents: list[AgentTriggers] | None = Field(
        None, description="`triggers --agent` with two or more agents: each agent's figures and gate (its own "
                          "triggers.json under agents/<name>/). The figures above are then pooled over the agents "
                          "(each query's runs on every agent), and `gate` is the agents' gates together.")


class AgentTriggers(SpecModel):
    """One agent's trigger figures in a triggers.json over several agents."""

    name: str
    executor: dict = Field(description="The agent's executor identity (name, model, options).")
    recall: Rate
    false_trigger_rate: Rate
    precision: Rate
    accuracy: Rate
    runs_completed: int
    runs_failed: int
    misses: list[int] = Field(default_factory=list)
    false_triggers: list[int] = Field(default_factory=list)
    gate: TriggerGate | None = None
    report: str = Field(description="Its own triggers.json, relative to this file.")


class SplitScore(SpecModel):
    accuracy: float | None
    recall: float | None
    false_trigger_rate: float | None
    per_query: dict[str, float] = Field(default_factory=dict, description="Query index -> accuracy rate of that query.")


class DescriptionRound(SpecModel):
    round: int = Field(description="0 is the description the skill started with.")
    description: str
    status: Literal["current", "accepted", "rejected", "invalid"]
    reason: str
    train: SplitScore | None = None
    test: SplitScore | None = None
    test_difference: float | None = Field(None, description="Mean per-query accuracy difference vs the incumbent (test split).")
    p_value: float | None = Field(None, description="One-sided exact sign-flip p over test queries.")


class DescriptionHistory(SpecModel):
    """description_history.json: every round of optimize-description."""

    schema_version: int = TRIGGERS_SCHEMA_VERSION
    skill_name: str
    seed: int
    proposer: str
    alpha: float = Field(description="Family-wise level; each round is tested at alpha / rounds.")
    train: list[int] = Field(description="Query indexes of the train split.")
    test: list[int] = Field(description="Query indexes of the test split.")
    rounds: list[DescriptionRound]
    best_description: str
    changed: bool
    applied: bool = False


TriggerReport.model_rebuild()
