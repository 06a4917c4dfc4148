"""The paired-by-eval difference and its sign-flip permutation test (docs/statistics.md,
"Comparing two arms")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.means import _as_float_array, clustered_mean
from skillassay.stats.sign_flip import EXACT_MAX_NONZERO, MIN_NONZERO_FOR_SIGNIFICANCE, MONTE_CARLO_RESAMPLES
from skillassay.stats.types import Interval


@dataclass(frozen=True)
class PairedDifference:
    """Mean of paired per-eval differences A - B, with a sign-flip permutation p-value."""

    mean: float
    se: float | None
    interval: Interval | None
    n: int
    n_nonzero: int
    p_value: float | None
    method: str  # "exact sign-flip", "monte-carlo sign-flip (N resamples, seed S)", "none"
    significance_reachable: bool
    explanation: str


def _on_integer_grid(d: np.ndarray, max_denominator: int = 10_000) -> np.ndarray:
    """Rescale differences of pass rates (fractions like 1/3 - 2/3) to exact integers.

    In floats, sums of thirds that are 0 in exact arithmetic come out as +-5e-17, and scipy's
    relative tie tolerance then misses ties when the observed mean is 0 (p 0.95 instead of
    1). Integers sum exactly, so equal sums tie exactly. Values not on a small grid are
    returned unchanged.
    """
    fracs = [Fraction(float(x)).limit_denominator(max_denominator) for x in d]
    if any(abs(float(f) - x) > 1e-9 for f, x in zip(fracs, d, strict=True)):
        return d
    scale = math.lcm(*(f.denominator for f in fracs)) if fracs else 1
    if scale > 2**20:
        return d
    return np.array([float(f * scale) for f in fracs])


def sign_flip_p_value(
    diffs: Sequence[float] | np.ndarray,
    seed: int = 0,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
    n_resamples: int = MONTE_CARLO_RESAMPLES,
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
) -> tuple[float | None, str]:
    """Sign-flip permutation p-value of mean(diffs) = 0 (two-sided unless `alternative` says
    "greater": mean > 0, or "less"), and the method used.

    Zero differences are dropped before the test: flipping the sign of 0 changes nothing, and
    the mean over all evals is the sum of the non-zero ones over a constant, so the p-value is
    identical while the enumeration shrinks from 2**E to 2**m.
    """
    d = _on_integer_grid(_as_float_array(diffs))
    nz = d[d != 0]
    if nz.size == 0:
        return 1.0, "exact sign-flip (all differences zero)"
    if nz.size == 1:
        # Two sign assignments: two-sided both are equally extreme; one-sided the observed one
        # is the more extreme of the two in its own direction only. scipy needs two observations.
        if alternative == "two-sided":
            return 1.0, "exact sign-flip"
        return (0.5 if (nz[0] > 0) == (alternative == "greater") else 1.0), "exact sign-flip"
    # distributions.sign_flip_test is scipy.stats.permutation_test's "samples" test, step for
    # step (identical p-values, tests/analyze/test_distributions.py), without importing scipy.stats.
    if nz.size <= exact_max_nonzero:
        return dists.sign_flip_test(nz, alternative=alternative)[0], "exact sign-flip"
    p, _ = dists.sign_flip_test(nz, n_resamples=n_resamples, batch=2_000,  # bounded memory
                               rng=np.random.default_rng(seed), alternative=alternative)
    return p, f"monte-carlo sign-flip ({n_resamples} resamples, seed {seed})"


def paired_difference(
    p_a: Sequence[float] | np.ndarray,
    p_b: Sequence[float] | np.ndarray,
    conf: float = 0.95,
    seed: int = 0,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
    bounds: Interval | None = None,
    floor_se: float = 0.0,
) -> PairedDifference:
    """Paired-by-eval difference A - B: mean, SE sd(d)/sqrt(E), t interval, sign-flip p.

    The permutation test rather than a paired t-test because with a handful of evals the
    t-test is anti-conservative on bounded, lumpy pass-rate differences. `floor_se`: as in
    clustered_mean (for a difference, the two arms' binomial floors in quadrature).
    """
    a, b = _as_float_array(p_a), _as_float_array(p_b)
    if a.shape != b.shape:
        raise ValueError("paired_difference needs equally long inputs")
    if a.size == 0:
        return PairedDifference(
            math.nan, None, None, 0, 0, None, "none", False, "no paired evals to compare"
        )
    d = a - b
    est = clustered_mean(d, conf, bounds=bounds, floor_se=floor_se)
    m = int(np.count_nonzero(d))
    p, method = sign_flip_p_value(d, seed=seed, exact_max_nonzero=exact_max_nonzero)
    reachable = m >= MIN_NONZERO_FOR_SIGNIFICANCE
    if reachable:
        explanation = (
            f"{method} test over {m} evals with a non-zero difference "
            f"({d.size - m} ties dropped)"
        )
    else:
        smallest = min(1.0, 2.0 / 2**m) if m else 1.0
        explanation = (
            f"only {m} eval(s) differ between the arms; the smallest attainable p-value is "
            f"{smallest:.4g}, so p < 0.05 is unreachable — this is not evidence of no effect, "
            "only too few differing evals to show one"
        )
    return PairedDifference(est.mean, est.se, est.interval, est.n, m, p, method, reachable,
                            explanation)
