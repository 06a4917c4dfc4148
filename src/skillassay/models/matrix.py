"""matrix.json: the statistics across the agents of one iteration (issue 37), typed for
`skillassay schema matrix`. Built by analyze/matrix.summarize_matrix from each agent's
benchmark.json; every figure here is either copied from that file (one interval per figure) or
computed across the agents (the heterogeneity test, the pooled effect, the family-wise
adjustment of the gates). Unknown keys are kept, as in the other files we write."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillassay.models.statistics import Interval, Section

AgentVerdict = Literal["PASS", "FAIL", "INCONCLUSIVE", "INVALID", "NOT GATED"]
MatrixVerdict = Literal["PASS", "FAIL", "INCONCLUSIVE", "NOT GATED"]


class AgentThreshold(Section):
    """One threshold of one agent, before and after the adjustment across agents."""

    key: str
    """The threshold's name in the benchmark config (min_pass_rate, min_improvement_ratio, ...)."""
    threshold: float | None = None
    """The configured threshold."""
    value: float | None = None
    """The agent's estimate of the figure (null: this agent's executor does not report it)."""
    interval: Interval | None = Field(None, max_length=2)
    """The 95% interval the decision is made on, from the agent's benchmark.json."""
    unbounded: bool = False
    """True for an improvement ratio over a baseline that passed nothing (value null: no finite ratio)."""
    recorded_decision: str | None = None
    """The decision benchmark.json records for this threshold alone (each check at its own one-sided 2.5%)."""
    decision: str
    """The decision after the FAIL calls are held family-wise across the required agents' thresholds
    (Holm): PASS, FAIL, INCONCLUSIVE, or NOT MEASURED (left out of the verdict)."""
    fail_p_value: float | None = None
    """One-sided p-value of the FAIL call, as benchmark.json records it (null: not a FAIL)."""
    holm_level: float | None = None
    """The level this FAIL call was held to across the agents: Holm's for a threshold, the regression checks'
    share for no_regressions (null: not a FAIL, or not gated)."""
    evals: list[str] = Field(default_factory=list)
    """For no_regressions: the evals called regressed vs the agent's previous iteration."""


class AgentSummary(Section):
    """One agent (an executor with its model and options) over the suite."""

    name: str
    """The agent's short name from the config (its folder: agents/<name>/)."""
    executor: str
    """The executor it ran on (claude-code, codex, local, command, ...)."""
    model: str | None = None
    """The model it ran, when the config names one."""
    required: bool
    """Whether its gate decides the matrix verdict (false: reported, not gated)."""
    verdict: AgentVerdict
    """This agent's gate after the adjustment across agents: PASS, FAIL, INCONCLUSIVE, INVALID (the
    measurement cannot carry a verdict) or NOT GATED (not required, or nothing it can measure is gated)."""
    reasons: list[str] = Field(default_factory=list)
    """Why the verdict is what it is, in words (one per failing or undecided threshold, or problem)."""
    n_evals: int | None = None
    """Evals measured in both arms for this agent."""
    with_skill_pass_rate: float | None = None
    """Mean over evals of the with-skill pass rate."""
    with_skill_interval: Interval | None = Field(None, max_length=2)
    """Its 95% interval, from benchmark.json."""
    baseline_pass_rate: float | None = None
    """Mean over evals of the baseline's pass rate (without the skill, or the previous version)."""
    baseline_interval: Interval | None = Field(None, max_length=2)
    """Its 95% interval, from benchmark.json."""
    effect: float | None = None
    """The skill's effect: mean over evals of (with-skill minus baseline pass rate)."""
    effect_interval: Interval | None = Field(None, max_length=2)
    """95% interval of the effect: the sign-flip test inverted, as benchmark.json records it."""
    effect_p_value: float | None = None
    """Two-sided p-value of 'the skill makes no difference on this agent' (exact sign-flip)."""
    effect_reading: str
    """What the effect's interval is about: evals like these (the evals as a sample of the tasks the skill meets)."""
    effect_words: str
    """The effect and its interval in a sentence."""
    cost_usd: float | None = None
    """Mean cost per trial with the skill, USD (null: not reported and not priceable)."""
    baseline_cost_usd: float | None = None
    """Mean cost per trial of the baseline, USD."""
    tokens: float | None = None
    """Mean tokens per trial with the skill (null: the executor reports none)."""
    baseline_tokens: float | None = None
    """Mean tokens per trial of the baseline."""
    duration_seconds: float | None = None
    """Mean seconds per trial with the skill."""
    baseline_duration_seconds: float | None = None
    """Mean seconds per trial of the baseline."""
    thresholds: list[AgentThreshold] = Field(default_factory=list)
    """Each configured threshold for this agent."""
    problems: list[str] = Field(default_factory=list)
    """Why this agent's measurement cannot carry a verdict (empty when it is valid)."""


