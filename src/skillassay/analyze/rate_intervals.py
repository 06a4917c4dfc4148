"""One interval per per-configuration figure, and the one-sided test it inverts (docs/statistics.md).

Two readings, named once: "evals like these" (the population the evals were drawn from: the
gate's default) and "these evals" (the fixed set the author wrote: only trial noise). Each
figure has one method per reading, and the gate's FAIL p-value is that method's own test, so
its PASS/FAIL/INCONCLUSIVE and the printed interval cannot disagree. Pure functions over numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.beta_binomial import beta_binomial_mean_interval, beta_binomial_mean_p
from skillassay.stats.binomial import clopper_pearson_interval
from skillassay.stats.lognormal import lognormal_mean_interval, lognormal_mean_p_at_most
from skillassay.stats.means import binomial_floor_se, clustered_mean, pooled_clustered_mean
from skillassay.stats.types import Interval
from skillassay.stats.ufuncs import ufuncs

Reading = Literal["population", "these_evals"]
READINGS: tuple[Reading, ...] = ("population", "these_evals")
DEFAULT_READING: Reading = "population"
# The one short phrase printed beside every per-configuration interval.
READING_PHRASE: dict[str, str] = {"population": "evals like these", "these_evals": "these evals"}


def reading_phrase(reading: object) -> str:
    """The phrase for a recorded reading; a file from before readings: the population's."""
    return READING_PHRASE.get(str(reading), READING_PHRASE[DEFAULT_READING])


def _effective_counts(passes: Sequence[int], trials: Sequence[int]) -> tuple[float, float]:
    """(passes, trials) of the one binomial whose proportion is the mean of the per-eval rates
    and whose variance at that rate bounds the mean's: n_eff = E^2 / sum(1/n_e) (Kish). With
    equal trials per eval it is the pooled count itself."""
    n = np.asarray(trials, dtype=float)
    c = np.asarray(passes, dtype=float)
    n_eff = n.size**2 / float((1.0 / n).sum())
    return float((c / n).mean()) * n_eff, n_eff


def _cp(c: float, n: float, conf: float) -> Interval:
    """Clopper-Pearson on possibly fractional counts (the beta quantiles accept them)."""
    special = ufuncs()
    tail = (1 - conf) / 2
    lo = 0.0 if c <= 1e-12 else float(special.betaincinv(c, n - c + 1, tail))
    hi = 1.0 if c >= n - 1e-12 else float(special.betaincinv(c + 1, n - c, 1 - tail))
    return (lo, hi)


def _cp_p_at_least(c: float, n: float, x: float) -> float:
    """P(a count at most c | rate x): the one-sided p that the rate is at least x, so that
    _cp's upper end is below x exactly when this is below (1 - conf) / 2."""
    if c >= n - 1e-12 or x <= 0:
        return 1.0
    if x >= 1:
        return 0.0
    return float(ufuncs().betainc(n - c, c + 1, 1 - x))


def _kept(passes: Sequence[int], trials: Sequence[int]) -> tuple[list[int], list[int]]:
    pairs = [(int(c), int(n)) for c, n in zip(passes, trials, strict=True) if n > 0]
    return [c for c, _ in pairs], [n for _, n in pairs]


# From this many evals on, the population pass rate's test with 2+ trials per eval also needs the
# eval-clustered t test to reject: alone, the beta-binomial interval missed the mix of
# calibration.py (a quarter of evals at exactly 0, a quarter at 1: no Beta) 2.85% / 3.05% of the
# time at 50 evals x 10 trials (2,000 draws), joined 2.40% / 2.20%; below it the t part only
# widened (5 evals: 12% wider, misses 0-0.7% either way). docs/statistics.md has the table.
T_JOINS_AT = 21


def _floored_t(c: Sequence[int], n: Sequence[int], conf: float) -> Interval | None:
    """The eval-clustered t interval with its binomial floor, from T_JOINS_AT evals on."""
    if len(n) < T_JOINS_AT:
        return None
    rates = np.array(c, dtype=float) / np.array(n, dtype=float)
    return clustered_mean(rates, conf, bounds=(0.0, 1.0), floor_se=binomial_floor_se(rates, n)).interval


def pass_rate_interval(passes: Sequence[int], trials: Sequence[int], reading: Reading = DEFAULT_READING,
                       conf: float = 0.95) -> Interval | None:
    """The suite pass rate's interval (None with fewer than 2 evals). Method and measurements:
    docs/statistics.md, "analyze/rate_intervals.pass_rate_interval"."""
    c, n = _kept(passes, trials)
    if len(n) < 2:
        return None
    if reading == "these_evals":
        return _cp(*_effective_counts(c, n), conf)
    if all(k == 1 for k in n):
        return clopper_pearson_interval(sum(c), len(n), conf)
    bb = beta_binomial_mean_interval(c, n, conf)
    t = _floored_t(c, n, conf)
    if bb is None or t is None:
        return bb
    return (min(bb[0], t[0]), max(bb[1], t[1]))


