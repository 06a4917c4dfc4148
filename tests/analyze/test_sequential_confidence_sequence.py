"""The first adaptive rule's per-eval betting confidence sequence, kept here as the reference the
docs describe (docs/statistics.md, "The stopping rule in full") and out of the package, which
does not use it (issue 35: test-only code leaves the package): the hedged-capital betting CS of
Waudby-Smith & Ramdas (JRSS-B 2024, Theorem 3) with predictable-mixture bets (their Eq. 26), and
the two checks that it is one: its shape and its anytime validity, computed exactly."""

from __future__ import annotations

import functools
import math
from itertools import product

import numpy as np

from skillassay.analyze.sequential import ALPHA
from skillassay.stats.binomial import wilson_interval

THETA = 0.5  # weight of the "mean is above m" capital against "below m": two-sided, alpha/2 each
TRUNCATION = 1.0  # bets in [-1/(1-m), 1/m]: the widest that keeps the capital non-negative
GRID_POINTS = 1001  # candidate means 0, 0.001, ..., 1; bounds are widened by one step

_GRID = np.linspace(0.0, 1.0, GRID_POINTS)
_STEP = 1.0 / (GRID_POINTS - 1)


def predmix_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """lambda_t = sqrt(2 log(1/alpha) / (sigma^2_{t-1} t log(1 + t))): each bet uses only the
    trials before it (predictable), which is what makes the capital a martingale under the null."""
    t = np.arange(1, len(x) + 1)
    mu = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1.0)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    prev = np.append(0.25, var[:-1])
    return np.sqrt(2 * math.log(1 / alpha) / (t * np.log1p(t) * prev))


@functools.lru_cache(maxsize=65536)
def confidence_sequence(outcomes: tuple[bool, ...], alpha: float = ALPHA) -> tuple[float, float]:
    """The CS for the pass rate after these outcomes, in trial order, intersected over every
    prefix (a running intersection is still a CS). [0, 1] before any trial. Cached: at up to
    ten trials per arm there are only 2,047 outcome sequences."""
    if not outcomes:
        return (0.0, 1.0)
    x = np.asarray(outcomes, dtype=float)
    m = _GRID[None, :]
    lam_up = predmix_bets(x, alpha * THETA)[:, None]
    lam_down = predmix_bets(x, alpha * (1 - THETA))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.minimum(lam_up, TRUNCATION / m)
        down = np.minimum(lam_down, TRUNCATION / (1 - m))
        k_up = np.nan_to_num(np.cumprod(1 + up * (x[:, None] - m), axis=0), nan=0.0)
        k_down = np.nan_to_num(np.cumprod(1 - down * (x[:, None] - m), axis=0), nan=0.0)
    capital = np.maximum(THETA * k_up, (1 - THETA) * k_down)
    kept = np.flatnonzero((capital < 1 / alpha).all(axis=0))
    if kept.size == 0:  # cannot happen for a true mean; keep the sequence honest anyway
        return (0.0, 1.0)
    return (max(0.0, float(_GRID[kept[0]]) - _STEP), min(1.0, float(_GRID[kept[-1]]) + _STEP))


def test_confidence_sequence_shape() -> None:
    assert confidence_sequence(()) == (0.0, 1.0)
    lo, hi = confidence_sequence((True,) * 10)
    assert hi == 1.0 and 0.6 < lo < 0.75  # 10/10: far from the Wilson 0.72, as a CS must be wider
    lo0, hi0 = confidence_sequence((False,) * 10)
    assert lo0 == 0.0 and abs(hi0 - (1 - lo)) < 2e-3  # symmetric in pass and fail
    # more agreeing trials only narrow it (running intersection)
    lows = [confidence_sequence((True,) * n)[0] for n in range(1, 11)]
    assert lows == sorted(lows)


def test_confidence_sequence_is_anytime_valid() -> None:
    """The guarantee itself: the chance that the true rate leaves the sequence at ANY of the
    ten looks stays under alpha (computed exactly over all 2**10 outcome sequences, weighted by
    their probability), while 'p < 0.05 at any look' with a fixed-n interval does not."""
    wilson = {(c, n): wilson_interval(c, n) or (0.0, 1.0) for n in range(1, 11) for c in range(n + 1)}
    for p in (0.1, 0.3, 0.5, 0.8):
        miss = naive = 0.0
        for outcomes in product((True, False), repeat=10):
            weight = p ** sum(outcomes) * (1 - p) ** (10 - sum(outcomes))
            # the running intersection: outside it iff outside the sequence at some look
            lo, hi = confidence_sequence(outcomes)
            miss += weight * (not lo <= p <= hi)
            naive += weight * any(not wilson[(sum(outcomes[:n]), n)][0] <= p <= wilson[(sum(outcomes[:n]), n)][1]
                                  for n in range(1, 11))
        assert miss <= ALPHA, (p, miss)
        assert naive > ALPHA  # why a CS: looking ten times at a 95% interval misses more often