class AgentPair(Section):
    """Two agents' effects compared, paired by eval."""

    agents: list[str] = Field(min_length=2, max_length=2)
    """The two agents' names."""
    difference: float | None = None
    """The first agent's effect minus the second's (mean over evals)."""
    p_value: float | None = None
    """Two-sided sign-flip p-value of 'their effects are the same', on the per-eval differences of effects."""
    p_adjusted: float | None = None
    """That p-value adjusted for the number of pairs (Holm)."""
    differs: bool
    """True when the heterogeneity test is called and this pair's adjusted p-value is at most alpha."""


class Heterogeneity(Section):
    """Whether the skill's effect differs between the agents."""

    method: str
    """The test, in words."""
    statistic: float | None = None
    """The variance across agents of their mean effects (the permutation test's statistic)."""
    p_value: float | None = None
    """p-value of 'the skill's effect is the same on every agent' (null: not testable)."""
    exact: bool | None = None
    """True when every permutation was enumerated, false when they were sampled (seeded)."""
    permutations: int | None = None
    """Permutations the p-value was computed from."""
    n_evals: int = 0
    """Evals measured in both arms on every agent (the test's blocks)."""
    n_informative: int = 0
    """Of those, evals where the agents' effects are not all equal (only these can move the test)."""
    evals_excluded: list[str] = Field(default_factory=list)
    """Evals left out because some agent has no completed trial in an arm, with why."""
    significance_reachable: bool | None = None
    """False when these evals are too few for the test ever to reach alpha, whatever the data."""
    called: bool
    """True when p_value <= alpha: the effect differs between agents."""
    alpha: float
    """The level the test is called at."""
    pairs: list[AgentPair] = Field(default_factory=list)
    """Every pair of agents, with which differ (Holm across the pairs)."""
    reason: str | None = None
    """Why there is no test, when there is none."""
    explanation: str
    """The result in words."""


class PooledEffect(Section):
    """The skill's effect over all agents, given only when they agree."""

    effect: float | None = None
    """Mean over evals of the agents' mean difference (null when not pooled)."""
    interval: Interval | None = Field(None, max_length=2)
    """95% interval: the sign-flip test of the per-eval mean over agents, inverted (null when not pooled)."""
    p_value: float | None = None
    """Two-sided sign-flip p-value of 'no effect on average over the agents'."""
    n_evals: int | None = None
    """Evals pooled."""
    agents: list[str] = Field(default_factory=list)
    """The agents pooled."""
    reading: str | None = None
    """What the interval is about (evals like these)."""
    reason: str
    """Why it is pooled, or why not (the agents' effects differ)."""


class FamilyAdjustment(Section):
    """How the FAIL calls of the required agents' gates were held to a family-wise level."""

    method: str
    """Holm's step-down over every (required agent, threshold) FAIL call; the regression checks beside it."""
    family_alpha: float
    """The family-wise level of a false FAIL anywhere in the matrix."""
    thresholds_alpha: float | None = None
    """The thresholds' share of it (all of it unless regression checks take their part)."""
    regression_level: float | None = None
    """The level each compared agent's regression check is held to: the gate's 0.01 shared between them (null: none compared)."""
    per_check_cap: float
    """The one-sided level one check is held to on its own (no Holm level exceeds it)."""
    checks: int
    """Members of the family (required agents times their measured thresholds, plus their regression checks)."""
    fail_p_values: dict[str, float] = Field(default_factory=dict)
    """'agent/threshold' -> its FAIL p-value (1 when it did not fail)."""
    confirmed_levels: dict[str, float] = Field(default_factory=dict)
    """'agent/threshold' -> the Holm level its FAIL was confirmed at."""
    pass_calls: str
    """Why PASS calls are not adjusted."""


class MatrixSummary(Section):
    """matrix.json: the skill's effect on each agent, whether it differs between them, and the matrix verdict."""

    schema_version: int = 1
    """Version of this file's shape."""
    alpha: float
    """The level of the heterogeneity test and of the family-wise gate adjustment."""
    agents: list[AgentSummary]
    """Per agent, in the config's order."""
    heterogeneity: Heterogeneity
    """Whether the skill's effect differs between agents, and which pairs differ."""
    pooled: PooledEffect
    """The effect pooled over agents, when they agree."""
    family: FamilyAdjustment | None = None
    """The Holm adjustment across the required agents' gates (null: nothing gated)."""
    verdict: MatrixVerdict
    """PASS only if every gated required agent passes, FAIL if any fails, INCONCLUSIVE otherwise;
    NOT GATED when no required agent is gated."""
    exit_code: int
    """The exit code the verdict maps to (0 PASS or NOT GATED, 1 FAIL, 3 INCONCLUSIVE)."""
    message: str
    """The verdict in one sentence naming the agents."""