def pass_rate_p_at_least(passes: Sequence[int], trials: Sequence[int], x: float,
                         reading: Reading = DEFAULT_READING) -> float:
    """One-sided p-value that the pass rate is at least x, from the test pass_rate_interval
    inverts: its upper end is below x at level conf exactly when this is below (1 - conf) / 2."""
    c, n = _kept(passes, trials)
    if len(n) < 2:
        return 1.0
    if reading == "these_evals":
        return _cp_p_at_least(*_effective_counts(c, n), x)
    if all(k == 1 for k in n):
        return _cp_p_at_least(float(sum(c)), float(len(n)), x)
    p_bb = beta_binomial_mean_p(c, n, x, "at least")
    if len(n) < T_JOINS_AT:
        return p_bb
    rates = np.array(c, dtype=float) / np.array(n, dtype=float)
    se = max(float(rates.std(ddof=1)) / math.sqrt(rates.size), binomial_floor_se(rates, n))
    mean = float(rates.mean())
    p_t = (1.0 if mean >= x else 0.0) if se == 0 else float(ufuncs().stdtr(rates.size - 1, (mean - x) / se))
    return max(p_bb, p_t)


# ---------------------------------------------------------------------------------------------
# Costs: tokens, durations


def _trial_noise_se(sums: np.ndarray, counts: np.ndarray, within_var: Sequence[float | None]) -> tuple[float, float]:
    """(SE, df) of the pooled mean sum(S_e)/N given these evals: trial noise only,
    var = sum(n_e s_e^2) / N^2, with the degrees of freedom of the eval with fewest trials: the
    Satterthwaite df (Welch, Biometrika 34, 1947) missed the drawn evals' mean above 3.3-3.5% of
    the time where 2.5% is allowed, as the largest eval's variance, read from few skewed trials,
    dominates the sum (docs/statistics.md)."""
    total = float(counts.sum())
    var = float(sum(n * float(w or 0.0) for n, w in zip(counts, within_var, strict=True))) / total**2
    return math.sqrt(max(var, 0.0)), float(counts.min() - 1)


def stats_exp(x: float) -> float:
    """exp that says unbounded instead of overflowing."""
    return math.exp(x) if x < 709.0 else math.inf


def _cost_evals(sums: Sequence[float], counts: Sequence[int], within_var: Sequence[float | None],
                ) -> tuple[np.ndarray, np.ndarray, list[float | None]] | None:
    """(sums, counts, within-eval variances) of the evals with trials, or None with fewer than 2:
    the one filter cost_interval and the test it inverts (cost_p_at_most) both read through."""
    s, n = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    keep = n > 0
    wv = [w for w, k in zip(within_var, keep, strict=True) if k]
    return (s[keep], n[keep], wv) if len(wv) >= 2 else None


def cost_interval(sums: Sequence[float], counts: Sequence[int], within_var: Sequence[float | None],
                  reading: Reading = DEFAULT_READING, conf: float = 0.95) -> Interval | None:
    """Interval for a mean cost (tokens, seconds; None with fewer than 2 evals). Method and
    measurements: docs/statistics.md, "analyze/rate_intervals.cost_interval"."""
    kept = _cost_evals(sums, counts, within_var)
    if kept is None:
        return None
    s, n, wv = kept
    mean = float(s.sum() / n.sum())
    if reading == "these_evals":
        if any(w is None for w in wv):
            return None
        se, df = _trial_noise_se(s, n, wv)
        if se == 0 or mean <= 0:
            return (mean, mean + float(dists.t_ppf((1 + conf) / 2, df)) * se)
        # On the log scale (costs scatter multiplicatively): the upper end reaches further.
        half = float(dists.t_ppf((1 + conf) / 2, df)) * se / mean
        return (mean * math.exp(-half), stats_exp(math.log(mean) + half))
    est = pooled_clustered_mean(s, n, conf)
    assert est.interval is not None
    lo, hi = est.interval
    if bool(np.all(s > 0)):
        log_lo, log_hi = lognormal_mean_interval(s / n, conf)
        lo, hi = min(lo, log_lo), max(hi, log_hi)
    return (max(0.0, lo), hi)


def cost_p_at_most(sums: Sequence[float], counts: Sequence[int], within_var: Sequence[float | None], x: float,
                   reading: Reading = DEFAULT_READING) -> float | None:
    """One-sided p-value that the mean cost is at most x, from the test cost_interval inverts."""
    kept = _cost_evals(sums, counts, within_var)
    if kept is None:
        return None
    s, n, wv = kept
    special = ufuncs()
    mean = float(s.sum() / n.sum())
    if reading == "these_evals":
        if any(w is None for w in wv):
            return None
        se, df = _trial_noise_se(s, n, wv)
        if x <= 0:
            return 0.0
        if se == 0 or mean <= 0:
            return 1.0 if mean <= x else 0.0
        return float(special.stdtr(df, -math.log(mean / x) * mean / se))
    est = pooled_clustered_mean(s, n)
    p_t = (1.0 if mean <= x else 0.0) if not est.se else float(special.stdtr(est.n - 1, -(mean - x) / est.se))
    return max(p_t, lognormal_mean_p_at_most(s / n, x)) if bool(np.all(s > 0)) else p_t
