"""benchmark.json's `statistics` section, typed: what each figure is, field by field, for
`skillassay schema` and for readers in other languages. The section is still built and read as
plain data (analyze/statistics.build_statistics), so the models check it where it is read (a
hand-edited or damaged value of the wrong kind is an input error naming the field) and
describe it; they never rewrite it, which keeps benchmark.json byte-identical.

Every field is optional (a file from an older release lacks the newer ones) and unknown keys
are kept (a newer release may add figures): additive, like the spec's own shapes. The method
behind each interval is in docs/statistics.md."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from skillassay.models.base import SpecModel

Interval = list[float | None]  # [low, high]; null for an end that is not bounded or not computable


class Section(SpecModel):
    """Strict types (a number written as a string is named, not coerced: the data is kept as
    read, so a coerced copy would not be what the readers see); unknown keys allowed."""

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True, defer_build=True)


class Spread(Section):
    mean: float | None = None
    """Mean over the trials (per-eval figures) or over the evals' means (suite figures)."""
    median: float | None = None
    """Median of the same values."""
    n: int | None = None
    """Trials with a recorded value (per-eval figures)."""
    se: float | None = None
    """Standard error of the mean, clustered by eval (suite figures)."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval of the mean (suite figures)."""
    intervals: dict[str, Interval | None] | None = None
    """That interval under each reading: population ("evals like these") and these_evals."""
    n_evals: int | None = None
    """Evals with at least one recorded value (suite figures)."""


class EvalArm(Section):
    """One eval under one configuration."""

    passes: int | None = None
    """Trials that passed (every expectation passed)."""
    completed: int | None = None
    """Trials that ran to the end and were graded; errored and timed-out trials are not counted."""
    requested: int | None = None
    """Trials planned for this eval and configuration."""
    errored: int | None = None
    """Trials that ended in an error (excluded from the pass rate, counted here)."""
    timed_out: int | None = None
    """Trials stopped by the time limit (excluded from the pass rate, counted here)."""
    ungraded: int | None = None
    """Trials with an expectation that has no verdict and no failed one (excluded from the pass rate)."""
    missing: int | None = None
    """Planned trials with no record at all (an interrupted run)."""
    pass_rate: float | None = None
    """passes / completed: per trial."""
    wilson: Interval | None = Field(None, max_length=2)
    """Wilson 95% interval of this eval's pass rate."""
    expectation_pass_rate: float | None = None
    """Mean share of expectations passed per trial (skill-creator's per-expectation figure, not the pass rate)."""
    pass_at_k: dict[str, float | None] | None = None
    """Chance that at least one of k trials passes, by k."""
    pass_hat_k: dict[str, float | None] | None = None
    """Chance that all of k trials pass, by k."""
    variance: float | None = None
    """Within-eval variance of the trial outcomes."""
    reliability: str | None = None
    """A label for how consistent the trials were (High, Medium, Low)."""
    tokens: Spread | None = None
    """Tokens per trial."""
    duration_seconds: Spread | None = None
    """Seconds per trial."""
    skill_triggered_rate: float | None = None
    """Share of trials in which the agent loaded the skill (null where it cannot be observed)."""


class PerEvalStatistics(Section):
    eval_id: int | str | None = None
    """The eval's id in evals.json."""
    eval_name: str | None = None
    """The eval's name."""
    configurations: dict[str, EvalArm] | None = None
    """Per configuration (with_skill, without_skill, old_skill, ...)."""
    difference: float | None = None
    """With-skill minus baseline pass rate on this eval."""


