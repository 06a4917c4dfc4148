"""Per threshold, the figure, its interval under the gate's reading, the decision and the
FAIL p-value the gate holds family-wise (gate.py): benchmark.json's `statistics.gates`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from skillassay.analyze import advice_these, paired_intervals, paired_readings, rate_intervals
from skillassay.analyze.advice import MIN_DETECTABLE_EFFECT, _gap_advice, _ratio_advice, gap_planned
from skillassay.analyze.cells import (
    MEAN_GATES,
    EvalCell,
    MetricSeries,
    _arm_center,
    _eval_label,
    _f,
    _iv,
    paired_floors,
    rates_of,
)
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading
from skillassay.stats.decide import decide, plain_comparison
from skillassay.stats.types import Direction, Interval
from skillassay.stats.ufuncs import ufuncs

# threshold key -> direction of the good side
GATE_DIRECTIONS: dict[str, Direction] = {
    "min_pass_rate": "min",
    "max_avg_tokens": "max",
    "max_avg_duration_seconds": "max",
    "min_improvement_ratio": "min",
    "max_avg_cost_usd": "max",
}


def _t_sf(x: float, df: int) -> float:
    """P(T > x) for Student's t with df degrees of freedom."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (ufuncs)

    return float(special.stdtr(df, -x))


def _fail_p(key: str, thr: float, value: float | None, se: float | None, n_evals: int,
            series: MetricSeries | None, used: list[EvalCell], skill: str, baseline: str,
            test_p: float | None, paired: dict[str, Any], reading: Reading = DEFAULT_READING) -> float | None:
    """The one-sided p-value of a FAIL call: the smallest level at which the interval the gate
    decided on still lies wholly on the bad side. A per-configuration figure's interval is the
    inversion of one test (rate_intervals), whose p this is; the ratio's is the largest of the
    p-values of the bounds its interval holds. Capped at 2.5%: it decided FAIL at that level."""
    if value is None or n_evals < 2:
        return None
    df = n_evals - 1
    parts: list[float] = []
    if key == "min_pass_rate" and series is not None:
        parts.append(rate_intervals.pass_rate_p_at_least(series.pass_counts(), series.counts, thr, reading))
    elif key in MEAN_GATES and series is not None:
        p = rate_intervals.cost_p_at_most(series.sums, series.counts, series.within_var, thr, reading)
        parts += [] if p is None else [p]
    elif key == "min_improvement_ratio" and reading == "these_evals":
        p_these = paired_readings.ratio_fail_p_these(used, skill, baseline, thr,
                                                     paired["pass_rate_difference"]["p_value"])
        return None if p_these is None else min(p_these, 0.025)
    elif key == "min_improvement_ratio":
        # The sign-flip test's two-sided p halves to the one-sided one (its null distribution is
        # symmetric); the noise floor's part: Fieller's test at the floors, as in
        # paired_intervals.ratio_interval.
        parts += [test_p / 2] if test_p is not None else []
        diff_p = paired["pass_rate_difference"]["p_value"]
        if thr <= 1 and diff_p is not None:
            parts.append(diff_p / 2)
        fa, fb = paired_floors(used, skill, baseline)
        ma = float(np.mean(rates_of(used, skill)))
        mb = float(np.mean(rates_of(used, baseline)))
        # A ratio of 0 or below is met by any ratio: its FAIL side has p 1.
        parts.append(1.0 if thr <= 0 else paired_intervals.floor_fail_p(ma, mb, thr, fa, fb, df))
    else:
        return None
    return min(max(parts), 0.025) if parts else None


