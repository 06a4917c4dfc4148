"""The lognormal mean's generalized interval and p-value, for costs (docs/statistics.md,
"Tokens and duration")."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from skillassay.stats.means import _as_float_array
from skillassay.stats.types import Interval

# Draws of the generalized pivotal quantity: the interval's ends then move by well under 1% of
# its width between seeds; fixed-seeded so the same data always give the same interval.
GPQ_DRAWS = 20_000


@functools.lru_cache(maxsize=64)
def _gpq_draws(n: int, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The pivot's N(0, 1) and chi2(n - 1) draws, which depend on nothing but n: drawn once."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(draws), rng.chisquare(n - 1, draws)


def lognormal_mean_interval(means: Sequence[float] | np.ndarray, conf: float = 0.95,
                            draws: int = GPQ_DRAWS, seed: int = 0) -> Interval:
    """Interval for the mean of positive, right-skewed per-eval values (costs), from their logs:
    Krishnamoorthy & Mathew's (2003) generalized confidence interval for a lognormal mean. Method
    and measurements: docs/statistics.md, "stats/lognormal.lognormal_mean_interval"."""
    y = np.log(_as_float_array(means))
    n = int(y.size)
    s2 = float(y.var(ddof=1))
    if s2 == 0:
        m = math.exp(float(y.mean()))
        return (m, m)
    z, u2 = _gpq_draws(n, draws, seed)
    # The pivot: mu's and sigma^2's generalized pivotal quantities at the observed mean and s^2.
    t = float(y.mean()) - z * math.sqrt(s2 / n) / np.sqrt(u2 / (n - 1)) + 0.5 * s2 * (n - 1) / u2
    lo, hi = np.quantile(t, [(1 - conf) / 2, (1 + conf) / 2])
    # Few, widely spread values (2 evals whose durations differ tenfold) put the upper bound
    # past a float's range: it is unbounded, not a crash.
    return (_exp_or_inf(float(lo)), _exp_or_inf(float(hi)))


def _exp_or_inf(x: float) -> float:
    return math.exp(x) if x < 709.0 else math.inf


def lognormal_mean_p_at_most(means: Sequence[float] | np.ndarray, x: float,
                             draws: int = GPQ_DRAWS, seed: int = 0) -> float:
    """The generalized p-value that the lognormal mean is at most `x`: the share of the pivot's
    draws at or below log(x), so `lognormal_mean_interval`'s lower end is above `x` exactly when
    this is below (1 - conf) / 2. The gate's Holm step needs the FAIL side as a p-value. A
    ceiling of 0 or below: a lognormal mean is positive, so it is never at most that (p 0)."""
    if x <= 0:
        return 0.0
    y = np.log(_as_float_array(means))
    n = int(y.size)
    s2 = float(y.var(ddof=1))
    if s2 == 0:
        return 1.0 if math.exp(float(y.mean())) <= x else 0.0
    z, u2 = _gpq_draws(n, draws, seed)
    t = float(y.mean()) - z * math.sqrt(s2 / n) / np.sqrt(u2 / (n - 1)) + 0.5 * s2 * (n - 1) / u2
    return float(np.mean(t <= math.log(x)))