class ConfigurationStatistics(Section):
    """One configuration over the suite."""

    pass_rate: float | None = None
    """Mean over evals of the per-eval pass rate (each eval weighs the same)."""
    pass_rate_se: float | None = None
    """Standard error of that mean, clustered by eval."""
    pass_rate_interval: Interval | None = Field(None, max_length=2)
    """95% interval of the suite pass rate (the one the min_pass_rate gate decides on)."""
    pass_rate_intervals: dict[str, Interval | None] | None = None
    """The pass rate's interval under each reading: population ("evals like these", the evals as a sample
    of the tasks the skill will meet) and these_evals (the fixed set written; trial noise only)."""
    interval_reading: str | None = None
    """The reading pass_rate_interval and the gates use (population or these_evals)."""
    pass_rate_sd_between_evals: float | None = None
    """Standard deviation of the per-eval pass rates."""
    n_evals: int | None = None
    """Evals with at least one completed trial."""
    evals_without_completed_trials: list[int | str | None] | None = None
    """Evals left out of the suite figures because no trial completed."""
    trials_completed: int | None = None
    """Completed trials over the suite."""
    trials_errored: int | None = None
    """Errored or timed-out trials over the suite."""
    trials_ungraded: int | None = None
    """Ungraded trials over the suite."""
    trials_requested: int | None = None
    """Planned trials over the suite."""
    pass_at_k: dict[str, float | None] | None = None
    """Mean over evals of pass@k, by k."""
    pass_hat_k: dict[str, float | None] | None = None
    """Mean over evals of pass^k, by k."""
    avg_tokens: Spread | None = None
    """Tokens per trial: mean over evals, with its interval (the max_avg_tokens gate's)."""
    avg_duration_seconds: Spread | None = None
    """Seconds per trial: mean over evals, with its interval."""


class PassRateDifference(Section):
    mean: float | None = None
    """Mean over evals of (with-skill minus baseline pass rate)."""
    se: float | None = None
    """Standard error of that mean."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval of the difference."""
    n_evals: int | None = None
    """Evals measured in both arms."""
    n_nonzero: int | None = None
    """Evals whose difference is not zero (the sign-flip test can only use these)."""
    p_value: float | None = None
    """Two-sided p-value of 'the skill makes no difference'."""
    p_value_method: str | None = None
    """The test behind p_value."""
    significance_reachable: bool | None = None
    """False when these evals are too few for the test ever to reach 5%."""
    explanation: str | None = None
    """The result in a sentence."""
    interval_reading: str | None = None
    """The reading interval, se and p_value are for (population or these_evals): the config's."""
    intervals: dict[str, Interval | None] | None = None
    """The interval under each reading: population ("evals like these": the sign-flip test inverted)
    and these_evals ("these evals": the z test over trials inverted)."""
    p_values: dict[str, float | None] | None = None
    """The two-sided p of 'no difference' under each reading: each the test its interval inverts."""


class ImprovementRatio(Section):
    value: float | None = None
    """With-skill pass rate divided by the baseline's (null when the baseline is 0)."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval of the ratio (an upper end of null is unbounded)."""
    method: str | None = None
    """How the interval was computed."""
    n_evals: int | None = None
    """Evals measured in both arms."""
    undefined_reason: str | None = None
    """Why the ratio has no value, when it has none."""
    se: float | None = None
    """Standard error, where the method gives one."""
    interval_reading: str | None = None
    """The reading interval and method are for (population or these_evals): the config's."""
    intervals: dict[str, Interval | None] | None = None
    """The interval under each reading: population ("evals like these") and these_evals ("these
    evals": Fieller's interval at the trial noise, the z test of a - r b inverted)."""


class GeometricRatio(Section):
    ratio: float | None = None
    """Geometric mean over evals of with-skill / baseline (tokens or seconds)."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval of that ratio."""
    n_evals_used: int | None = None
    """Evals with a value in both arms."""
    n_evals_skipped: int | None = None
    """Evals left out (a value missing or zero in an arm)."""
    reason: str | None = None
    """Why no ratio was computed, when none was."""


class ExcludedEval(Section):
    eval_id: int | str | None = None
    """The eval's id."""
    eval_name: str | None = None
    """Its name."""
    reason: str | None = None
    """Why it was left out of the pairing."""


class PairedStatistics(Section):
    """The skill against its baseline, paired by eval."""

    n_evals: int | None = None
    """Evals measured in both arms."""
    pass_rate_difference: PassRateDifference | None = None
    """With-skill minus baseline pass rate."""
    improvement_ratio: ImprovementRatio | None = None
    """With-skill over baseline pass rate (the min_improvement_ratio gate's figure)."""
    token_ratio: GeometricRatio | None = None
    """Tokens with the skill over without, from per-eval means."""
    token_ratio_of_medians: GeometricRatio | None = None
    """The same from per-eval medians."""
    duration_ratio: GeometricRatio | None = None
    """Seconds with the skill over without, from per-eval means."""
    duration_ratio_of_medians: GeometricRatio | None = None
    """The same from per-eval medians."""
    excluded_evals: list[ExcludedEval] | None = None
    """Evals left out of the pairing (measured in one arm only)."""


