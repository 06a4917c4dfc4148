"""benchmark.json's `cost` section (analyze/cost.py), typed for `skillassay schema`; checked
where read and kept as read (models/checked.py). All amounts are USD; a cost that was not
reported and could not be priced is null and counted, never 0."""

from __future__ import annotations

from pydantic import Field

from skillassay.models.statistics import Interval, Section


class ArmCost(Section):
    total_usd: float | None = None
    """Sum of the known per-trial costs."""
    trials_priced: int | None = None
    """Trials with a known cost (reported by the provider or priced from tokens)."""
    trials_unknown: int | None = None
    """Trials whose cost is unknown (then total_usd is a lower bound)."""
    total_is_lower_bound: bool | None = None
    """True when some trial's cost is unknown."""
    mean_per_trial_usd: float | None = None
    """Mean cost per trial (per configuration: mean over evals)."""
    mean_per_trial_interval: Interval | None = Field(None, max_length=2)
    """95% interval of that mean (the max_avg_cost_usd gate's)."""
    per_passing_trial_usd: float | None = None
    """Total cost over passing trials (null when a cost is unknown or nothing passed)."""


class EvalCost(Section):
    eval_id: int | str | None = None
    """The eval's id."""
    eval_name: str | None = None
    """Its name."""
    configurations: dict[str, ArmCost] | None = None
    """Per configuration."""


class ExtraSuccess(Section):
    value_usd: float | None = None
    """What one additional passing trial costs: the cost effect over the pass-rate effect."""
    interval: Interval | None = Field(None, max_length=2)
    """Its 95% interval."""
    reason: str | None = None
    """Why it is not estimable, when it is not (the pass-rate effect's interval includes 0)."""
    pass_rate_difference: float | None = None
    """The pass-rate effect it divides by."""
    pass_rate_difference_interval: Interval | None = Field(None, max_length=2)
    """That effect's interval."""


class CostEffect(Section):
    mean_difference_usd: float | None = None
    """Mean over evals of (with-skill minus baseline cost per trial)."""
    interval: Interval | None = Field(None, max_length=2)
    """Its 95% interval."""
    n_evals: int | None = None
    """Evals with a known cost in both arms."""
    per_extra_success: ExtraSuccess | None = None
    """The cost of one extra success."""


class Cost(Section):
    """benchmark.json's `cost`."""

    configurations: dict[str, ArmCost] | None = None
    """Per configuration, over the suite."""
    per_eval: list[EvalCost] | None = None
    """Per eval."""
    effect: CostEffect | None = None
    """The skill's cost effect, paired by eval."""
