"""benchmark.json's `turns` section (ours, additive; issue 39): for a multi-turn eval set, the
with-skill and baseline pass rate of each turn's expectations with their intervals and the
paired difference, so a reader sees where in the conversation the skill helps."""

from __future__ import annotations

from pydantic import Field

from skillassay.models.base import SpecModel


class TurnArm(SpecModel):
    """One configuration on one turn: a trial passes the turn when every expectation of that
    turn passes; errored and undecided trials are left out, as for the suite's pass rate."""

    configuration: str = Field(description="The arm: with_skill, without_skill or old_skill.")
    passes: int = Field(ge=0, description="Trials that passed the turn, over the evals counted.")
    trials: int = Field(ge=0, description="Trials with a verdict on the turn.")
    pass_rate: float | None = Field(None, description="Mean of the per-eval rates (as the suite's pass rate).")
    interval: list[float] | None = Field(None, description=(
        "The pass rate's interval: the per-configuration method of analyze/rate_intervals.py for the reading "
        "named in `reading`; null with fewer than 2 evals."))


class TurnDifference(SpecModel):
    """With-skill minus baseline on the turn, paired by eval: the sign-flip test and its inversion
    (analyze/paired_intervals.py), so the interval holds 0 exactly when the test cannot confirm."""

    mean: float | None = Field(None, description="Mean over evals of with-skill minus baseline pass rate on the turn.")
    interval: list[float] | None = Field(None, description="The sign-flip test inverted: holds 0 exactly when p >= 0.05.")
    n_evals: int = Field(0, description="Evals paired on the turn.")
    p_value: float | None = Field(None, description="Two-sided p of the paired sign-flip test.")
    p_value_method: str | None = Field(None, description="How p_value was computed (exact or sampled sign flips).")
    explanation: str = Field("", description="The difference and its interval in words (why it is wide, when it is).")


class TurnStatistics(SpecModel):
    """One turn of the conversation: both arms' pass rates and their paired difference."""

    turn: int = Field(ge=1, description="The turn, 1-based: turn 1 is the eval's first user message.")
    n_evals: int = Field(ge=0, description="Evals with expectations on this turn and trials in both arms.")
    with_skill: TurnArm = Field(description="The with-skill arm on this turn.")
    baseline: TurnArm = Field(description="The baseline arm (no skill, or the previous version) on this turn.")
    difference: TurnDifference = Field(description="With-skill minus baseline, paired by eval.")


class TurnsSection(SpecModel):
    """benchmark.json's `turns`: present only for a multi-turn eval set."""

    schema_version: int = Field(1, description="Version of this section's shape.")
    reading: str = Field(description="population (evals like these) or these_evals, as `statistics`.")
    conf: float = Field(0.95, description="Confidence level of every interval here.")
    per_turn: list[TurnStatistics] = Field(default_factory=list, description="One entry per turn, in order.")
