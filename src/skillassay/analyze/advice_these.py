"""Sample-size advice for a gate decided on the "these evals" reading (issue 34): about the fixed
set only trial noise is uncertain, so only more trials per eval narrow its interval (more evals
would change the set, and so the truth), and the advice says how many, sized on that reading's
own z test at the planned distance from the threshold (advice.gap_planned's), with 80% power."""

from __future__ import annotations

import math
from typing import Any

from skillassay.analyze import advice_words
from skillassay.analyze.advice import POWER, promise
from skillassay.stats import distributions as dists
from skillassay.stats.ufuncs import ufuncs

DETAIL = ("about these evals (the fixed set) only more trials per eval narrow the interval; more evals would "
          "change the set being measured")


def _none(note: str, condition: str | None) -> dict[str, Any]:
    return {"trials_to_decide": None, "evals_to_decide": None, "decide_note": note, "decide_detail": DETAIL,
            "promise": None if condition is None else promise(condition), "planned_power": None}


def trials_for(var_per_trial: float, n_evals: int, gap: float, k_now: float,
               conf: float = 0.95, power: float = POWER) -> tuple[int, float] | None:
    """(trials per eval, planned power) so that the z test of the fixed set's mean, whose variance
    at K trials per eval is var_per_trial / (E K), decides a true distance `gap` with `power`:
    K = (z_conf + z_power)^2 var / (E gap^2), at least one more than now."""
    if gap <= 0 or var_per_trial <= 0 or n_evals < 1:
        return None
    zc = float(dists.norm_ppf((1 + conf) / 2))
    need = (zc + float(dists.norm_ppf(power))) ** 2 * var_per_trial / (n_evals * gap * gap)
    k = advice_words.about(max(math.ceil(need - 1e-9), math.floor(k_now) + 1))
    planned = float(ufuncs().ndtr(gap / math.sqrt(var_per_trial / (n_evals * k)) - zc))
    return k, planned


def _advice(var_per_trial: float, n_evals: int, gap: float, k_now: float, condition: str) -> dict[str, Any]:
    found = trials_for(var_per_trial, n_evals, gap, k_now)
    if found is None:
        return _none("the trials do not vary: more of them cannot narrow the interval", condition)
    k, pw = found
    return {**_none("", condition), "trials_to_decide": k, "planned_power": round(pw, 4),
            "promise": promise(condition, pw),
            "decide_note": f"about {k} trials per eval would likely decide it about these evals if {condition}"}


def pass_rate_advice(estimate: float, threshold: float, n_evals: int, k_now: float,
                     planned: tuple[float, str]) -> dict[str, Any]:
    """A pass rate: per-trial variance at the planned truth (the side nearer 0.5), which bounds
    the stratified mean's (sum p_e (1 - p_e) / (E^2 K) <= p (1 - p) / (E K))."""
    gap, condition = planned
    if math.isclose(estimate, threshold, rel_tol=1e-9, abs_tol=1e-12):
        return _none(advice_words.NO_SIZE_DECIDES, None)
    p = max((x for x in (threshold + gap, threshold - gap) if 0 <= x <= 1), key=lambda x: x * (1 - x), default=0.5)
    return _advice(p * (1 - p), n_evals, gap, k_now, condition)


def cost_advice(estimate: float, threshold: float, within_var: list[float | None], k_now: float,
                planned: tuple[float, str]) -> dict[str, Any]:
    """Tokens, duration or cost: the trials' own spread within each eval (none at one trial per
    eval: then it cannot be planned)."""
    gap, condition = planned
    if math.isclose(estimate, threshold, rel_tol=1e-9, abs_tol=1e-12):
        return _none(advice_words.NO_SIZE_DECIDES, None)
    known = [w for w in within_var if w is not None]
    if not known:
        return _none("at one trial per eval the trial noise cannot be estimated: run 2 or more trials per eval",
                     condition)
    return _advice(sum(known) / len(known), len(within_var), gap, k_now, condition)


def ratio_advice(rate_skill: float, rate_base: float, thr: float, n_evals: int, k_now: float,
                 effect: float) -> dict[str, Any]:
    """The ratio: the z test of mean(a) - thr mean(b) (paired_intervals.ratio_these_p), planned
    with the skill's true rate `effect` beyond thr times the baseline's on the estimate's side."""
    side = 1.0 if rate_skill - thr * rate_base >= 0 else -1.0
    condition = (f"the skill's true pass rate is at least {effect * 100:.3g} pts "
                 f"{'above' if side > 0 else 'below'} {thr:g} x the baseline's")
    if math.isclose(rate_skill, thr * rate_base, abs_tol=1e-9):
        return _none(advice_words.NO_SIZE_DECIDES, None)
    ma = min(1.0, max(0.0, thr * rate_base + side * effect))
    var = ma * (1 - ma) + thr * thr * rate_base * (1 - rate_base)
    return _advice(var, n_evals, effect, k_now, condition)
