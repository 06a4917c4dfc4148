"""Rates within one eval: binomial intervals (Wilson, Clopper-Pearson), pass@k and
pass^k, within-eval variance and the reliability label. Method notes: docs/statistics.md."""

from __future__ import annotations

import functools
import math

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.types import Interval
from skillassay.stats.ufuncs import ufuncs

RELIABILITY_HIGH = "High"


RELIABILITY_LOW = "Low (investigate)"


RELIABILITY_UNRELIABLE = "unreliable"


@functools.lru_cache(maxsize=16_384)
def wilson_interval(c: int, n: int, conf: float = 0.95) -> Interval | None:
    """Wilson score interval for c passes in n trials.

    Wilson rather than Wald because at K = 3 the Wald interval collapses to a point at 0/3 and
    3/3, which would claim certainty the data cannot give. None when nothing completed.
    Remembered: a pure function of two small integers that repeat across evals, and each
    statsmodels call costs ~0.3 ms (a fifth of build_statistics at 50 evals).
    """
    if n <= 0:
        return None
    lo, hi = _wilson_bounds(c, n, 1 - conf)
    # At 0/n and n/n the bound is exactly 0 or 1; float noise would put it a hair inside.
    lo = 0.0 if c == 0 else max(0.0, float(lo))
    hi = 1.0 if c == n else min(1.0, float(hi))
    return (lo, hi)


def _wilson_bounds(c: int, n: int, alpha: float) -> tuple[float, float]:
    """statsmodels' proportion_confint(c, n, alpha, method="wilson"), step for step on the same
    numpy types, so the bounds are bit-identical (tests/stats/test_binomial.py compares them): importing
    statsmodels for these six lines costs 0.4-0.9 s (it pulls in pandas), which `aggregate`
    paid on every call to beat skill-creator's script."""
    count, nobs = np.asarray(c), np.asarray(n)
    q = count / nobs
    crit = dists.norm_isf(alpha / 2.0)
    crit2 = crit**2
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))


def _check_counts(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k fresh trials passes) from c of n.

    Computed as a product rather than with big binomials so it stays exact for large n.
    """
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all k fresh trials pass) from c of n: "works every time"."""
    _check_counts(n, c, k)
    if c < k:
        return 0.0
    return math.comb(c, k) / math.comb(n, k)


def within_eval_variance(c: int, k: int) -> float | None:
    """Unbiased per-trial variance of pass/fail within one eval, c(K-c)/(K(K-1)).

    Non-zero means the eval is non-deterministic under this configuration. None when fewer
    than two trials completed (the spec's "unreliable").
    """
    if k < 2:
        return None
    return c * (k - c) / (k * (k - 1))


def reliability_label(c: int, completed: int) -> str:
    """The spec's variance-analysis label for one eval."""
    variance = within_eval_variance(c, completed)
    if variance is None:
        return RELIABILITY_UNRELIABLE
    return RELIABILITY_HIGH if variance == 0 else RELIABILITY_LOW


def clopper_pearson_interval(c: int, n: int, conf: float = 0.95) -> Interval:
    """The exact binomial interval (Clopper & Pearson, Biometrika 26, 1934): each side misses
    at most (1 - conf) / 2 of the time for every true rate, where a t or Wald interval on a
    0/1 sample overshoots it by discreteness (3.3% at 50 trials and a true 0.5, 4.8% at 0.8)."""
    special = ufuncs()  # scipy.special's betaincinv, without the package's import cost

    tail = (1 - conf) / 2
    lo = 0.0 if c == 0 else float(special.betaincinv(c, n - c + 1, tail))
    hi = 1.0 if c == n else float(special.betaincinv(c + 1, n - c, 1 - tail))
    return (lo, hi)
