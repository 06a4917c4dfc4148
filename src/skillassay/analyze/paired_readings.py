"""The paired figures under both readings (issue 34): the pass-rate difference and the improvement
ratio for "evals like these" (the sign-flip tests inverted, paired_intervals) and for "these evals"
(the fixed set: the z tests over trials inverted). benchmark.json records both; the config's
`interval_reading` picks the one printed and gated, so the gate's p-value is always the test the
printed interval inverts."""

from __future__ import annotations

import math
from typing import Any

from skillassay.analyze import paired_intervals as pi
from skillassay.analyze.cells import EvalCell, _f, _iv, rates_of
from skillassay.analyze.rate_intervals import READINGS, Reading
from skillassay.stats.decide import decide
from skillassay.stats.paired import PairedDifference
from skillassay.stats.ratio import RatioEstimate, ratio_test_p
from skillassay.stats.types import Decision, Interval

ALPHA = 0.05


def counts(used: list[EvalCell], a: str, b: str) -> tuple[list[int], list[int], list[int], list[int]]:
    """(passes a, trials a, passes b, trials b) per paired eval."""
    return ([c.arms[a].passes for c in used], [c.arms[a].completed for c in used],
            [c.arms[b].passes for c in used], [c.arms[b].completed for c in used])


def difference_readings(pd: PairedDifference, used: list[EvalCell], a: str, b: str,
                        reading: Reading) -> dict[str, Any]:
    """The difference's fields: the chosen reading's interval, SE, p and test where today's keys
    are, and both readings' intervals and p-values under `intervals` / `p_values`."""
    fixed = pi.difference_these_evals(*counts(used, a, b)) if used else None
    intervals = {"population": _iv(pd.interval), "these_evals": _iv(fixed.interval) if fixed else None}
    p_values = {"population": _f(pd.p_value), "these_evals": _f(fixed.p_value) if fixed else None}
    out: dict[str, Any] = {"mean": _f(pd.mean), "se": _f(pd.se), "interval": intervals["population"],
                           "n_evals": pd.n, "n_nonzero": pd.n_nonzero, "p_value": p_values["population"],
                           "p_value_method": pd.method, "significance_reachable": pd.significance_reachable,
                           "explanation": pd.explanation}
    if reading == "these_evals" and fixed is not None:
        out |= {"se": _f(fixed.se), "interval": intervals["these_evals"], "p_value": p_values["these_evals"],
                "p_value_method": pi.FIXED_SET_METHOD, "significance_reachable": True,
                "explanation": "the trials of these evals redrawn: a z test over trials, stratified by eval"}
    return out | {"interval_reading": reading, "intervals": intervals, "p_values": p_values}


def _ratio_dict(ratio: RatioEstimate | None) -> dict[str, Any]:
    if ratio is None or ratio.ratio is None:
        return {"value": None, "interval": None, "method": None, "n_evals": 0 if ratio is None else ratio.n,
                "undefined_reason": ("no eval has completed trials in both arms" if ratio is None
                                     else ratio.undefined_reason)}
    return {"value": _f(ratio.ratio), "interval": _iv(ratio.interval), "method": ratio.method, "n_evals": ratio.n,
            "unbounded": math.isinf(ratio.ratio), "undefined_reason": ratio.undefined_reason, "se": _f(ratio.se)}


def ratio_readings(population: RatioEstimate | None, used: list[EvalCell], a: str, b: str,
                   reading: Reading) -> dict[str, Any]:
    """The ratio's fields under the chosen reading, with both readings' intervals."""
    fixed = pi.ratio_these_evals(*counts(used, a, b)) if used else None
    by = {"population": population, "these_evals": fixed}
    intervals = {r: (_iv(e.interval) if e is not None and e.ratio is not None else None) for r, e in by.items()}
    chosen = by[reading] if reading in READINGS else population
    return _ratio_dict(chosen) | {"interval_reading": reading, "intervals": intervals}


def ratio_decision(used: list[EvalCell], a: str, b: str, thr: float, interval: Interval | None, seed: int,
                   paired_p: float | None, reading: Reading) -> tuple[Decision, float | None]:
    """The ratio gate decides only when its interval and the test that interval inverts (at thr)
    agree, and claims a difference only when the difference's own test (`paired_p`, the same
    reading's) confirms it, so the verdict never says "better" while the test beside it says it
    cannot tell."""
    if reading == "these_evals":
        p = pi.ratio_these_p(*counts(used, a, b), thr)
    elif thr == 1.0 and paired_p is not None:
        p = paired_p
    else:
        p = ratio_test_p(rates_of(used, a), rates_of(used, b), thr, seed=seed)
    decision = decide(interval, thr, "min")
    if decision != "INCONCLUSIVE" and (p is None or p >= ALPHA):
        decision = "INCONCLUSIVE"
    claims_difference = (decision == "PASS" and thr >= 1) or (decision == "FAIL" and thr <= 1)
    if claims_difference and paired_p is not None and paired_p >= ALPHA:
        decision = "INCONCLUSIVE"
    return decision, p


def ratio_fail_p_these(used: list[EvalCell], a: str, b: str, thr: float, diff_p: float | None) -> float | None:
    """One-sided p of a "these evals" ratio FAIL: the z test's at thr (and, at thr <= 1, the
    difference's own, halved), as gate_stats does for the population reading."""
    p = pi.ratio_these_p(*counts(used, a, b), thr, side="less")
    parts = [p] if p is not None else []
    if thr <= 1 and diff_p is not None:
        parts.append(diff_p / 2)
    return max(parts) if parts else None
