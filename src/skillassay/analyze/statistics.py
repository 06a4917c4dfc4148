"""The `statistics` section of benchmark.json: per eval, per configuration, paired, power and
gates, assembled from cells.py's grouped trials (advice.py sizes, gate_stats.py decides;
iteration_change.py compares two iterations).

Built from TrialRecords with the pure functions in `skillassay.stats`. It sits beside the
spec's summary/per_eval/thresholds_met and never replaces them: the spec's point figures are
the contract, this section says how far to trust them. Everything returned is plain
JSON-serialisable data (no NaN: missing figures are None, intervals are [lo, hi] lists).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from skillassay.analyze import paired_intervals, paired_readings
from skillassay.analyze.advice import MIN_DETECTABLE_EFFECT, power_stats
from skillassay.analyze.cells import (
    SCHEMA_VERSION,
    Arm,
    EvalCell,
    MetricSeries,
    _arm_center,
    _f,
    _geo_dict,
    _iv,
    joined,
    paired_floors,
    rates_of,
)
from skillassay.analyze.gate_stats import gate_stats
from skillassay.analyze.rate_intervals import DEFAULT_READING, READINGS, Reading
from skillassay.stats.binomial import pass_at_k, pass_hat_k, reliability_label, wilson_interval, within_eval_variance
from skillassay.stats.means import MeanEstimate
from skillassay.stats.ratio import geometric_mean_ratio

PASS_K_VALUES = (1, 2, 3, 5, 10)



# ---------------------------------------------------------------------------------------------
# Grouping














# ---------------------------------------------------------------------------------------------
# Small converters






def _ks(trials_requested: int) -> list[int]:
    return sorted({k for k in (*PASS_K_VALUES, trials_requested) if 1 <= k <= trials_requested})




def _center(xs: Sequence[float]) -> dict[str, float | int | None]:
    if not xs:
        return {"mean": None, "median": None, "n": 0}
    a = np.asarray(xs, dtype=float)
    return {"mean": _f(a.mean(), 4), "median": _f(np.median(a), 4), "n": len(xs)}


def _mean_estimate(est: MeanEstimate | None, nd: int = 6) -> dict[str, Any]:
    if est is None:
        return {"mean": None, "se": None, "interval": None, "n_evals": 0}
    return {"mean": _f(est.mean, nd), "se": _f(est.se, nd), "interval": _iv(est.interval, nd),
            "n_evals": est.n}




# ---------------------------------------------------------------------------------------------
# per_eval


def arm_stats(arm: Arm, trials_requested: int) -> dict[str, Any]:
    """Per-eval, per-configuration figures; None wherever nothing completed."""
    n, c = arm.completed, arm.passes
    ks = _ks(trials_requested)
    variance = within_eval_variance(c, n)
    return {
        "passes": c,
        "completed": n,
        "requested": trials_requested,
        "errored": arm.errored,
        "timed_out": arm.timed_out,
        "ungraded": arm.ungraded,
        "missing": max(0, trials_requested - arm.recorded),
        "pass_rate": _f(arm.pass_rate),
        "wilson": _iv(wilson_interval(c, n)),
        "expectation_pass_rate": _f(float(np.mean(rates))) if (rates := arm.expectation_rates) else None,
        "pass_at_k": {str(k): (_f(pass_at_k(n, c, k)) if k <= n else None) for k in ks},
        "pass_hat_k": {str(k): (_f(pass_hat_k(n, c, k)) if k <= n else None) for k in ks},
        "variance": _f(variance),
        "reliability": reliability_label(c, n),
        "tokens": _center(arm.tokens),
        "duration_seconds": _center(arm.durations),
        "skill_triggered_rate": _f(arm.triggered_yes / arm.triggered_seen)
        if arm.triggered_seen else None,
    }


# ---------------------------------------------------------------------------------------------
# configurations




def _intervals(series: MetricSeries, pooled: bool, nd: int = 6) -> dict[str, Any]:
    """Both readings' intervals, by reading (rate_intervals.READINGS)."""
    return {r: _iv(series.interval(pooled, r), nd) for r in READINGS}