def gate_stats(thresholds: dict[str, float | None], cells: list[EvalCell], skill: str,
               baseline: str, used: list[EvalCell], paired: dict[str, Any], seed: int = 0,
               effect: float = MIN_DETECTABLE_EFFECT, reading: Reading = DEFAULT_READING) -> dict[str, Any]:
    gates: dict[str, Any] = {}
    for key, threshold in thresholds.items():
        if threshold is None or key not in GATE_DIRECTIONS:
            continue
        direction = GATE_DIRECTIONS[key]
        thr = float(threshold)
        value: float | None = None
        interval: Interval | None = None
        se: float | None = None
        n_evals = 0
        series: MetricSeries | None = None
        responsible: list[str] = []
        reason: str | None = None
        if key == "min_pass_rate":
            series = MetricSeries.build(cells, skill, "pass")
            est = series.estimate(pooled=False, reading=reading)
            responsible = [_eval_label(c) for c in cells if c.arms[skill].pass_rate is not None
                           and not plain_comparison(c.arms[skill].pass_rate, thr, "min")]
        elif key in MEAN_GATES:
            attr = MEAN_GATES[key]
            series = MetricSeries.build(cells, skill, attr)
            est = series.estimate(pooled=True, reading=reading)
            responsible = [_eval_label(c) for c in cells
                           if (m := _arm_center(c.arms[skill], attr, "mean")) is not None
                           and not plain_comparison(m, thr, "max")]
        else:
            est = None
            imp = paired["improvement_ratio"]
            if imp["value"] is None and not imp.get("unbounded"):
                reason = imp["undefined_reason"]
            else:
                # The paired section's ratio: one computation, one set of evals (issue 16); over a
                # baseline that passed nothing it is unbounded, decided by the same test (issue 34).
                value = math.inf if imp.get("unbounded") else imp["value"]
                n_evals, se = imp["n_evals"], imp.get("se")
                iv = imp["interval"]
                interval = None if iv is None else (
                    iv[0], math.inf if iv[1] is None else iv[1])
            responsible = [_eval_label(c) for c in used
                           if (c.arms[skill].pass_rate or 0.0)
                           < thr * (c.arms[baseline].pass_rate or 0.0)
                           and not math.isclose(c.arms[skill].pass_rate or 0.0,
                                                thr * (c.arms[baseline].pass_rate or 0.0))]
        if est is not None:
            value, interval, se, n_evals = est.mean, est.interval, est.se, est.n
        elif key != "min_improvement_ratio":
            reason = "no completed with_skill trial recorded this figure"
        decision = decide(interval, thr, direction) if value is not None else "INCONCLUSIVE"
        test_p = None
        if key == "min_improvement_ratio" and value is not None:
            decision, test_p = paired_readings.ratio_decision(used, skill, baseline, thr, interval, seed,
                                                              paired["pass_rate_difference"]["p_value"], reading)
        entry: dict[str, Any] = {
            "threshold": thr, "direction": direction, "value": _f(value),
            "interval": _iv(interval), "n_evals": n_evals, "decision": decision,
            "plain": plain_comparison(value, thr, direction),
            "evals_responsible": responsible, "reason": reason,
            "trials_to_decide": None, "evals_to_decide": None, "decide_note": None, "promise": None,
            "planned_power": None,
        }
        if key == "min_improvement_ratio":
            entry["test_p_value"] = _f(test_p)
            entry["unbounded"] = value is not None and math.isinf(value)
        entry["reading"] = reading  # which population the interval is about (rate_intervals)
        # The FAIL call as a one-sided p-value, so the gate can hold its FAIL calls to a
        # family-wise level across the checks it makes (gate.holm_fail_levels). Only a FAIL needs
        # one: a check that does not fail at its own 2.5% fails at no Holm level either.
        entry["fail_p_value"] = (_f(_fail_p(key, thr, value, se, n_evals, series, used, skill, baseline,
                                            test_p, paired, reading), 8) if decision == "FAIL" else None)
        if decision == "INCONCLUSIVE" and value is not None and reading == "these_evals":
            entry.update(_these_advice(key, thr, value, series, used, skill, baseline, effect))
        elif decision == "INCONCLUSIVE" and value is not None:
            entry.update(_ratio_advice(used, skill, baseline, thr, effect) if key == "min_improvement_ratio"
                         else _gap_advice(value, thr, series, n_evals, se, gap_planned(key, thr, effect),
                                          pass_rate=key == "min_pass_rate"))
        gates[key] = entry
    return gates


def _these_advice(key: str, thr: float, value: float, series: MetricSeries | None, used: list[EvalCell],
                  skill: str, baseline: str, effect: float) -> dict[str, Any]:
    """The advice for a gate decided about "these evals": trials per eval only (advice_these)."""
    if key == "min_improvement_ratio":
        k_now = float(np.mean([c.arms[skill].completed for c in used])) if used else 1.0
        return advice_these.ratio_advice(float(np.mean(rates_of(used, skill))), float(np.mean(rates_of(used, baseline))),
                                         thr, len(used), k_now, effect)
    if series is None:
        return {}
    k_now = float(np.mean(series.counts))
    if key == "min_pass_rate":
        return advice_these.pass_rate_advice(value, thr, len(series.counts), k_now, gap_planned(key, thr, effect))
    return advice_these.cost_advice(value, thr, series.within_var, k_now, gap_planned(key, thr, effect))
