"""benchmark.json: both shapes from the spec in one file. skill-creator's shape is
`metadata`/`runs`/`run_summary`/`notes`; the benchmark process's is `skill_name`/`iteration`/
`timestamp`/`summary`/`per_eval`/`thresholds_met`. Their keys do not collide, so we write both
and every part is optional on load (a file of either shape validates). Our statistics live in
`statistics`, beside the spec's fields, never instead of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Annotated, Any

from pydantic import Field, PrivateAttr, model_validator

from skillassay.models.adaptive import AdaptiveDesign
from skillassay.models.base import SpecModel
from skillassay.models.checked import CheckedAs
from skillassay.models.cost import Cost
from skillassay.models.runfiles import ExpectationResult
from skillassay.models.statistics import Statistics
from skillassay.models.turns import TurnsSection


class BenchmarkMetadata(SpecModel):
    skill_name: str
    skill_path: str | None = None
    executor_model: str | None = None
    analyzer_model: str | None = None
    timestamp: str | None = None
    evals_run: list[int | str] = Field(default_factory=list)
    runs_per_configuration: int | None = None


class RunResult(SpecModel):
    pass_rate: float
    passed: int
    failed: int | None = None
    total: int
    time_seconds: float | None = None
    tokens: int | None = None
    tool_calls: int | None = None
    errors: int = 0


class BenchmarkRun(SpecModel):
    eval_id: int | str
    eval_name: str | None = None
    configuration: str = Field(description="with_skill / without_skill (the viewer groups by this exact string).")
    run_number: int
    result: RunResult
    expectations: list[ExpectationResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Stat(SpecModel):
    mean: float | None
    stddev: float | None
    min: float | None = None
    max: float | None = None


class ConfigRunSummary(SpecModel):
    pass_rate: Stat = Field(description=(
        "skill-creator's figure, kept where it reads it: the mean over runs of each run's fraction of "
        "expectations passed (per expectation, not per trial; the same as expectation_pass_rate)."))
    expectation_pass_rate: Stat | None = Field(None, description=(
        "pass_rate under the name that says what it is (ours, additive): per expectation. The pass rate "
        "everywhere else (summary, per_eval, statistics, the gate) is per trial: a trial passes when all "
        "its expectations do."))
    time_seconds: Stat
    tokens: Stat
    ungraded_trials: int = Field(0, description="Completed trials with an expectation left without a verdict: "
                                 "in no pass rate above (ours, additive).")


class RunSummary(SpecModel):
    """Per configuration name (with_skill, without_skill, old_skill, ...) plus `delta`."""

    # Typing the extras (instead of re-validating them in a validator) keeps the configuration
    # name in error locations ($.run_summary.with_skill.tokens) and in the JSON Schema.
    __pydantic_extra__: dict[str, ConfigRunSummary] = Field(init=False)

    delta: dict[str, str] | None = Field(None, description=(
        "with_skill minus baseline means; delta.pass_rate is per expectation, as run_summary's pass_rate "
        "(also as delta.expectation_pass_rate)."))

    def configs(self) -> dict[str, ConfigRunSummary]:
        return dict(self.model_extra or {})


class ArmSummary(SpecModel):
    pass_rate: float | None
    pass_rate_std: float | None = None
    avg_tokens: float | None = None
    avg_duration_seconds: float | None = None
    ungraded_trials: int = Field(0, description="Completed trials with an expectation left without a verdict (no "
                                 "judge, the judge abstained or failed): excluded from the pass rate, never "
                                 "counted as failures; any makes the measurement invalid (ours, additive).")


class Summary(SpecModel):
    total_evals: int
    with_skill: ArmSummary
    baseline: ArmSummary
    improvement_ratio: float | None = None
    token_savings_ratio: float | None = Field(None, description=(
        "Average tokens with the skill / without (the spec's name): below 1 the skill saves tokens, above 1 it "
        "costs more."))
    time_savings_ratio: float | None = Field(None, description=(
        "Average duration with the skill / without (the spec's name): below 1 the skill saves time, above 1 it "
        "costs more."))


class PerEvalArm(SpecModel):
    pass_rate: float | None
    avg_tokens: float | None = None
    avg_duration_seconds: float | None = None
    trials_completed: int | None = None
    trials_requested: int | None = None
    ungraded_trials: int = Field(0, description="Completed trials left ungraded, not in trials_completed (ours).")


class PerEval(SpecModel):
    eval_id: int | str
    eval_name: str | None = None
    with_skill: PerEvalArm
    baseline: PerEvalArm
    trials: int


class TriggerGroup(SpecModel):
    """One eval's graded with-skill trials of one loading status (loaded, not loaded, unknown)."""

    trials: int
    passes: int
    pass_rate: float | None = None
    wilson: list[float] | None = Field(None, description="95% Wilson interval of pass_rate.")