class Power(Section):
    """How many evals would likely detect the observed difference: a planning figure, not a test."""

    alpha: float | None = None
    """Significance level the sizing assumes."""
    power: float | None = None
    """Chance of detecting the planned effect the sizing aims at."""
    observed_difference: float | None = None
    """The pilot's with-skill minus baseline pass rate."""
    detectable_difference: float | None = None
    """Smallest difference these evals would likely detect."""
    sign_probability: float | None = None
    """Chance the observed sign is the true one, under the planning spread."""
    planned_power: float | None = None
    """Power at the advised size, as computed for it."""
    promise: str | None = None
    """What the advice promises, in words."""
    trials_per_arm: int | None = None
    """Trials per eval and arm of this run."""
    trials_per_arm_reason: str | None = None
    """Why no trial count is advised, when none is."""
    evals_needed: int | None = None
    """Evals that would likely decide the difference."""
    evals_needed_reason: str | None = None
    """Why no eval count is advised, when none is."""
    sd_of_differences: float | None = None
    """Standard deviation of the per-eval differences."""


class GateFigure(Section):
    """One threshold of the benchmark config, as the gate decides it."""

    threshold: float | None = None
    """The configured threshold."""
    direction: str | None = None
    """at_least or at_most."""
    value: float | None = None
    """The estimate compared with the threshold."""
    interval: Interval | None = Field(None, max_length=2)
    """The interval the decision is made on."""
    n_evals: int | None = None
    """Evals behind the estimate."""
    decision: str | None = None
    """pass, fail or undecided (the gate's three states)."""
    plain: bool | None = None
    """The plain comparison of the estimate with the threshold, ignoring uncertainty."""
    evals_responsible: list[str] | None = None
    """The evals that pull the figure to the wrong side of the threshold."""
    reason: str | None = None
    """Why there is no decision, when there is none."""
    trials_to_decide: int | None = None
    """Trials per eval and arm that would likely decide this threshold."""
    evals_to_decide: int | None = None
    """Evals that would likely decide this threshold."""
    decide_note: str | None = None
    """The sample-size advice in words."""
    decide_detail: str | None = None
    """Why that advice cannot promise more, when it cannot."""
    reading: str | None = None
    """What the interval is about: evals like these (population) or these evals."""
    promise: str | None = None
    """What that advice promises."""
    planned_power: float | None = None
    """The power the advice is sized for."""
    fail_p_value: float | None = None
    """p-value of the failing direction, held family-wise with the other checks (Holm)."""
    test_p_value: float | None = None
    """p-value of the paired test behind the ratio gate."""


class Statistics(Section):
    """benchmark.json's `statistics`: per eval, per configuration, paired, power and gates."""

    schema_version: int | None = None
    """Version of this section's shape."""
    skill_configuration: str | None = None
    """The configuration measured with the skill."""
    baseline_configuration: str | None = None
    """The configuration it is compared with (without_skill or old_skill)."""
    trials_requested: int | None = None
    """Trials planned per eval and configuration."""
    n_evals: int | None = None
    """Evals in the suite."""
    interval_reading: str | None = None
    """The reading the per-configuration intervals and their gates use: population ("evals like these")
    or these_evals ("these evals")."""
    per_eval: list[PerEvalStatistics] | None = None
    """Per eval, per configuration."""
    configurations: dict[str, ConfigurationStatistics] | None = None
    """Per configuration, over the suite."""
    paired: PairedStatistics | None = None
    """The skill against its baseline, paired by eval."""
    validity: list[str] | None = None
    """Why a figure cannot be trusted (a measurement invalid, a judge below its floor...)."""
    power: Power | None = None
    """Sample-size advice for the difference."""
    gates: dict[str, GateFigure] | None = None
    """Per configured threshold, its figure, interval and decision."""
