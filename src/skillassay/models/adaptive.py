"""benchmark.json's `adaptive` section: how an adaptive run (`run --adaptive`) decided when to
stop. Typed for `skillassay schema`, checked where benchmark.json is read and kept as read
(see models/statistics.py)."""

from __future__ import annotations

from skillassay.models.statistics import Section


class GateLook(Section):
    key: str | None = None
    """The threshold watched."""
    z: float | None = None
    """Its test statistic at the last look."""
    information_fraction: float | None = None
    """Share of the planned information in at that look."""
    conditional_power: float | None = None
    """Chance of a call by max_trials_per_eval, under the trend seen."""
    status: str | None = None
    """decided, settled or running."""
    call: str | None = None
    """The call made, when decided."""
    reason: str | None = None
    """Why, in words."""


class AdaptiveEval(Section):
    eval_id: int | str | None = None
    """The eval's id."""
    eval_name: str | None = None
    """Its name."""
    trials_per_arm: int | None = None
    """Trials per arm it got."""
    trials_recorded: int | None = None
    """Graded trials on disk for it (a reused baseline may hold more)."""
    stopped: str | None = None
    """Why its trials stopped."""
    reasons: list[str] | None = None
    """The same in words."""


class AdaptiveDesign(Section):
    schema_version: int | None = None
    """Version of this section's shape."""
    method: str | None = None
    """The sequential method."""
    alpha: float | None = None
    """Overall significance level."""
    interim_alpha_one_sided: float | None = None
    """One-sided level of a call at an interim look."""
    final_alpha_one_sided: float | None = None
    """One-sided level of a call at the last look."""
    futility_conditional_power: float | None = None
    """Conditional power below which a gate is settled as uncallable (null when futility is off)."""
    futility_optimism_se: float | None = None
    """How far (in standard errors) the trend is moved towards a call before judging futility."""
    eval_stop_when_arms_agree_on: list[str] | None = None
    """Outcomes on which an eval stops when both arms agree at its first look ([] = off)."""
    min_trials_per_eval: int | None = None
    """Trials per eval and arm before the first look."""
    max_trials_per_eval: int | None = None
    """The most trials per eval and arm."""
    round_size: int | None = None
    """Trials per eval and arm added each round."""
    looks: list[int] | None = None
    """Trials per arm at each look."""
    gates_watched: list[str] | None = None
    """The thresholds the stopping rule watches."""
    rule: str | None = None
    """The stopping rule in words."""
    stopped: str | None = None
    """Why the run stopped."""
    stopped_at_trials_per_arm: int | None = None
    """Trials per arm when it stopped."""
    evals_agreed: int | None = None
    """Evals stopped early because their arms agreed."""
    gates: list[GateLook] | None = None
    """Per watched gate, the last look."""
    reasons: list[str] | None = None
    """Why the suite stopped, in words."""
    trials_recorded: int | None = None
    """Graded trials on disk."""
    trials_fixed_design: int | None = None
    """Trials the fixed design would have run."""
    per_eval: list[AdaptiveEval] | None = None
    """Per eval, the trials used and why they stopped."""
