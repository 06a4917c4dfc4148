"""The `statistics` section of benchmark.json, and the iteration-vs-iteration comparison.

Built from TrialRecords with the pure functions in `skillassay.analyze.numerics`. It sits beside the
spec's summary/per_eval/thresholds_met and never replaces them: the spec's point figures are
the contract, this section says how far to trust them. Everything returned is plain
JSON-serialisable data (no NaN: missing figures are None, intervals are [lo, hi] lists).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from skillassay.analyze import advice_words, paired_intervals, rate_intervals
from skillassay.analyze import numerics as stats
from skillassay.analyze.rate_intervals import DEFAULT_READING, READINGS, Reading
from skillassay.stats import distributions as dists
from skillassay.stats.ufuncs import ufuncs
from skillassay.store.records import TrialRecord
from skillassay.wording import pct

SCHEMA_VERSION = 1
ALPHA = 0.05
POWER = 0.8
PASS_K_VALUES = (1, 2, 3, 5, 10)

# threshold key -> direction of the good side
GATE_DIRECTIONS: dict[str, stats.Direction] = {
    "min_pass_rate": "min",
    "max_avg_tokens": "max",
    "max_avg_duration_seconds": "max",
    "min_improvement_ratio": "min",
    "max_avg_cost_usd": "max",
}
# A mean-per-trial threshold -> the Arm's per-trial values it is gated on.
MEAN_GATES = {"max_avg_tokens": "tokens", "max_avg_duration_seconds": "durations", "max_avg_cost_usd": "costs"}


# ---------------------------------------------------------------------------------------------
# Grouping


def _values() -> array[float]:
    return array("d")


@dataclass
class Arm:
    """One eval under one configuration: the counts and the completed trials' measurements,
    accumulated one trial at a time (`skillassay aggregate` streams 200,000 runs through these
    without keeping the runs). Per-trial values sit in array('d'), 8 bytes each where a list of
    floats costs ~32, because medians and variances need every value."""

    passes: int = 0
    completed: int = 0  # completed and graded: the pass rates' denominator
    errored: int = 0
    timed_out: int = 0
    ungraded: int = 0  # completed, but an expectation has no verdict: out of the pass rates
    recorded: int = 0
    tokens: array[float] = field(default_factory=_values)
    durations: array[float] = field(default_factory=_values)
    # USD of every recorded trial whose cost is known, errored ones too (they were paid for);
    # a trial of unknown cost is counted, never taken as 0 (analyze/cost.py).
    costs: array[float] = field(default_factory=_values)
    costs_unknown: int = 0
    # Expectation pass rate of each completed trial, NaN for a trial with no expectations: one
    # array in trial order serves both the per-arm mean (NaN left out) and run_summary (NaN as 0).
    rates: array[float] = field(default_factory=_values)
    tool_calls_seen: int = 0
    tool_calls_total: int = 0
    triggered_seen: int = 0
    triggered_yes: int = 0
    # Graded trials by skill_triggered, for analyze.triggered's split (unknown: the rest).
    loaded_completed: int = 0
    loaded_passes: int = 0
    unloaded_completed: int = 0
    unloaded_passes: int = 0

    def add(self, r: TrialRecord) -> None:
        if not r.completed:
            # Errored and timed-out trials are excluded from rates and variance (spec).
            self.recorded += 1
            self.errored += 1
            self.timed_out += r.status == "timeout"
            self.add_cost(r.cost_usd)
            return
        self.add_completed(r.tokens, r.duration_seconds, r.tool_calls, r.skill_triggered, r.ungraded,
                           bool(r.passed), r.passed_count, r.total_count, r.cost_usd)

    def add_cost(self, cost: float | None) -> None:
        if cost is None:
            self.costs_unknown += 1
        else:
            self.costs.append(cost)

    def add_completed(self, tokens: float | None, duration: float | None, tool_calls: int | None,
                      triggered: bool | None, ungraded: bool, won: bool, passed: int, total: int,
                      cost: float | None = None) -> None:
        """A completed trial, from its figures: Arm.add's, and `aggregate`'s plain-run path's,
        which builds no record (workflows.iteration_reader._read_config)."""
        self.recorded += 1
        self.add_cost(cost)
        if tokens is not None:
            self.tokens.append(tokens)
        if duration is not None:
            self.durations.append(duration)
        if tool_calls is not None:
            self.tool_calls_seen += 1
            self.tool_calls_total += tool_calls
        if triggered is not None:
            self.triggered_seen += 1
            self.triggered_yes += triggered
        if ungraded:
            # Neither a pass nor a fail: its cost was measured, its result was not.
            self.ungraded += 1
            return
        self.completed += 1
        self.passes += won
        if triggered is True:
            self.loaded_completed += 1
            self.loaded_passes += won
        elif triggered is False:
            self.unloaded_completed += 1
            self.unloaded_passes += won
        self.rates.append(passed / total if total else math.nan)

    def merge(self, other: Arm) -> None:
        """Add the trials of another Arm of the same eval and configuration (read elsewhere)."""
        for name in ("passes", "completed", "errored", "timed_out", "ungraded", "recorded", "tool_calls_seen",
                     "tool_calls_total", "triggered_seen", "triggered_yes", "loaded_completed",
                     "loaded_passes", "unloaded_completed", "unloaded_passes", "costs_unknown"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tokens.extend(other.tokens)
        self.durations.extend(other.durations)
        self.costs.extend(other.costs)
        self.rates.extend(other.rates)

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.completed if self.completed else None

    @property
    def expectation_rates(self) -> list[float]:
        """Completed trials' expectation pass rates, trials without expectations left out."""
        return [x for x in self.rates if x == x]

    @property
    def run_rates(self) -> array[float]:
        """As skill-creator's run_summary counts them: a trial without expectations is 0."""
        return array("d", (x if x == x else 0.0 for x in self.rates))


def mean_or_none(xs: Sequence[float]) -> float | None:
    """The plain mean of the spec's figures (sum / n, in order), None for no values."""
    return sum(xs) / len(xs) if xs else None


def joined(parts: Iterable[array[float]]) -> array[float]:
    """Several arms' per-trial values in one packed array: suite-wide figures (medians, run
    summaries) of 200,000 trials then need 1.6 MB, not 6 MB of float objects."""
    out = _values()
    for part in parts:
        out.extend(part)
    return out