def config_stats(cells: list[EvalCell], config: str, trials_requested: int,
                 reading: Reading = DEFAULT_READING) -> dict[str, Any]:
    ks = _ks(trials_requested)
    pass_series = MetricSeries.build(cells, config, "pass")
    rates = pass_series.means
    done = [c.arms[config] for c in cells if c.arms[config].completed]

    def avg_k(fn: Any) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for k in ks:
            vals = [fn(a.completed, a.passes, k) for a in done if k <= a.completed]
            out[str(k)] = _f(float(np.mean(vals))) if vals else None
        return out

    pr = pass_series.estimate(pooled=False, reading=reading)
    tok_series = MetricSeries.build(cells, config, "tokens")
    dur_series = MetricSeries.build(cells, config, "durations")
    tok, dur = tok_series.estimate(True, reading), dur_series.estimate(True, reading)
    all_tokens = joined(c.arms[config].tokens for c in cells)
    all_durs = joined(c.arms[config].durations for c in cells)
    return {
        "pass_rate": _f(pr.mean) if pr else None,
        "pass_rate_se": _f(pr.se) if pr else None,
        "pass_rate_interval": _iv(pr.interval) if pr else None,
        # Which reading the `interval`s are (the gate's), and both readings' intervals.
        "interval_reading": reading,
        "pass_rate_intervals": _intervals(pass_series, pooled=False),
        "pass_rate_sd_between_evals": _f(float(np.std(rates, ddof=1))) if len(rates) > 1 else None,
        "n_evals": len(rates),
        "evals_without_completed_trials": [c.eval_id for c in cells
                                           if not c.arms[config].completed],
        "trials_completed": sum(c.arms[config].completed for c in cells),
        "trials_errored": sum(c.arms[config].errored for c in cells),
        "trials_ungraded": sum(c.arms[config].ungraded for c in cells),
        "trials_requested": trials_requested * len(cells),
        "pass_at_k": avg_k(pass_at_k),
        "pass_hat_k": avg_k(pass_hat_k),
        "avg_tokens": {**_mean_estimate(tok, 2), "intervals": _intervals(tok_series, True, 2), "median": _f(np.median(all_tokens), 2)
                       if all_tokens else None},
        "avg_duration_seconds": {**_mean_estimate(dur, 4), "intervals": _intervals(dur_series, True, 4),
                                 "median": _f(np.median(all_durs), 4)
                                 if all_durs else None},
    }


# ---------------------------------------------------------------------------------------------
# paired


def _paired_cells(cells: list[EvalCell], a: str, b: str) -> tuple[list[EvalCell], list[dict]]:
    """Evals where both arms completed at least one trial, and the excluded ones with why."""
    used, excluded = [], []
    for cell in cells:
        missing = [cfg for cfg in (a, b) if not cell.arms[cfg].completed]
        if missing:
            excluded.append({"eval_id": cell.eval_id, "eval_name": cell.eval_name,
                             "reason": "no completed trials in " + " and ".join(missing)})
        else:
            used.append(cell)
    return used, excluded










def paired_stats(used: list[EvalCell], a: str, b: str, seed: int,
                 reading: Reading = DEFAULT_READING) -> dict[str, Any]:
    pa, pb = rates_of(used, a), rates_of(used, b)
    fa, fb = paired_floors(used, a, b) if used else (0.0, 0.0)
    # Each paired interval is the inversion of the sign-flip test printed beside it
    # (analyze.paired_intervals): the t interval disagreed with that test in 6.5% of random
    # scenarios, and the zero-baseline ratio passed on a pooled bound the test could not confirm.
    pd = paired_intervals.inverted_difference(pa, pb, seed, math.hypot(fa, fb))
    ratio = paired_intervals.ratio_interval(pa, pb, floor_se_a=fa, floor_se_b=fb, seed=seed,
                                            p_at_one=pd.p_value) if used else None
    improvement = paired_readings.ratio_readings(ratio, used, a, b, reading)

    def geo(attr: str, how: str) -> dict[str, Any]:
        return _geo_dict(geometric_mean_ratio(
            [_arm_center(c.arms[a], attr, how) for c in used],
            [_arm_center(c.arms[b], attr, how) for c in used]))

    return {
        "n_evals": len(used),
        "pass_rate_difference": paired_readings.difference_readings(pd, used, a, b, reading),
        "improvement_ratio": improvement,
        "token_ratio": geo("tokens", "mean"),
        "token_ratio_of_medians": geo("tokens", "median"),
        "duration_ratio": geo("durations", "mean"),
        "duration_ratio_of_medians": geo("durations", "median"),
    }


# ---------------------------------------------------------------------------------------------
# validity