class TriggerEval(SpecModel):
    eval_id: int | str
    eval_name: str | None = None
    loaded: TriggerGroup
    not_loaded: TriggerGroup
    unknown: TriggerGroup = Field(description="The executor could not tell: never counted as not loaded.")
    known_trials: int = Field(0, description="Completed with-skill trials (graded or not) whose loading is known.")
    loaded_trials: int = Field(0, description="Of known_trials, those that loaded the skill.")
    load_rate: float | None = Field(None, description="loaded_trials / known_trials.")
    load_rate_wilson: list[float] | None = None
    baseline_pass_rate: float | None = None
    rarely_loaded: bool = Field(False, description="load_rate below rarely_loaded_below (observed, not a test).")


class TriggerPooled(SpecModel):
    """Trials of one loading status pooled across evals; the interval is clustered by eval
    (t with evals - 1 degrees of freedom) and never narrower than the pooled Wilson interval."""

    trials: int
    passes: int
    n_evals: int
    pass_rate: float | None = None
    interval: list[float] | None = None


class TriggerOverall(SpecModel):
    loaded: TriggerPooled
    not_loaded: TriggerPooled
    unknown_trials: int = 0
    load_rate: float | None = None
    load_rate_interval: list[float] | None = None
    within_eval_difference: dict[str, Any] | None = Field(None, description=(
        "Mean over evals with both loaded and not-loaded trials of (pass rate loaded - not loaded): "
        "mean, se, interval, n_evals."))


class TriggerConditioned(SpecModel):
    """The with-skill arm split by metrics.json skill_triggered (ours, additive). Observational:
    the agent chose when to load the skill, so a difference between the groups is not the
    skill's causal effect."""

    schema_version: int = 1
    configuration: str
    baseline_configuration: str | None = None
    rarely_loaded_below: float = 0.5
    per_eval: list[TriggerEval] = Field(default_factory=list)
    overall: TriggerOverall
    rarely_loaded_evals: list[int | str] = Field(default_factory=list)


class Benchmark(SpecModel):
    # skill-creator shape
    metadata: BenchmarkMetadata | None = None
    runs: list[BenchmarkRun] | None = None
    run_summary: RunSummary | None = None
    notes: list[str] | None = None
    # benchmark-process shape
    skill_name: str | None = None
    iteration: int | None = None
    timestamp: str | None = None
    summary: Summary | None = None
    per_eval: list[PerEval] | None = None
    thresholds_met: dict[str, bool] | None = Field(None, description=(
        "Per threshold: true only when the gate passes it (its interval clears the threshold on a valid "
        "measurement); false when it fails or is undecided. A file without estimate_meets (an older one) holds the "
        "plain comparison here instead."))
    # ours
    estimate_meets: dict[str, bool] | None = Field(None, description=(
        "Per threshold: the plain comparison of the estimate with the threshold (a value exactly at it "
        "meets it), with no regard to uncertainty: what --point-estimate gates on."))
    statistics: Annotated[dict[str, Any], CheckedAs(Statistics, "statistics")] | None = Field(
        None, description="Intervals, tests and labels (schema_version inside); typed in models/statistics.py.")
    trigger_conditioned: TriggerConditioned | None = Field(None, description=(
        "The with-skill arm's pass rate when the agent loaded the skill vs when it did not (observational)."))
    cost: Annotated[dict[str, Any], CheckedAs(Cost, "cost")] | None = Field(None, description=(
        "What the trials cost in USD (ours, optional; analyze/cost.py): per configuration and per eval the total, "
        "the mean per trial with its interval and the cost per passing trial, and the skill's paired cost "
        "effect with the cost per additional success."))
    adaptive: Annotated[dict[str, Any], CheckedAs(AdaptiveDesign, "adaptive")] | None = Field(None, description=(
        "An adaptive run's design (ours, optional): the sequential method and its parameters, the trial "
        "limits, and per eval the trials used and why it stopped (schema_version inside)."))
    turns: TurnsSection | None = Field(None, description=(
        "A multi-turn eval set's pass rate per turn (ours, optional; analyze/turns.py): per turn the with-skill and "
        "baseline rate of that turn's expectations with intervals and their paired difference."))
    # Set by aggregation instead of `runs`: writes the per-run entries when the file is written
    # (aggregate.write_benchmark), from records or from where they were spooled, so 200,000
    # runs never exist as models or one giant string at once.
    _write_runs: Callable[[IO[str]], None] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _one_shape_at_least(self) -> Benchmark:
        if self.runs is None and self.summary is None and self.metadata is None:
            raise ValueError("expected skill-creator fields (metadata, runs, run_summary) or "
                             "benchmark-process fields (skill_name, summary, per_eval)")
        return self
