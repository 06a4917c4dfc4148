"""Means over evals: the eval-clustered mean and its t interval, the binomial noise floor
under it, and the trial-pooled mean (docs/statistics.md, "Means over evals")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.types import Interval


@dataclass(frozen=True)
class MeanEstimate:
    """A mean over evals with its eval-clustered SE and t(E-1) interval (None when E < 2)."""

    mean: float
    se: float | None
    interval: Interval | None
    n: int


def _as_float_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=float).ravel()


def _t_interval(mean: float, se: float, df: int, conf: float) -> Interval:
    if se == 0:
        return (mean, mean)
    lo, hi = dists.t_interval(conf, df, loc=mean, scale=se)
    return (float(lo), float(hi))


def clustered_mean(
    values: Sequence[float] | np.ndarray,
    conf: float = 0.95,
    bounds: Interval | None = None,
    floor_se: float = 0.0,
) -> MeanEstimate:
    """Mean of per-eval values with SE sd(ddof=1)/sqrt(E) and a t(E-1) interval.

    This is the eval-clustered SE (equal to statsmodels OLS on a constant with
    cov_type="cluster" when every eval has the same K), and the t interval is honest with few
    evals where a normal interval would be too narrow. `bounds` clips the interval to the
    parameter's range (a pass rate cannot be below 0), which only removes impossible values.
    `floor_se` (see binomial_floor_se) keeps the SE from falling below the trial-level noise
    when the evals happen to agree exactly (all 3/3: sd 0, an interval [1, 1]).
    """
    x = _as_float_array(values)
    if x.size == 0:
        raise ValueError("clustered_mean needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return MeanEstimate(mean, None, None, int(x.size))
    se = max(float(x.std(ddof=1) / math.sqrt(x.size)), floor_se)
    lo, hi = _t_interval(mean, se, x.size - 1, conf)
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return MeanEstimate(mean, se, (lo, hi), int(x.size))


def binomial_floor_se(rates: Sequence[float] | np.ndarray, trials: Sequence[int] | np.ndarray,
                      pseudo: float = 2.0) -> float:
    """The smallest honest SE of a mean of per-eval pass rates: the one it would have if all the
    trials were independent draws at the pooled rate. Method and measurements: docs/statistics.md,
    "stats/means.binomial_floor_se"."""
    p, n = _as_float_array(rates), _as_float_array(trials)
    keep = n > 0
    p, n = p[keep], n[keep]
    if p.size == 0:
        return 0.0
    n_eff = p.size**2 / float((1.0 / n).sum())
    shrunk = (float(p.mean()) * n_eff + pseudo) / (n_eff + 2 * pseudo)
    return math.sqrt(shrunk * (1 - shrunk) / n_eff)


def pooled_clustered_mean(
    sums: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray, conf: float = 0.95,
) -> MeanEstimate:
    """Trial-weighted mean sum(S_e)/sum(n_e) with the eval-clustered SE and a t(G-1) interval.

    The spec's avg_tokens / avg_duration pool trials, so the interval must be around that same
    figure; the SE is statsmodels' OLS cluster SE on a constant, sqrt(G/(G-1) sum_e
    (S_e - n_e m)^2) / N, which reduces to sd(m_e)/sqrt(G) when every eval has the same n.
    The cost intervals the gates use are rate_intervals.cost_interval's.
    """
    s, n = _as_float_array(sums), _as_float_array(counts)
    keep = n > 0
    s, n = s[keep], n[keep]
    if s.size == 0:
        raise ValueError("pooled_clustered_mean needs at least one non-empty eval")
    total = float(n.sum())
    mean = float(s.sum() / total)
    g = int(s.size)
    if g < 2:
        return MeanEstimate(mean, None, None, g)
    se = math.sqrt(g / (g - 1) * float(((s - n * mean) ** 2).sum())) / total
    return MeanEstimate(mean, se, _t_interval(mean, se, g - 1, conf), g)
