"""Ratios of paired per-eval values: the improvement ratio of means, its sign-flip test at a
given ratio, and the geometric-mean ratio of costs (docs/statistics.md, "Comparing two arms")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from skillassay.stats.means import _as_float_array, _t_interval, clustered_mean
from skillassay.stats.paired import sign_flip_p_value
from skillassay.stats.types import Interval
from skillassay.wording import UNBOUNDED


@dataclass(frozen=True)
class RatioEstimate:
    """mean(A) / mean(B) over paired evals, or None with the reason it is undefined."""

    ratio: float | None
    interval: Interval | None
    method: str
    n: int
    undefined_reason: str | None = None
    se: float | None = None  # delta-method SE; None for the bootstrap or E < 2


def zero_baseline_reason(mean_a: float) -> str:
    """Why a ratio over a baseline mean of 0 has no value, in the words used everywhere
    (wording.UNBOUNDED): unbounded when the skill passed something, else there is no ratio."""
    if mean_a > 0:
        return f"the baseline passed nothing, so the ratio is {UNBOUNDED}"
    return "neither arm passed anything, so there is no ratio (0 over 0)"


def ratio_of_means(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    conf: float = 0.95,
    method: Literal["delta", "bootstrap"] = "delta",
    seed: int = 0,
    n_resamples: int = 9_999,
) -> RatioEstimate:
    """Ratio of eval-mean rates (the spec's improvement ratio) with an interval over evals.

    Delta method: Var(R) ~ var(a_e - R b_e) / (E mean(b)^2), a t(E-1) interval, clipped at 0
    since rates cannot be negative. The paired bootstrap resamples evals (seeded) and uses
    percentiles, which copes with resamples whose baseline mean is 0 (ratio = inf).
    """
    x, y = _as_float_array(a), _as_float_array(b)
    if x.shape != y.shape:
        raise ValueError("ratio_of_means needs equally long inputs")
    if x.size == 0:
        return RatioEstimate(None, None, method, 0, "no paired evals")
    mb = float(y.mean())
    if mb == 0:
        return RatioEstimate(None, None, method, int(x.size), zero_baseline_reason(float(x.mean())))
    r = float(x.mean() / mb)
    if x.size < 2:
        return RatioEstimate(r, None, method, int(x.size))
    if method == "delta":
        z = x - r * y
        se = float(z.std(ddof=1) / math.sqrt(x.size) / mb)
        lo, hi = _t_interval(r, se, x.size - 1, conf)
        return RatioEstimate(r, (max(0.0, lo), hi), "delta method, t(E-1)", int(x.size), None,
                             se)
    if method == "bootstrap":
        from scipy import stats as sps

        def stat(xs: np.ndarray, ys: np.ndarray, axis: int = -1) -> np.ndarray:
            num, den = xs.mean(axis=axis), ys.mean(axis=axis)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)

        with np.errstate(invalid="ignore"):  # resamples with an all-zero baseline give inf: expected
            res = sps.bootstrap(
                (x, y), stat, paired=True, vectorized=True, n_resamples=n_resamples,
                confidence_level=conf, method="percentile", rng=np.random.default_rng(seed),
            )
        ci = res.confidence_interval
        return RatioEstimate(
            r, (float(ci.low), float(ci.high)),
            f"paired bootstrap percentile ({n_resamples} resamples, seed {seed})", int(x.size),
        )
    raise ValueError(f"unknown method {method!r}")


def ratio_test_p(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, r0: float,
                 seed: int = 0) -> float | None:
    """Two-sided sign-flip p-value of mean(a) / mean(b) = r0, on z_e = a_e - r0 b_e.

    At r0 = 1 this is exactly the paired test of the pass-rate difference (the same function on
    the same numbers), which is what lets the ratio's verdict never contradict that test.
    """
    x, y = _as_float_array(a), _as_float_array(b)
    if x.size == 0:
        return None
    return sign_flip_p_value(x - r0 * y, seed=seed)[0]


@dataclass(frozen=True)
class GeometricRatio:
    """Geometric-mean ratio A/B of per-eval values, from a t interval on log ratios."""

    ratio: float | None
    interval: Interval | None
    n_used: int
    n_skipped: int
    reason: str | None = None


def geometric_mean_ratio(
    t_a: Sequence[float | None], t_b: Sequence[float | None], conf: float = 0.95
) -> GeometricRatio:
    """Tokens/duration ratio as exp(mean log(t_A/t_B)) over evals.

    Logs because costs are multiplicative and heavy-tailed: one slow eval should not dominate
    the suite figure. Evals where either value is missing, zero or negative cannot give a log
    ratio and are skipped; how many is reported.
    """
    if len(t_a) != len(t_b):
        raise ValueError("geometric_mean_ratio needs equally long inputs")
    logs = [
        math.log(x / y)
        for x, y in zip(t_a, t_b, strict=True)
        if x is not None and y is not None and np.isfinite(x) and np.isfinite(y)
        and x > 0 and y > 0
    ]
    used, skipped = len(logs), len(t_a) - len(logs)
    if used == 0:
        return GeometricRatio(None, None, 0, skipped, "no eval has a positive value in both arms")
    est = clustered_mean(logs, conf)
    interval = None
    if est.interval is not None:
        interval = (math.exp(est.interval[0]), math.exp(est.interval[1]))
    return GeometricRatio(math.exp(est.mean), interval, used, skipped)