@dataclass
class EvalCell:
    eval_id: int | str
    eval_name: str
    arms: dict[str, Arm]


def group_records(records: Iterable[TrialRecord], configs: Sequence[str]) -> list[EvalCell]:
    """Evals in first-appearance order, each with an Arm for every requested configuration
    (empty when it has no records, so a missing arm is visible rather than silently absent)."""
    cells: dict[int | str, EvalCell] = {}
    wanted = set(configs)
    for r in records:
        cell = cells.get(r.eval_id)
        if cell is None:
            cell = cells[r.eval_id] = EvalCell(r.eval_id, r.eval_name, {c: Arm() for c in configs})
        if r.configuration in wanted:
            cell.arms[r.configuration].add(r)
    return list(cells.values())


# ---------------------------------------------------------------------------------------------
# Small converters


def _f(x: float | None, nd: int = 6) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else round(x, nd)


def _iv(interval: stats.Interval | None, nd: int = 6) -> list[float | None] | None:
    return None if interval is None else [_f(interval[0], nd), _f(interval[1], nd)]


def _ks(trials_requested: int) -> list[int]:
    return sorted({k for k in (*PASS_K_VALUES, trials_requested) if 1 <= k <= trials_requested})


def rates_of(cells: Iterable[EvalCell], config: str) -> list[float]:
    """Per-eval pass rates of `config`, for cells already chosen to have completed trials in it."""
    out = []
    for c in cells:
        rate = c.arms[config].pass_rate
        if rate is None:
            raise ValueError(f"eval {c.eval_id} has no completed {config} trial")
        out.append(rate)
    return out


def _center(xs: Sequence[float]) -> dict[str, float | int | None]:
    if not xs:
        return {"mean": None, "median": None, "n": 0}
    a = np.asarray(xs, dtype=float)
    return {"mean": _f(a.mean(), 4), "median": _f(np.median(a), 4), "n": len(xs)}


def _mean_estimate(est: stats.MeanEstimate | None, nd: int = 6) -> dict[str, Any]:
    if est is None:
        return {"mean": None, "se": None, "interval": None, "n_evals": 0}
    return {"mean": _f(est.mean, nd), "se": _f(est.se, nd), "interval": _iv(est.interval, nd),
            "n_evals": est.n}


def _eval_label(cell: EvalCell) -> str:
    return f"eval-{cell.eval_id} ({cell.eval_name})" if cell.eval_name else f"eval-{cell.eval_id}"


# ---------------------------------------------------------------------------------------------
# per_eval


def arm_stats(arm: Arm, trials_requested: int) -> dict[str, Any]:
    """Per-eval, per-configuration figures; None wherever nothing completed."""
    n, c = arm.completed, arm.passes
    ks = _ks(trials_requested)
    variance = stats.within_eval_variance(c, n)
    return {
        "passes": c,
        "completed": n,
        "requested": trials_requested,
        "errored": arm.errored,
        "timed_out": arm.timed_out,
        "ungraded": arm.ungraded,
        "missing": max(0, trials_requested - arm.recorded),
        "pass_rate": _f(arm.pass_rate),
        "wilson": _iv(stats.wilson_interval(c, n)),
        "expectation_pass_rate": _f(float(np.mean(rates))) if (rates := arm.expectation_rates) else None,
        "pass_at_k": {str(k): (_f(stats.pass_at_k(n, c, k)) if k <= n else None) for k in ks},
        "pass_hat_k": {str(k): (_f(stats.pass_hat_k(n, c, k)) if k <= n else None) for k in ks},
        "variance": _f(variance),
        "reliability": stats.reliability_label(c, n),
        "tokens": _center(arm.tokens),
        "duration_seconds": _center(arm.durations),
        "skill_triggered_rate": _f(arm.triggered_yes / arm.triggered_seen)
        if arm.triggered_seen else None,
    }


# ---------------------------------------------------------------------------------------------
# configurations


@dataclass
class MetricSeries:
    """Per-eval inputs of one suite figure (pass rate, tokens or duration) for one config.
    within_var[i] is eval i's per-trial sample variance, None with fewer than 2 values."""

    eval_ids: list[int | str]
    means: list[float]
    sums: list[float]
    counts: list[int]
    within_var: list[float | None]

    @classmethod
    def build(cls, cells: list[EvalCell], config: str, attr: str) -> MetricSeries:
        out = cls([], [], [], [], [])
        for cell in cells:
            arm = cell.arms[config]
            if attr == "pass":
                n, s = arm.completed, float(arm.passes)
                wv = stats.within_eval_variance(arm.passes, n)
            else:
                vals = getattr(arm, attr)
                n, s = len(vals), float(sum(vals))
                wv = float(np.var(vals, ddof=1)) if n > 1 else None
            if n == 0:
                continue
            out.eval_ids.append(cell.eval_id)
            out.means.append(s / n)
            out.sums.append(s)
            out.counts.append(n)
            out.within_var.append(wv)
        return out

    def estimate(self, pooled: bool, reading: Reading = DEFAULT_READING) -> stats.MeanEstimate | None:
        """Eval-mean (pass rate, as the spec averages per-eval rates) or trial-pooled (tokens,
        duration, as the spec pools trials), with the one interval of `reading`
        (rate_intervals: the gate decides on it and its FAIL p is the same test's). The SE is
        the eval-clustered one, floored at the binomial noise for a pass rate: the advice's."""
        if not self.means:
            return None
        est = (stats.pooled_clustered_mean(self.sums, self.counts) if pooled else stats.clustered_mean(
            self.means, bounds=(0.0, 1.0), floor_se=stats.binomial_floor_se(self.means, self.counts)))
        return stats.MeanEstimate(est.mean, est.se, self.interval(pooled, reading), est.n)

    def interval(self, pooled: bool, reading: Reading) -> stats.Interval | None:
        """The interval of one reading alone (benchmark.json records both)."""
        if not self.means:
            return None
        if pooled:
            return rate_intervals.cost_interval(self.sums, self.counts, self.within_var, reading)
        return rate_intervals.pass_rate_interval(self.pass_counts(), self.counts, reading)

    def pass_counts(self) -> list[int]:
        """Each eval's passes (a pass series' sums are its pass counts)."""
        return [round(x) for x in self.sums]

    def noise_of_means(self) -> float:
        """mean(s_e^2 / n_e) over the evals with 2 or more trials: the part of the per-eval means'
        variance that is trial noise (0.0 when no eval has two trials)."""
        parts = [w / n for w, n in zip(self.within_var, self.counts, strict=True) if w is not None]
        return float(np.mean(parts)) if parts else 0.0

    def components(self) -> tuple[float, float]:
        """(omega^2, mean per-trial variance): split the spread of per-eval means into the part
        more trials cannot shrink and the part they can. Unbiased: var(m_e) - mean(s_e^2/n_e)."""
        known = [w for w in self.within_var if w is not None]
        s2 = float(np.mean(known)) if known else 0.0
        if len(self.means) < 2:
            return 0.0, s2
        return max(0.0, float(np.var(self.means, ddof=1)) - self.noise_of_means()), s2


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
        "pass_at_k": avg_k(stats.pass_at_k),
        "pass_hat_k": avg_k(stats.pass_hat_k),
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


