"""The few distribution functions and the sign-flip permutation test the statistics need, from
`scipy.special` and numpy instead of `scipy.stats`.

Why by hand: importing `scipy.stats` costs about 1.3 CPU-s on the 2-core machine the benchmarks
run on (its distributions module builds ~120 distribution objects at import), where
`scipy.special` costs 0.35; `skillassay aggregate` of a 20,000-run iteration paid that import
on every call, and it was what kept the command slower than skill-creator's script. The
quantiles here are the very ufuncs scipy.stats' distributions call underneath
(`norm._ppf` is `ndtri`, `t._ppf` is `stdtrit`, `chi2._ppf` is `2 * gammaincinv`, `binom._sf`
is the Boost `_binom_sf` ufunc), wrapped in the same argument checks and the same
`value * scale + loc` arithmetic, so every result is bit-identical to scipy.stats'
(tests/analyze/test_distributions.py compares them over many inputs). The permutation test repeats
`scipy.stats.permutation_test(..., permutation_type="samples")`'s steps for one sample on the
same numpy calls (same index arrays, same random stream, same memory layout for np.mean, same
tolerance and p-value formula), so its p-values are identical too.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from skillassay.stats.ufuncs import ufuncs

# scipy.special's ufuncs are loaded in the functions, on first use, by stats.ufuncs (0.02 CPU-s
# where `import scipy.special` costs 0.25): `aggregate` calls stats/ufuncs.preload() once its reader
# processes are forked, so even that runs beside the reading (the workers never need it).

Alternative = Literal["two-sided", "greater", "less"]


def _quantile(q: float, ok: bool, lower: float, upper: float, compute: float, loc: float = 0.0,
              scale: float = 1.0) -> np.float64:
    """rv_continuous.ppf's cases for one scalar: nan for bad shape/scale/loc or q outside
    [0, 1], the support's ends at q = 0 and 1, else the quantile times scale plus loc."""
    if not (ok and scale > 0 and loc == loc):  # noqa: PLR0124 - loc == loc is scipy's NaN test
        return np.float64(np.nan)
    if q == 0:
        return np.float64(lower * scale + loc)
    if q == 1:
        return np.float64(upper * scale + loc)
    if not 0 < q < 1:
        return np.float64(np.nan)
    return np.float64(compute * np.float64(scale) + np.float64(loc))


def norm_ppf(q: float) -> np.float64:
    """scipy.stats.norm.ppf(q)."""
    special = ufuncs()

    return _quantile(q, True, -np.inf, np.inf, special.ndtri(q) if 0 < q < 1 else 0.0)


def norm_isf(q: float) -> np.float64:
    """scipy.stats.norm.isf(q): -ndtri(q), as scipy computes it (not ndtri(1 - q))."""
    special = ufuncs()

    if q == 1:
        return np.float64(-np.inf)
    if q == 0:
        return np.float64(np.inf)
    if not 0 < q < 1:
        return np.float64(np.nan)
    return np.float64(-special.ndtri(q) * np.float64(1.0) + np.float64(0.0))


def t_ppf(q: float, df: float, loc: float = 0.0, scale: float = 1.0) -> np.float64:
    """scipy.stats.t.ppf(q, df, loc, scale)."""
    special = ufuncs()

    ok = df > 0
    return _quantile(q, ok, -np.inf, np.inf, special.stdtrit(df, q) if ok and 0 < q < 1 else 0.0, loc, scale)


def t_interval(confidence: float, df: float, loc: float = 0.0, scale: float = 1.0) -> tuple[np.float64, np.float64]:
    """scipy.stats.t.interval(confidence, df, loc, scale): ppf at (1 - c) / 2 and (1 + c) / 2."""
    if not 0 <= confidence <= 1:
        raise ValueError("alpha must be between 0 and 1 inclusive")
    alpha = np.float64(confidence)
    return t_ppf(float((1.0 - alpha) / 2), df, loc, scale), t_ppf(float((1.0 + alpha) / 2), df, loc, scale)


def chi2_ppf(q: float, df: float) -> np.float64:
    """scipy.stats.chi2.ppf(q, df)."""
    special = ufuncs()

    ok = df > 0
    return _quantile(q, ok, 0.0, np.inf, 2 * special.gammaincinv(df / 2, q) if ok and 0 < q < 1 else 0.0)


