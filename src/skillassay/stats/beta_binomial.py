"""The beta-binomial (random-effects) model of per-eval pass counts: its mean's profile-likelihood
interval and p-value, the population reading of a suite pass rate with 2+ trials per eval
(analyze/rate_intervals.py). Method notes: docs/statistics.md."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.types import Interval
from skillassay.stats.ufuncs import ufuncs

_LOG_PHI_BOUNDS = (-9.0, 12.0)  # precision a + b of the eval-rate Beta: 1e-4 (rho ~ 1) to 1.6e5 (binomial)


_MU_EPS = 1e-9


# Two one-dimensional searches written here rather than taken from scipy.optimize: importing
# scipy.optimize costs 0.23-0.35 CPU-s on this machine (it pulls in scipy.linalg, scipy.sparse
# and scipy.special's whole namespace), a tenth of what `skillassay aggregate` may spend on
# 20,000 runs to stay within skill-creator's script (issue 17), for a golden-section search
# and a bisection that are ten lines each. tests/analyze/test_interval_coverage.py checks them
# against scipy.optimize's minimize_scalar(method="bounded") and brentq on many count vectors.
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _golden_min(f: Callable[[float], float], lo: float, hi: float, xatol: float) -> tuple[float, float]:
    """(x, f(x)) minimising a unimodal f on [lo, hi] to within xatol (golden-section search;
    Kiefer, Proc. AMS 4, 1953), as scipy's bounded method assumes unimodality too."""
    a, b = lo, hi
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    while b - a > xatol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    candidates = [(fc, c), (fd, d), (f(lo), lo), (f(hi), hi)]  # a maximum at a bound is common
    fx, x = min(candidates)
    return x, fx


def _bisect_root(f: Callable[[float], float], a: float, b: float, xtol: float) -> float:
    """The root of f between a and b (f(a), f(b) of opposite signs), by bisection to xtol."""
    fa = f(a)
    while b - a > xtol:
        m = 0.5 * (a + b)
        fm = f(m)
        if fm == 0:
            return m
        if (fm < 0) == (fa < 0):
            a, fa = m, fm
        else:
            b = m
    return 0.5 * (a + b)


def _bb_profile(c: np.ndarray, n: np.ndarray, mu: float) -> float:
    """The log-likelihood at mean `mu`, maximised over the Beta's precision. The beta-binomial
    log-likelihood (without the binomial coefficients, which cancel in ratios) is written out in
    the search's function, with what does not change between its ~40 calls computed once: the
    simulations call it millions of times."""
    betaln = ufuncs().betaln  # scipy.special's ufuncs without its package import (stats.ufuncs)
    fails = n - c

    def neg_loglik(log_phi: float) -> float:
        phi = math.exp(log_phi)
        a, b = mu * phi, (1.0 - mu) * phi
        return -float((betaln(c + a, fails + b) - betaln(a, b)).sum())

    _, neg = _golden_min(neg_loglik, *_LOG_PHI_BOUNDS, xatol=1e-5)
    return -neg


def _bb_arrays(key: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, np.ndarray]:
    """(passes, trials) of a _bb_key as float arrays."""
    return (np.array([c for c, _ in key], dtype=float), np.array([n for _, n in key], dtype=float))


@functools.lru_cache(maxsize=4096)
def _bb_fit(counts: tuple[tuple[int, int], ...]) -> tuple[float, float]:
    """(mu_hat, max log-likelihood); remembered, as the gate asks again for what config_stats
    computed (the likelihood does not depend on the evals' order, so the key is sorted)."""
    c, n = _bb_arrays(counts)
    if c.sum() == 0:
        return 0.0, 0.0  # every trial failed: the supremum, approached as mu -> 0, is 0
    if c.sum() == n.sum():
        return 1.0, 0.0
    x, neg = _golden_min(lambda m: -_bb_profile(c, n, m), _MU_EPS, 1 - _MU_EPS, xatol=1e-7)
    return x, -neg


def _bb_key(passes: Sequence[int], trials: Sequence[int]) -> tuple[tuple[int, int], ...]:
    return tuple(sorted((int(c), int(n)) for c, n in zip(passes, trials, strict=True) if n > 0))


def _bb_deviance(key: tuple[tuple[int, int], ...], mu: float) -> float:
    """2 (max log-likelihood - profile log-likelihood at mu): the likelihood-ratio statistic."""
    c, n = _bb_arrays(key)
    _, lmax = _bb_fit(key)
    mu = min(max(mu, _MU_EPS), 1 - _MU_EPS)
    return max(0.0, 2.0 * (lmax - _bb_profile(c, n, mu)))


@functools.lru_cache(maxsize=4096)
def _bb_interval(key: tuple[tuple[int, int], ...], conf: float) -> Interval:
    crit = float(dists.t_ppf((1 + conf) / 2, len(key) - 1)) ** 2
    mhat = min(max(_bb_fit(key)[0], _MU_EPS), 1 - _MU_EPS)

    def excess(mu: float) -> float:
        return _bb_deviance(key, mu) - crit

    lo = 0.0 if mhat <= 2 * _MU_EPS or excess(_MU_EPS) <= 0 else float(
        _bisect_root(excess, _MU_EPS, mhat, xtol=1e-8))
    hi = 1.0 if mhat >= 1 - 2 * _MU_EPS or excess(1 - _MU_EPS) <= 0 else float(
        _bisect_root(excess, mhat, 1 - _MU_EPS, xtol=1e-8))
    return (lo, hi)


def beta_binomial_mean_interval(passes: Sequence[int], trials: Sequence[int],
                                conf: float = 0.95) -> Interval | None:
    """Interval for the mean pass rate of the population of evals, from a beta-binomial random-
    effects model (each eval's rate drawn from a Beta, its passes binomial given the rate; Skellam,
    JRSS B 10, 1948; Crowder, "Beta-binomial anova for proportions", Applied Statistics 27, 1978):
    the profile-likelihood interval for the Beta's mean (Venzon & Moolgavkar, Applied Statistics 37,
    1988), its signed root compared to t(E - 1) rather than N(0, 1), so that with few evals it is
    calibrated like the t interval it sits beside. Method and measurements: docs/statistics.md,
    "stats/beta_binomial.beta_binomial_mean_interval"."""
    key = _bb_key(passes, trials)
    if len(key) < 2:
        return None
    return _bb_interval(key, conf)


def beta_binomial_mean_p(passes: Sequence[int], trials: Sequence[int], x: float,
                         side: Literal["at least", "at most"]) -> float:
    """One-sided p-value that the mean is `side` x, consistent with beta_binomial_mean_interval:
    its upper end is below x at level conf exactly when the "at least" p is below (1 - conf) / 2
    (the gate's Holm step needs a FAIL as a p-value). 1 when the estimate is on x's side."""
    key = _bb_key(passes, trials)
    if len(key) < 2:
        return 1.0
    mhat = _bb_fit(key)[0]
    if (side == "at least" and mhat >= x) or (side == "at most" and mhat <= x):
        return 1.0
    root = math.sqrt(_bb_deviance(key, x))
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    return float(special.stdtr(len(key) - 1, -root))