def _paired_diff_dict(pd: stats.PairedDifference) -> dict[str, Any]:
    return {
        "mean": _f(pd.mean), "se": _f(pd.se), "interval": _iv(pd.interval), "n_evals": pd.n,
        "n_nonzero": pd.n_nonzero, "p_value": _f(pd.p_value), "p_value_method": pd.method,
        "significance_reachable": pd.significance_reachable, "explanation": pd.explanation,
    }


def _geo_dict(g: stats.GeometricRatio) -> dict[str, Any]:
    return {"ratio": _f(g.ratio), "interval": _iv(g.interval), "n_evals_used": g.n_used,
            "n_evals_skipped": g.n_skipped, "reason": g.reason}


def _arm_center(arm: Arm, attr: str, how: str) -> float | None:
    vals = getattr(arm, attr)
    if not vals:
        return None
    return float(np.mean(vals)) if how == "mean" else float(np.median(vals))


def paired_floors(used: list[EvalCell], a: str, b: str) -> tuple[float, float]:
    """Each arm's binomial noise floor on its mean pass rate over the paired evals, with
    Agresti-Caffo's one success and one failure per arm (see numerics.binomial_floor_se)."""
    fa, fb = (stats.binomial_floor_se(rates_of(used, cfg), [c.arms[cfg].completed for c in used],
                                      pseudo=1.0) for cfg in (a, b))
    return fa, fb