def validity_flags(cells: list[EvalCell], skill: str, baseline: str,
                   excluded: list[dict]) -> list[str]:
    """Conditions under which a figure would mislead: a broken arm is an invalid measurement,
    not a 0% pass rate; a baseline that never used tools may not have had them."""
    flags: list[str] = []
    for role, cfg in (("with_skill", skill), ("baseline", baseline)):
        arms = [c.arms[cfg] for c in cells]
        recorded = sum(a.recorded for a in arms)
        if recorded == 0:
            flags.append(f"measurement invalid: no {role} trials recorded")
        elif not any(a.completed or a.ungraded for a in arms):
            flags.append(f"measurement invalid: all {role} trials errored")
        else:
            errored = sum(a.errored for a in arms)
            if errored:
                flags.append(f"{errored} of {recorded} {role} trials did not complete "
                             "(excluded from rates and variance)")
        if ungraded := sum(a.ungraded for a in arms):
            flags.append(f"measurement invalid: {ungraded} of {recorded} {role} trials ungraded (an "
                         "expectation has no verdict; excluded from pass rates, not counted as failures)")
    base, skill_arms = [c.arms[baseline] for c in cells], [c.arms[skill] for c in cells]
    if (any(a.tool_calls_seen for a in base) and any(a.tool_calls_seen for a in skill_arms)
            and not any(a.tool_calls_total for a in base) and sum(a.tool_calls_total for a in skill_arms) > 0):
        flags.append("baseline never ran a tool while with_skill did")
    if baseline == "without_skill" and (hit := [c for c in cells if c.arms[baseline].triggered_yes]):
        where = ", ".join(f"eval-{c.eval_id}: {c.arms[baseline].triggered_yes}" for c in hit)
        flags.append("measurement invalid: baseline contaminated: its agent loaded a skill named as the one "
                     f"under test, which it must not have ({where} trial(s); the run lists them)")
    if any(a.triggered_seen for a in skill_arms) and not any(a.triggered_yes for a in skill_arms):
        flags.append("skill never triggered in any with_skill trial")
    if excluded and len(excluded) < len(cells):
        flags.append(f"{len(excluded)} eval(s) excluded from paired figures: an arm had no "
                     "completed trials")
    return flags


# ---------------------------------------------------------------------------------------------
# power














# Where the true value of a paired figure can lie (the sign probability's prior is flat there,
# zero outside: analyze/assurance.py). A pass rate is in [0, 1], so:








# ---------------------------------------------------------------------------------------------
# gates
























# ---------------------------------------------------------------------------------------------
# entry points


def build_statistics(
    cells: list[EvalCell],
    skill_config: str,
    baseline_config: str,
    trials_requested: int,
    thresholds: dict[str, float | None] | None = None,
    seed: int = 0,
    min_detectable_effect: float = MIN_DETECTABLE_EFFECT,
    interval_reading: Reading = DEFAULT_READING,
) -> dict[str, Any]:
    """The benchmark's `statistics` section: per-eval intervals and reliability, suite means
    clustered by eval, the paired skill-minus-baseline comparison, validity flags, power and
    three-state gates. Deterministic for a given seed (only Monte-Carlo p-values use it).
    Built from per-eval cells (group_records), each holding an Arm for both configurations."""
    used, excluded = _paired_cells(cells, skill_config, baseline_config)
    per_eval: list[dict[str, Any]] = []
    for cell in cells:
        ps, pb = cell.arms[skill_config].pass_rate, cell.arms[baseline_config].pass_rate
        per_eval.append({
            "eval_id": cell.eval_id,
            "eval_name": cell.eval_name,
            "configurations": {cfg: arm_stats(cell.arms[cfg], trials_requested)
                               for cfg in (skill_config, baseline_config)},
            "difference": _f(ps - pb) if ps is not None and pb is not None else None,
        })
    paired = paired_stats(used, skill_config, baseline_config, seed, interval_reading)
    paired["excluded_evals"] = excluded
    base_errored = (any(c.arms[baseline_config].recorded for c in cells)
                    and not any(c.arms[baseline_config].completed for c in cells))
    if base_errored:
        paired["improvement_ratio"]["undefined_reason"] = (
            "every baseline trial errored: no baseline measurement, so the improvement ratio "
            "is skipped (spec: missing baseline)")
    return {
        "schema_version": SCHEMA_VERSION,
        "skill_configuration": skill_config,
        "baseline_configuration": baseline_config,
        "trials_requested": trials_requested,
        "n_evals": len(cells),
        "per_eval": per_eval,
        "interval_reading": interval_reading,
        "configurations": {cfg: config_stats(cells, cfg, trials_requested, interval_reading)
                           for cfg in (skill_config, baseline_config)},
        "paired": paired,
        "validity": validity_flags(cells, skill_config, baseline_config, excluded),
        "power": power_stats(used, skill_config, baseline_config, min_detectable_effect),
        "gates": gate_stats(thresholds or {}, cells, skill_config, baseline_config, used, paired, seed,
                            min_detectable_effect, interval_reading),
    }






