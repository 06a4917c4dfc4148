"""benchmark.json's `turns` section (ours, additive; issue 39): for a multi-turn eval set, the
with-skill and baseline pass rate of each turn's expectations with their intervals and the
paired difference, so a reader sees where in the conversation the skill helps."""

from __future__ import annotations

from pydantic import Field

from skillassay.models.base import SpecModel


class TurnArm(SpecModel):
    """One configuration on one turn: a trial passes the turn when every expectation of that
    turn passes; errored and undecided trials are left out, as for the suite's pass rate."""

    configuration: str
    passes: int = Field(ge=0, description="Trials that passed the turn, over the evals counted.")
    trials: int = Field(ge=0, description="Trials with a verdict on the turn.")
    pass_rate: float | None = Field(None, description="Mean of the per-eval rates (as the suite's pass rate).")
    interval: list[float] | None = Field(None, description=(
        "The pass rate's interval: the per-configuration method of analyze/rate_intervals.py for the reading "
        "named in `reading`; null with fewer than 2 evals."))


class TurnDifference(SpecModel):
    """With-skill minus baseline on the turn, paired by eval: the sign-flip test and its inversion
    (analyze/paired_intervals.py), so the interval holds 0 exactly when the test cannot confirm."""

    mean: float | None = None
    interval: list[float] | None = None
    n_evals: int = 0
    p_value: float | None = None
    p_value_method: str | None = None
    explanation: str = ""


class TurnStatistics(SpecModel):
    turn: int = Field(ge=1)
    n_evals: int = Field(ge=0, description="Evals with expectations on this turn and trials in both arms.")
    with_skill: TurnArm
    baseline: TurnArm
    difference: TurnDifference


class TurnsSection(SpecModel):
    schema_version: int = 1
    reading: str = Field(description="population (evals like these) or these_evals, as `statistics`.")
    conf: float = 0.95
    per_turn: list[TurnStatistics] = Field(default_factory=list)