def paired_stats(used: list[EvalCell], a: str, b: str, seed: int) -> dict[str, Any]:
    pa, pb = rates_of(used, a), rates_of(used, b)
    fa, fb = paired_floors(used, a, b) if used else (0.0, 0.0)
    # Each paired interval is the inversion of the sign-flip test printed beside it
    # (analyze.paired_intervals): the t interval disagreed with that test in 6.5% of random
    # scenarios, and the zero-baseline ratio passed on a pooled bound the test could not confirm.
    pd = paired_intervals.inverted_difference(pa, pb, seed, math.hypot(fa, fb))
    ratio = paired_intervals.ratio_interval(pa, pb, floor_se_a=fa, floor_se_b=fb, seed=seed,
                                            p_at_one=pd.p_value) if used else None
    if ratio is None or ratio.ratio is None:
        improvement: dict[str, Any] = {
            "value": None, "interval": None, "method": None, "n_evals": 0 if ratio is None else ratio.n,
            "undefined_reason": ("no eval has completed trials in both arms" if ratio is None
                                 else ratio.undefined_reason)}
    else:
        improvement = {"value": _f(ratio.ratio), "interval": _iv(ratio.interval),
                       "method": ratio.method, "n_evals": ratio.n, "unbounded": math.isinf(ratio.ratio),
                       "undefined_reason": ratio.undefined_reason, "se": _f(ratio.se)}

    def geo(attr: str, how: str) -> dict[str, Any]:
        return _geo_dict(stats.geometric_mean_ratio(
            [_arm_center(c.arms[a], attr, how) for c in used],
            [_arm_center(c.arms[b], attr, how) for c in used]))

    return {
        "n_evals": len(used),
        "pass_rate_difference": _paired_diff_dict(pd),
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


def _trial_noise(used: list[EvalCell], a: str, b: str) -> float | None:
    """(mean s_A^2 + mean s_B^2) / K: the part of var(d_e) that trial noise alone contributes,
    a floor under the observed spread (E evals that happen to agree do not make the effect
    noiseless). None when no eval has two completed trials in both arms (K = 1)."""
    parts = []
    for cfg in (a, b):
        arms = [c.arms[cfg] for c in used if c.arms[cfg].completed >= 2]
        if not arms:
            return None
        parts.append(float(np.mean([stats.within_eval_variance(x.passes, x.completed) or 0.0
                                    for x in arms]) / np.mean([x.completed for x in arms])))
    return sum(parts)


# The effect every size advice is planned for, unless the config says otherwise
# (BenchmarkConfig.min_detectable_effect): 10 points of pass rate (of a difference, or of a pass
# rate's distance from its threshold), 10% of a token or duration threshold.
MIN_DETECTABLE_EFFECT = 0.1


def power_stats(used: list[EvalCell], a: str, b: str,
                effect: float = MIN_DETECTABLE_EFFECT) -> dict[str, Any]:
    """Evals that would detect a true skill-vs-baseline difference of `effect` (either way) with
    80% power: a planning figure, not a test. It is sized for a planned effect, not for the
    observed one: a size computed from the pilot's own difference (post-hoc power, or assurance
    over the values the pilot allows) cannot keep an 80% promise at the true difference, since
    it is small exactly when the pilot overstated the effect; through the library such sizing
    delivered 62-74% where the pilot cannot tell the sign well and 85-89% where it can
    (benchmarks/advice_power.py; Hoenig & Heisey 2001, Am. Stat. 55:19; Lenth 2001, Am. Stat.
    55:187: plan for an effect that matters). The pilot gives only the spread of the per-eval
    differences, read as the median-unbiased sigma (assurance.median_sigma_ratio), for the test
    that decides, the exact sign-flip test, never below what it needs (6 differing
    evals, more when ties are common). At a true difference larger than `effect` the power is
    higher."""
    condition = f"the true difference is at least {_points(effect)} either way"
    out: dict[str, Any] = {"alpha": ALPHA, "power": POWER, "observed_difference": None,
                           "detectable_difference": effect, "sign_probability": None,
                           "planned_power": None, "promise": promise(condition),
                           "trials_per_arm": None, "trials_per_arm_reason": None,
                           "evals_needed": None, "evals_needed_reason": None}
    if not used:
        out["trials_per_arm_reason"] = out["evals_needed_reason"] = "no paired evals"
        return out
    pa = np.array([c.arms[a].pass_rate for c in used], dtype=float)
    pb = np.array([c.arms[b].pass_rate for c in used], dtype=float)
    d = pa - pb
    delta = float(d.mean())
    out["observed_difference"] = _f(delta)
    n = stats.trials_per_arm(float(pa.mean()), float(pb.mean()), ALPHA, POWER)
    out["trials_per_arm"] = n
    if n is None:
        out["trials_per_arm_reason"] = "observed pass rates are equal: nothing to detect"
    if math.isclose(delta, 0.0, abs_tol=1e-9):
        # Sums of thirds that are 0 come out as 1e-17 in floats: that is no difference at all.
        out["evals_needed_reason"] = "observed pass rates are equal: no difference to detect"
        return out
    if len(used) < 2:
        out["evals_needed_reason"] = (
            "fewer than 2 paired evals: the spread of differences is unknown")
        return out
    sd = float(d.std(ddof=1))
    sd_plan = _planning_sd(sd, _trial_noise(used, a, b))
    out["sd_of_differences"] = _f(sd)
    differing = int(np.count_nonzero(~np.isclose(d, 0.0, atol=1e-9))) / len(used)
    floor = stats.evals_with_differing(differing)
    if sd_plan == 0 or floor is None:
        out["evals_needed_reason"] = "differences do not vary between evals: their spread cannot be estimated"
        return out
    out["sign_probability"] = _f(_sign_probability(delta, sd_plan, len(used), difference_range(float(pb.mean()))))
    evals, power_at = _planned_evals(effect, sd_plan, len(used), _lattice_step(used, a, b))
    if evals is None:
        from skillassay.analyze.assurance import MAX_SIZE

        out["evals_needed_reason"] = (f"detecting a difference of {_points(effect)} would take "
                                      f"more than {MAX_SIZE:,} evals")
        return out
    out["evals_needed"] = advice_words.about(max(evals, floor))
    out["planned_power"] = _f(power_at(evals), 4)  # at the sizing's own size: _planned_evals says why
    out["promise"] = promise(condition, out["planned_power"])
    return out


def _points(effect: float) -> str:
    return f"{effect * 100:.3g} pts"


def _planning_sd(sd: float, noise: float | None) -> float:
    """The spread to size fresh evals on: the sample sd (the sizing reads sigma from it,
    assurance.median_sigma_ratio); the trial noise only when every difference is the same (sd 0),
    where the sample says nothing."""
    return sd if sd > 0 else math.sqrt(noise or 0.0)


def _lattice_step(used: list[EvalCell], a: str, b: str, thr: float = 1.0) -> float:
    """The grid the paired differences a_e - thr b_e lie on: the greatest common divisor of
    1 / completed_a and thr / completed_b over the evals (1/3 at 3 trials per eval, 1 at one),
    from the trial counts rather than the observed values, which on few evals can share a
    coarser grid by chance. 0 when thr is not a simple fraction (no grid to speak of)."""
    r = Fraction(thr).limit_denominator(1000)
    if abs(float(r) - thr) > 1e-9:
        return 0.0
    steps = {Fraction(1, c.arms[a].completed) for c in used} | {
        r / c.arms[b].completed for c in used}
    num = math.gcd(*(f.numerator for f in steps))
    den = math.lcm(*(f.denominator for f in steps))
    return num / den


# Where the true value of a paired figure can lie (the sign probability's prior is flat there,
# zero outside: analyze/assurance.py). A pass rate is in [0, 1], so:


def difference_range(baseline_mean: float, ratio: float = 1.0) -> tuple[float, float]:
    """Where the mean of a_e - ratio * b_e can lie, both arms' true mean pass rates being in
    [0, 1]: [-ratio * mu_b, 1 - ratio * mu_b], with the baseline's mean mu_b taken as observed.
    That plug-in is what keeps the range one interval in the figure's own units; its error (the
    baseline mean's SE, 0.1 at 5 Beta(2,2) evals) moves the edges by less than the figure's own
    SE (0.15-0.3 there), and it errs to either side alike. The observed mean always lies inside
    (observed rates are in [0, 1] too)."""
    return -ratio * baseline_mean, 1.0 - ratio * baseline_mean


def _sign_probability(mean: float, sd: float, m: int, bounds: tuple[float, float]) -> float:
    """The probability that the true mean is on the side the data put it (flat prior over
    `bounds`): a reading of how sure the run is of the direction, not part of the sizing."""
    from skillassay.analyze import assurance

    se = sd / math.sqrt(m)
    return assurance.fresh_ceiling(mean / se, m, (bounds[0] / se, bounds[1] / se))


def _planned_evals(effect: float, sd: float, m: int, step: float | None, undecided: bool = False,
                   cut: Callable[[int], float] | None = None, known_sd: bool = False,
                   hull: bool = False) -> tuple[int | None, Callable[[int], float]]:
    """Fresh evals with 80% power at the planned `effect` (figure units), from a pilot of m evals
    with sd `sd`: the sign-flip test on a lattice of `step` (figure units), or a t interval with
    step None; `undecided` when only undecided pilots get this advice (a gate's), whose sd is
    then read as such (assurance.undecided_sigma_ratio); `cut`: a second bar the mean must clear
    at n evals (figure units); `known_sd` when sd is known, not read from the pilot; `hull` for
    a pass rate's beta-binomial interval (assurance.hull_t_crit). Also the
    planned power at any size, for the note to state. The paired callers state it at the size
    found here, not at the size their floor of 6 differing evals raises it to: that floor binds
    for pilots whose sd came out small, where the plan's power at the raised size is near 100%
    and the truth's is not (stated there, K = 3, 5 evals, +0.15 promised 82.2% on average and
    delivered 75.1%); a floor only adds power, so the figure is a lower bound. _gap_advice
    states it at the size it gives (its floor, one eval more than the pilot, says why)."""
    from skillassay.analyze import assurance

    args = (effect / sd, m, None if step is None else step / sd)
    kw: dict[str, Any] = {"undecided": undecided, "known_sd": known_sd, "hull": hull,
                          "cut": None if cut is None else (lambda n: cut(n) / sd)}
    return (assurance.evals_for_power(*args, **kw),
            lambda n: assurance.planned_power(args[0], m, n, args[2], **kw))


# ---------------------------------------------------------------------------------------------
# gates


def promise(condition: str, power: float = POWER) -> str:
    """What the power of a size advice is: at the planned effect, not at the estimate
    (power_stats says why), and at the size given, which can be well above 80% where one eval
    more moves it by 10-20 points (assurance.planned_power). Rounded down, so it never states
    more than was planned."""
    return (f"{_percent_down(power)} power if {condition}, at the spread these evals show; "
            "more if it is further, less if it is nearer "
            "(set min_detectable_effect in the config to plan for another size)")


def _percent_down(power: float) -> str:
    """A planned power as a whole percent, rounded down (1e-9 keeps 0.8 from printing 79%)."""
    return f"{math.floor(power * 100 + 1e-9)}%"


def gap_planned(key: str, threshold: float, effect: float) -> tuple[float, str]:
    """The planned distance from the threshold, in the figure's units, and the promise's
    condition: `effect` in pass-rate points for min_pass_rate, a fraction of the threshold for
    token counts and durations (10% of a 1,000-token budget is 100 tokens)."""
    if key == "min_pass_rate":
        return effect, f"the true pass rate is at least {_points(effect)} from {threshold:g}"
    unit = {"max_avg_tokens": "tokens", "max_avg_cost_usd": "USD"}.get(key, "s")
    gap = effect * threshold
    return gap, f"the true mean is at least {pct(effect)} of the threshold ({gap:.4g} {unit}) from {threshold:g}"


MIN_EVALS_FOR_TRIALS_ADVICE = 10  # fewer, and a pass rate's trials advice is not promised (_gap_advice)


def _trials_advice(series: MetricSeries, gap: float, n_evals: int, p_plan: float, pass_rate: bool, hull: bool,
                   cut_trials: Callable[[int], float] | None) -> tuple[int | None, float | None, str]:
    """(trials per eval, their planned power, why none: "" | "spread uncertain" | "few evals") for
    _gap_advice: more trials on the same evals, promised only where the plan can be kept."""
    from skillassay.analyze import assurance

    noise = series.noise_of_means()
    k_now = float(np.mean(series.counts))
    spread = float(np.var(series.means, ddof=1))
    # A pass rate's trial noise is known at the planned truth, as at one trial per eval: an
    # eval at rate p has per-trial variance p (1 - p), at most p_plan (1 - p_plan) there. Read
    # from the pilot instead, it came from the few pilots whose evals tie (all 1/3 or 2/3 at
    # 3 trials, the ones trials can decide), whose within-eval variance is 1/3 against 1/4,
    # and the advice passed 96% of re-runs where it promised 81% (every eval at 0.5).
    plan_noise = p_plan * (1 - p_plan) / k_now if pass_rate else noise
    trials = assurance.trials_for_power(gap, spread, plan_noise, n_evals, k_now, cut=cut_trials, hull=hull,
                                        undecided=True)
    omega2, s2 = series.components()
    # Trials are promised only if the between-eval spread, at its 95% upper bound, would not
    # keep the interval too wide whatever the trials: the pilot tells that spread from trial
    # noise poorly (at 3 trials its variance of means often comes out below the noise). On
    # Beta(2,2) evals (benchmarks/advice_power.py, K = 3, 5-10 evals) trials promised
    # without it decided 0-57% of the time, and with the spread's 80% bound 13 of 33 (with
    # every eval at the same rate, where trials are the right advice, 75-100%): so trials
    # are seldom promised, and the note says why.
    # The bound is taken on the variance of means floored at the trial noise, which it is at
    # least in expectation: on the lattice of K + 1 values per eval it reads 0 (every eval at
    # 1/3) far more often than its chi-square allows, and a bound of 0 let through Beta(2,2)
    # evals that tied by chance: at 3 trials x 10 evals they were promised 83% and passed 43%
    # of re-runs (benchmarks/advice_power.py).
    spread_hi = stats.planning_variance(max(spread, plan_noise), n_evals - 1, level=0.95)
    if trials is not None and stats.trials_per_eval_to_decide(
            max(0.0, spread_hi - plan_noise), s2, n_evals, gap, power=POWER) is None:
        trials = None
    # "More trials alone cannot decide it" only when that holds at the planned distance.
    at_planned = stats.trials_per_eval_to_decide(omega2, s2, n_evals, gap, power=POWER)
    why_not = "spread uncertain" if trials is None and at_planned is not None else ""
    if trials is not None and trials <= max(series.counts):
        trials = None  # already run: the distance is nearer than planned, not the noise
    if trials is not None and hull and n_evals < MIN_EVALS_FOR_TRIALS_ADVICE:
        # Below 10 evals the interval's beta-binomial part decides at many trials, and its
        # width there is not one the model above tracks (assurance.hull_t_crit's normal
        # form was 9 points off either way at 5 evals: 81% planned where re-runs passed 90%,
        # 33% where they passed 24%); at 10-20 evals the advice kept within 3 points
        # (benchmarks/advice_power.py, every eval at 0.5). More evals are the advice there.
        trials, why_not = None, "few evals"
    if trials is None:
        return None, None, why_not
    return trials, _f(assurance.planned_trials_power(gap, spread, plan_noise, n_evals, k_now, trials,
                                                     cut=cut_trials, hull=hull, undecided=True), 4), why_not


def _gap_advice(est_mean: float, threshold: float, series: MetricSeries | None, n_evals: int,
                se: float | None, planned: tuple[float, str], pass_rate: bool = False) -> dict[str, Any]:
    """How many trials per eval (at the current number of evals) or how many evals (at the
    current trials per eval) would decide the gate with 80% power if the true value is the
    planned distance from the threshold (`planned`: gap_planned; power_stats says why a planned
    distance and not the estimate's). Between-eval spread is not reduced by more trials, so
    sometimes only more evals help; that is said only when it holds at the planned distance, and
    not at one trial per eval, where the two kinds of spread cannot be told apart.

    `pass_rate`: the figure is a pass rate, whose interval has the binomial floor under its SE
    (a second bar the advice must clear). At one trial per eval its per-eval values are 0 or 1:
    their sd at a true rate p is sqrt(p (1 - p)) whatever the evals, so it is taken at the
    planned truth (the side nearer 0.5) instead of read from the pilot, whose sd over 5-20
    values of 0 and 1 varies far less than a chi-square says (read as one, the advice delivered
    83-88% at K = 1, benchmarks/advice_power.py)."""
    from skillassay.analyze import assurance

    gap, condition = planned
    note_sure = promise(condition)
    none: dict[str, Any] = {"trials_to_decide": None, "evals_to_decide": None, "promise": note_sure,
                            "planned_power": None, "trials_planned_power": None, "trials_promise": None,
                            "trials_if_alike": None}
    if math.isclose(est_mean, threshold, rel_tol=1e-9, abs_tol=1e-12):  # and no power promised beside it
        return {**none, "promise": None, "decide_note": "the estimate sits on the threshold: no sample size decides it"}
    if se is None or n_evals < 2:
        return {**none, "decide_note": "fewer than 2 evals: add evals to get an interval at all"}
    if se <= 0 or gap <= 0:
        return {**none, "decide_note": "the evals do not vary: their spread cannot be estimated"}
    cut: Callable[[int], float] | None = None
    cut_trials: Callable[[int], float] | None = None
    p_plan = 0.5
    # A pass rate's interval with 2+ trials per eval is the beta-binomial one: sized on its width.
    hull = pass_rate and series is not None and any(c > 1 for c in series.counts)
    if pass_rate:
        # The interval's SE never falls below the binomial floor at the planned truth (the side
        # nearer 0.5, where it is widest), so the advice must clear that as well: without it,
        # evals that all share one rate at 10 trials were advised sizes that decided 70-78%.
        p_plan = max((p for p in (threshold + gap, threshold - gap) if 0 <= p <= 1),
                     key=lambda p: p * (1 - p), default=0.5)
        k_now = float(np.mean(series.counts)) if series is not None else 1.0

        def floor_bar(n: int, k: float) -> float:
            """t times the floor SE of n evals at k trials each, at the planned truth."""
            return float(dists.t_ppf(0.975, n - 1)) * stats.binomial_floor_se(np.full(n, p_plan), np.full(n, k))

        # More evals at the current trials, or more trials on the current evals.
        cut, cut_trials = (lambda n: floor_bar(n, k_now)), (lambda k: floor_bar(n_evals, k))
    if pass_rate and series is not None and all(c == 1 for c in series.counts):
        sd = math.sqrt(p_plan * (1 - p_plan))
        found, power_at = (_planned_evals(gap, sd, n_evals, None, known_sd=True, cut=cut) if sd > 0
                           else (None, lambda n: 0.0))
    else:
        found, power_at = _planned_evals(gap, se * math.sqrt(n_evals), n_evals, None, undecided=True, cut=cut,
                                         hull=hull)
    evals = None if found is None else advice_words.about(max(found, n_evals + 1))
    # Stated at the size advised, after the one-more-eval floor: that floor binds when the plan
    # says the pilot's own size would do (the pilot is undecided because its estimate fell near
    # the threshold, not for want of evals), and a fresh run of that size at the planned truth
    # has the plan's power there. Stated before it, K = 10 x 20 evals at a gap of 0.2 said 82%
    # and passed 28 of 28 re-runs (the plan at 21 evals: 86-99%). The paired floor (6 differing
    # evals, power_stats) is different: it binds for pilots whose sd came out small.
    evals_power = None if evals is None else _f(power_at(evals), 4)
    if evals_power is not None:
        note_sure = promise(condition, evals_power)
    trials: int | None = None
    trials_power: float | None = None
    why_not = ""
    trial_noise_known = series is not None and any(w is not None for w in series.within_var)
    if series is not None and trial_noise_known:
        trials, trials_power, why_not = _trials_advice(series, gap, n_evals, p_plan, pass_rate, hull, cut_trials)
    # A pass rate's trials advice holds only if the evals share one rate, as they look to, and
    # no pilot can show that: Beta(2,2) evals that happened to tie at 3 trials x 20 evals were
    # promised 90% and passed 63% of re-runs (benchmarks/advice_power.py; every eval at 0.5,
    # where the condition holds, 92%). So it is not advice (trials_to_decide) but a figure
    # with its condition said (trials_if_alike); the evals advice is what is promised.
    if_alike = None
    if pass_rate and trials is not None:
        if_alike, trials = trials, None
    # One short sentence a person can act on ("likely": the planned power, at least 80%, is in
    # planned_power and promise); why trials cannot be promised goes to decide_detail.
    if evals is None:
        note = f"more than {assurance.MAX_SIZE:,} evals would be needed to decide it if {condition}"
    elif trials is not None:
        note = f"about {trials} trials per eval, or about {evals} evals, would likely decide it if {condition}"
    else:
        note = f"about {evals} evals would likely decide it if {condition}"
    if if_alike is not None:
        note += f" (or about {if_alike} trials per eval, if the evals share one pass rate)"
    detail = {"few evals": f"at {n_evals} evals how far more trials narrow the interval cannot be planned",
              "spread uncertain": f"at {n_evals} evals the spread between evals is too uncertain to promise trials"
              }.get(why_not, "")
    if series is not None and not trial_noise_known:
        detail = "at one trial per eval the spread between evals and the trial noise cannot be told apart"
    elif series is not None and trials is None and if_alike is None and not why_not:
        detail = "more trials per eval alone cannot decide it: the spread between evals dominates"
    return {"trials_to_decide": trials, "evals_to_decide": evals, "decide_note": note, "decide_detail": detail,
            "promise": note_sure, "planned_power": evals_power, "trials_planned_power": trials_power,
            "trials_if_alike": if_alike,
            # The trials' own promise: the evals' (`promise`) states the power at the evals advised.
            "trials_promise": None if trials is None or trials_power is None else promise(condition, trials_power)}


def _ratio_advice(used: list[EvalCell], skill: str, baseline: str, thr: float,
                  effect: float) -> dict[str, Any]:
    """Evals that would decide the ratio gate with 80% power if the skill's true pass rate is
    `effect` above (or, when the estimate is below, below) thr times the baseline's: it decides
    when the paired sign-flip test of z_e = a_e - thr * b_e rejects (ratio_decision) and its
    interval clears thr, so the advice is that test's, sized as power_stats sizes the
    difference's (never below 6 differing evals), with the interval's noise floor as a second
    bar (paired_intervals.ratio_floor_cut). _gap_advice on the delta method's SE stacked a variance
    bound on a safeguard effect and advised 10 to 500 times what a paired t test needs (0.6 vs
    0.4 at K = 3, 6 evals: 334 to 16,671 evals)."""
    a = np.array(rates_of(used, skill))
    b = np.array(rates_of(used, baseline))
    z = a - thr * b
    mean = float(z.mean()) if z.size else 0.0
    side = 1.0 if mean >= 0 else -1.0  # the side the estimate is on: where the floor is planned
    condition = (f"the skill's true pass rate is at least {_points(effect)} "
                 f"{'above' if side > 0 else 'below'} {thr:g} x the baseline's")
    note_sure = promise(condition)
    none = {"trials_to_decide": None, "evals_to_decide": None, "promise": note_sure, "planned_power": None}
    if z.size < 2 or math.isclose(mean, 0.0, abs_tol=1e-9):  # and no power promised beside it
        return {**none, "promise": None, "decide_note": advice_words.NO_SIZE_DECIDES}
    noise = _trial_noise(used, skill, baseline)
    if noise is not None and thr != 1.0:
        # z's trial noise: the baseline arm's share scales with thr^2.
        sa = _trial_noise(used, skill, skill) or 0.0
        sb = _trial_noise(used, baseline, baseline) or 0.0
        noise = (sa + thr**2 * sb) / 2
    sd = _planning_sd(float(z.std(ddof=1)), noise)
    nonzero = int(np.count_nonzero(~np.isclose(z, 0.0, atol=1e-9)))
    floor = stats.evals_with_differing(nonzero / z.size)
    if sd == 0 or floor is None:
        return {**none, "promise": None, "decide_note": "cannot be decided by more trials or evals at this estimate"}
    mb = float(b.mean())
    k_a, k_b = (float(np.mean([c.arms[cfg].completed for c in used])) for cfg in (skill, baseline))
    step = _lattice_step(used, skill, baseline, thr)
    # The floor depends on the planned rates (wider nearer 0.5), so it is planned on the side the
    # estimate is on: planned for the wider side whichever it was, the advice delivered 87-90%
    # where the truth lay on the other (tests/analyze/test_advice.py).
    # A planned rate of 0 or less (below a small baseline) has no floor part to clear: the
    # skill never passing, the test alone decides.
    ma = min(1.0, thr * mb + side * effect)
    # Read the sd as an undecided pilot's only if this pilot could have been decided: with fewer
    # than 6 non-zero z_e the sign-flip test cannot reject (p >= 0.0625), so being undecided
    # selected nothing, and reading it as such shrank the advice (72-74% at 5 evals x 10 trials).
    found, power_at = _planned_evals(effect, sd, z.size, step,
                                     undecided=nonzero >= stats.MIN_NONZERO_FOR_SIGNIFICANCE,
                                     cut=None if ma <= 0 else (lambda n: paired_intervals.ratio_floor_cut(ma, mb, thr, n, k_a, k_b)))
    if found is None:
        from skillassay.analyze.assurance import MAX_SIZE

        return {**none, "decide_note": advice_words.too_many(MAX_SIZE, condition)}
    evals = advice_words.about(max(found, floor, z.size + 1))
    power = round(power_at(found), 4)
    return {**none, "evals_to_decide": evals, "planned_power": power, "promise": promise(condition, power),
            "decide_note": advice_words.would_decide(evals, condition)}


def ratio_decision(used: list[EvalCell], skill: str, baseline: str, thr: float,
                   interval: stats.Interval | None, seed: int,
                   paired_p: float | None = None) -> tuple[stats.Decision, float | None]:
    """The ratio gate decides only when its interval and the paired sign-flip test of
    a_e - thr * b_e agree (at thr = 1 that test is the pass-rate difference's own, `paired_p`),
    so the verdict can never say "better" while the test beside it says it cannot tell."""
    if thr == 1.0 and paired_p is not None:
        p: float | None = paired_p
    else:
        p = stats.ratio_test_p(rates_of(used, skill), rates_of(used, baseline), thr, seed=seed)
    decision = stats.decide(interval, thr, "min")
    if decision != "INCONCLUSIVE" and (p is None or p >= ALPHA):
        decision = "INCONCLUSIVE"
    # A PASS at a threshold >= 1 says the skill is better, a FAIL at <= 1 that it is worse: both
    # claim what the pass-rate difference's own test must then confirm (its p is paired_p).
    claims_difference = (decision == "PASS" and thr >= 1) or (decision == "FAIL" and thr <= 1)
    if claims_difference and paired_p is not None and paired_p >= ALPHA:
        decision = "INCONCLUSIVE"
    return decision, p


def _t_sf(x: float, df: int) -> float:
    """P(T > x) for Student's t with df degrees of freedom."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

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
        interval: stats.Interval | None = None
        se: float | None = None
        n_evals = 0
        series: MetricSeries | None = None
        responsible: list[str] = []
        reason: str | None = None
        if key == "min_pass_rate":
            series = MetricSeries.build(cells, skill, "pass")
            est = series.estimate(pooled=False, reading=reading)
            responsible = [_eval_label(c) for c in cells if c.arms[skill].pass_rate is not None
                           and not stats.plain_comparison(c.arms[skill].pass_rate, thr, "min")]
        elif key in MEAN_GATES:
            attr = MEAN_GATES[key]
            series = MetricSeries.build(cells, skill, attr)
            est = series.estimate(pooled=True, reading=reading)
            responsible = [_eval_label(c) for c in cells
                           if (m := _arm_center(c.arms[skill], attr, "mean")) is not None
                           and not stats.plain_comparison(m, thr, "max")]
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
        decision = stats.decide(interval, thr, direction) if value is not None else "INCONCLUSIVE"
        test_p = None
        if key == "min_improvement_ratio" and value is not None:
            decision, test_p = ratio_decision(used, skill, baseline, thr, interval, seed,
                                              paired["pass_rate_difference"]["p_value"])
        entry: dict[str, Any] = {
            "threshold": thr, "direction": direction, "value": _f(value),
            "interval": _iv(interval), "n_evals": n_evals, "decision": decision,
            "plain": stats.plain_comparison(value, thr, direction),
            "evals_responsible": responsible, "reason": reason,
            "trials_to_decide": None, "evals_to_decide": None, "decide_note": None, "promise": None,
            "planned_power": None,
        }
        if key == "min_improvement_ratio":
            entry["test_p_value"] = _f(test_p)
            entry["unbounded"] = value is not None and math.isinf(value)
        else:
            entry["reading"] = reading  # which population the interval is about (rate_intervals)
        # The FAIL call as a one-sided p-value, so the gate can hold its FAIL calls to a
        # family-wise level across the checks it makes (gate.holm_fail_levels). Only a FAIL needs
        # one: a check that does not fail at its own 2.5% fails at no Holm level either.
        entry["fail_p_value"] = (_f(_fail_p(key, thr, value, se, n_evals, series, used, skill, baseline,
                                            test_p, paired, reading), 8) if decision == "FAIL" else None)
        if decision == "INCONCLUSIVE" and value is not None:
            entry.update(_ratio_advice(used, skill, baseline, thr, effect) if key == "min_improvement_ratio"
                         else _gap_advice(value, thr, series, n_evals, se, gap_planned(key, thr, effect),
                                          pass_rate=key == "min_pass_rate"))
        gates[key] = entry
    return gates


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
    paired = paired_stats(used, skill_config, baseline_config, seed)
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


def _majority(arm: Arm) -> str | None:
    """The spec's per-eval PASS/FAIL from K trials: more than half passed (a tie is FAIL)."""
    if not arm.completed:
        return None
    return "PASS" if 2 * arm.passes > arm.completed else "FAIL"


def _change_label(p_reg_adj: float | None, p_imp_adj: float | None, before: Arm, after: Arm,
                  q: float) -> str:
    if p_reg_adj is not None and p_reg_adj <= q:
        return "regressed"
    if p_imp_adj is not None and p_imp_adj <= q:
        return "improved"
    rb, ra = before.pass_rate, after.pass_rate
    if rb is None or ra is None or math.isclose(rb, ra):
        return "unchanged"
    return "possible regression" if ra < rb else "possible improvement"


def compare_iterations(
    current: list[TrialRecord],
    previous: list[TrialRecord],
    config: str,
    q: float = 0.10,
    seed: int = 0,
) -> dict[str, Any]:
    """Iteration N vs N-1 for one configuration: the spec's raw flips, kept and shown, and the
    statistical call per eval (one-sided Boschloo, BH across evals at FDR q), so a one-trial
    wobble at K = 3 is reported as "possible", with the trials that would settle it."""
    cur = {c.eval_id: c for c in group_records(current, (config,))}
    prev = {c.eval_id: c for c in group_records(previous, (config,))}
    common = [e for e in prev if e in cur]
    unmatched = ([{"eval_id": e, "in": "previous only"} for e in prev if e not in cur]
                 + [{"eval_id": e, "in": "current only"} for e in cur if e not in prev])

    rows, p_reg, p_imp = [], [], []
    for e in common:
        b, a = prev[e].arms[config], cur[e].arms[config]
        pr, pi = stats.one_sided_exact_p(b.passes, b.completed, a.passes, a.completed,
                                         only_observed_direction=True)
        p_reg.append(pr)
        p_imp.append(pi)
        rows.append((e, b, a))
    adj_reg, adj_imp = stats.bh_adjust(p_reg), stats.bh_adjust(p_imp)

    per_eval: list[dict[str, Any]] = []
    for i, (e, b, a) in enumerate(rows):
        mb, ma = _majority(b), _majority(a)
        label = _change_label(adj_reg[i], adj_imp[i], b, a, q)
        n_settle = None
        if b.pass_rate is not None and a.pass_rate is not None:
            n_settle = stats.trials_per_arm(b.pass_rate, a.pass_rate, ALPHA, POWER)
        per_eval.append({
            "eval_id": e, "eval_name": cur[e].eval_name,
            "before": {"passes": b.passes, "completed": b.completed, "pass_rate": _f(b.pass_rate)},
            "after": {"passes": a.passes, "completed": a.completed, "pass_rate": _f(a.pass_rate)},
            "counts": f"{b.passes}/{b.completed} -> {a.passes}/{a.completed}",
            "raw_flip": f"{mb}->{ma}" if mb and ma else None,
            "p_regression": _f(p_reg[i]), "p_improvement": _f(p_imp[i]),
            "p_regression_adjusted": _f(adj_reg[i]), "p_improvement_adjusted": _f(adj_imp[i]),
            "label": label,
            "trials_per_arm_to_settle": n_settle,
            "additional_trials_per_arm": None if n_settle is None
            else max(0, n_settle - min(a.completed, b.completed)),
        })

    used = [e for e in common if prev[e].arms[config].completed and cur[e].arms[config].completed]
    pa, pb = rates_of((cur[e] for e in used), config), rates_of((prev[e] for e in used), config)

    def geo(attr: str) -> dict[str, Any]:
        return _geo_dict(stats.geometric_mean_ratio(
            [_arm_center(cur[e].arms[config], attr, "mean") for e in used],
            [_arm_center(prev[e].arms[config], attr, "mean") for e in used]))

    def ids(label: str) -> list[int | str]:
        return [r["eval_id"] for r in per_eval if r["label"] == label]

    return {
        "schema_version": SCHEMA_VERSION,
        "configuration": config,
        "q": q,
        "per_eval": per_eval,
        "raw_regressions": [r["eval_id"] for r in per_eval if r["raw_flip"] == "PASS->FAIL"],
        "raw_improvements": [r["eval_id"] for r in per_eval if r["raw_flip"] == "FAIL->PASS"],
        "regressed": ids("regressed"),
        "possible_regressions": ids("possible regression"),
        "improved": ids("improved"),
        "possible_improvements": ids("possible improvement"),
        "unmatched_evals": unmatched,
        "suite": {
            "n_evals": len(used),
            "pass_rate_delta": _paired_diff_dict(paired_intervals.inverted_difference(pa, pb, seed)),
            "token_ratio": geo("tokens"),
            "duration_ratio": geo("durations"),
        },
    }
