"""comparison_previous.json: `compare`'s (and `run`'s) comparison of an iteration with the one
before. Not skill-creator's blind comparison (comparison-N.json, `Comparison`): its own kind,
so `validate` accepts the file the tool writes. Typed field by field for `skillassay schema`
and for the readers that walk it (the report, the gate); like benchmark.json's `statistics`
(models/statistics.py), it is checked where it is read and kept as read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillassay.models.statistics import GeometricRatio, Interval, PassRateDifference, Section


class Side(Section):
    path: str | None = None
    """The iteration folder (or benchmark.json) on this side."""
    iteration: int | None = None
    """Its iteration number."""
    found: str | None = None
    """How the previous iteration was found (given, beside the current one, the config's previous_benchmark)."""


class Counts(Section):
    passes: int | None = None
    """Trials that passed."""
    completed: int | None = None
    """Trials completed and graded."""
    pass_rate: float | None = None
    """passes / completed."""


class ComparedEval(Section):
    eval_id: int | str
    """The eval's id, the same in both iterations."""
    eval_name: str | None = None
    """The eval's name in the current iteration."""
    before: Counts | None = None
    """The previous iteration's trials of this eval (skill configuration)."""
    after: Counts | None = None
    """The current iteration's."""
    counts: str | None = None
    """Both as text, e.g. 3/3 -> 1/3."""
    raw_flip: str | None = Field(None, description="The plain PASS->FAIL / FAIL->PASS / unchanged flip.")
    p_regression: float | None = None
    """One-sided exact p-value of 'no worse than before'."""
    p_improvement: float | None = None
    """One-sided exact p-value of 'no better than before'."""
    p_regression_adjusted: float | None = None
    """p_regression adjusted over the evals (Benjamini-Hochberg)."""
    p_improvement_adjusted: float | None = None
    """p_improvement adjusted over the evals (Benjamini-Hochberg)."""
    label: str = Field(description="regressed, possible regression, improved, possible improvement or unchanged.")
    trials_per_arm_to_settle: int | None = None
    """Trials per arm at which this eval's call would likely settle."""
    additional_trials_per_arm: int | None = None
    """How many more trials per arm that is."""
    trials_per_arm_to_call: int | None = None
    """Trials per arm at which the change seen would likely be called."""
    additional_trials_per_arm_to_call: int | None = None
    """How many more trials per arm that is."""
    explanation: str | None = None
    """The call in a sentence."""


class UnmatchedEval(Section):
    eval_id: int | str | None = None
    """The eval's id."""
    in_: str | None = Field(None, alias="in", description="Which iteration has it: previous only or current only.")


class SuiteChange(Section):
    n_evals: int | None = None
    """Evals compared."""
    pass_rate_delta: PassRateDifference | None = None
    """Current minus previous pass rate, paired by eval."""
    token_ratio: GeometricRatio | None = None
    """Current over previous tokens per trial."""
    duration_ratio: GeometricRatio | None = None
    """Current over previous seconds per trial."""


class BaselineDrift(Section):
    configuration: str | None = None
    """The baseline configuration checked."""
    changed: list[int | str | None] | None = None
    """Evals whose baseline moved at the drift level: the skill cannot cause that (model or setup changed?)."""
    level: float | None = None
    """The level of that call: a false discovery rate over the evals compared (BH-adjusted p)."""
    possible: list[int | str | None] | None = None
    """Evals whose baseline may have moved (not called)."""


class DetectionLimit(Section):
    trials: int | None = None
    """Trials per arm of the comparison."""
    n_evals: int | None = None
    """Evals compared."""
    q: float | None = None
    """False-discovery level of the regression labels."""
    smallest_p: float | None = None
    """The smallest p-value one eval can reach at this many trials."""
    detectable: bool | None = None
    """Whether a lone regression can be called at all."""
    max_evals: int | None = None
    """The most evals among which a lone regression can still be called."""
    trials_needed: int | None = None
    """Trials per arm that would make a lone regression callable."""
    gate_trials_needed: int | None = None
    """Trials per arm at which the gate could fail on a lone regression."""
    text: str | None = None
    """All of it in words."""


class MetricChange(Section):
    current: float | None = None
    """The figure in the current iteration."""
    previous: float | None = None
    """In the previous one."""
    delta: float | None = None
    """current - previous."""
    relative_delta: float | None = None
    """delta / previous."""
    ratio: float | None = None
    """current / previous (paired by eval)."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval of the delta."""
    ratio_interval: Interval | None = Field(None, max_length=2)
    """95% interval of the ratio."""
    relative_interval: Interval | None = Field(None, max_length=2)
    """95% interval of the relative delta."""
    n_evals: int | None = None
    """Evals behind the figure."""
    p_value: float | None = None
    """p-value of 'no change'."""
    p_value_method: str | None = None
    """The test behind p_value."""
    significance_reachable: bool | None = None
    """False when the evals are too few for the test ever to reach 5%."""
    undefined_reason: str | None = None
    """Why there is no figure, when there is none."""
    current_unbounded: bool | None = None
    """Improvement ratio only: true when the current ratio is unbounded (its baseline passed
    nothing and the skill something); `current` is then null, as JSON has no infinity."""
    previous_unbounded: bool | None = None
    """Improvement ratio only: the same for the previous iteration's ratio."""
    method: str | None = None
    """How the interval was computed."""
    explanation: str | None = None
    """The change in a sentence."""


class IterationComparison(Section):
    schema_version: Literal[1]
    """Version of this file's shape."""
    kind: Literal["iteration_comparison"] = "iteration_comparison"
    """Always iteration_comparison (skill-creator's blind comparison is another file)."""
    current: Side = Field(description="The iteration compared: path and number.")
    previous: Side = Field(description="The iteration compared with: path, number, how it was found.")
    changed: list[str] | None = None
    """What changed between the two runs' fingerprints (skill, evals, settings, executor...)."""
    configuration: str | None = None
    """The configuration compared (the skill's)."""
    baseline_configuration: str | None = None
    """The baseline configuration, checked for drift."""
    q: float | None = None
    """False-discovery level of the per-eval labels."""
    seed: int | None = None
    """Seed of the permutation tests."""
    per_eval: list[ComparedEval]
    """Per eval, before and after, with its call."""
    raw_regressions: list[int | str | None] | None = None
    """Evals that went from passing to failing, before any test."""
    raw_improvements: list[int | str | None] | None = None
    """Evals that went from failing to passing, before any test."""
    regressed: list[int | str | None] | None = None
    """Evals called regressed."""
    possible_regressions: list[int | str | None] | None = None
    """Evals that may have regressed (not called)."""
    improved: list[int | str | None] | None = None
    """Evals called improved."""
    possible_improvements: list[int | str | None] | None = None
    """Evals that may have improved (not called)."""
    unmatched_evals: list[UnmatchedEval] | None = None
    """Evals in only one of the two iterations."""
    changed_evals: list[dict[str, object]] | None = None
    """Evals whose prompt, expectations or files changed under the same id: reported, never compared."""
    suite: SuiteChange | None = None
    """The suite's change, paired by eval."""
    baseline_drift: BaselineDrift | None = None
    """Whether the baseline itself moved."""
    detection_limit: DetectionLimit | None = None
    """What this design can detect."""
    metrics: dict[str, MetricChange] = Field(default_factory=dict, description="Suite figures, before and after.")
    notes: list[str] = Field(default_factory=list)
    """Notes for the reader."""