def binom_sf(k: float, n: int, p: float) -> np.float64:
    """scipy.stats.binom.sf(k, n, p), for whole n >= 0 and 0 <= p <= 1 (what the callers pass)."""
    if not (n >= 0 and n == math.floor(n) and 0 <= p <= 1) or math.isnan(k):
        return np.float64(np.nan)
    if k < 0:
        return np.float64(1.0)
    if k >= n:
        return np.float64(0.0)
    # _binom_sf: private, but it is what binom._sf calls (scipy >= 1.12)
    return np.float64(np.clip(ufuncs()._binom_sf(math.floor(k), n, p), 0, 1))


# --- the sign-flip permutation test ------------------------------------------------------------


def _flip_means(x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The statistic (np.mean) of each sign assignment in `indices` (rows x evals x 2), as scipy
    computes it: scipy stacks data[i][indices[:, i]] per eval and np.mean reduces over evals along
    a strided axis, which numpy sums eval by eval, left to right (no pairwise blocks); the same
    sequential sum over the signed columns then rounds the same way, bit for bit
    (tests/analyze/test_distributions.py). Building one signed matrix instead of one fancy-indexed array
    per eval made the 50,000-resample test at 50 evals 0.15 s -> ~0.02 s."""
    signed = np.where(indices[..., 0] == 0, x, -x)  # pairs[i] = (x_i, -x_i), picked by index 0
    total = signed[:, 0].copy()
    for i in range(1, signed.shape[1]):
        total += signed[:, i]
    return total / signed.shape[1]


def sign_flip_test(x: np.ndarray, n_resamples: float = np.inf, batch: int | None = None,
                   rng: np.random.Generator | None = None,
                   alternative: Alternative = "two-sided") -> tuple[float, bool]:
    """(p-value, exact) of scipy.stats.permutation_test((x,), np.mean, permutation_type="samples",
    vectorized=True, axis=-1, n_resamples=..., batch=..., rng=..., alternative=...) for a 1-D x
    of two or more values: every one of the 2**n sign assignments when n_resamples >= 2**n,
    else n_resamples random ones drawn as scipy draws them (Generator.permuted)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError("sign_flip_test needs a 1-D array of two or more values")
    m = int(x.size)
    n_max = 2**m
    if n_resamples >= n_max:
        exact, n = True, n_max
        # itertools.product(*(permutations(range(2)),) * m)'s order: eval 0 varies slowest
        bits = (np.arange(n_max)[:, None] >> np.arange(m - 1, -1, -1)) & 1
        indices = np.stack([bits, 1 - bits], axis=-1)
        chunks = [_flip_means(x, indices[k:k + (batch or n_max)]) for k in range(0, n_max, batch or n_max)]
    else:
        exact, n = False, int(n_resamples)
        if rng is None:
            raise ValueError("a sampled sign-flip test needs an rng")
        size = min(batch or n, n)
        tiled = np.tile(np.arange(2), (size, m, 1))
        chunks = []
        for k in range(0, n, size):
            permuted = rng.permuted(tiled, axis=-1)
            chunks.append(_flip_means(x, permuted[:min(size, n - k)]))
    null = np.concatenate(chunks, axis=0)
    observed = np.mean(x, axis=-1)
    adjustment = 0 if exact else 1
    gamma = np.abs(np.finfo(observed.dtype).eps * 100 * observed)

    def less() -> np.ndarray:
        return (np.count_nonzero(null <= observed + gamma, axis=0) + adjustment).astype(float) / (n + adjustment)

    def greater() -> np.ndarray:
        return (np.count_nonzero(null >= observed - gamma, axis=0) + adjustment).astype(float) / (n + adjustment)

    if alternative == "less":
        p = less()
    elif alternative == "greater":
        p = greater()
    elif alternative == "two-sided":
        p = np.minimum(less(), greater()) * 2
    else:
        raise ValueError(f"alternative must be two-sided, greater or less, got {alternative!r}")
    return float(np.clip(p, 0.0, 1.0)), exact
