"""The paired figures' intervals as inversions of the tests that decide them (issue 34), so an
interval and its test never disagree. Method and measurements: docs/statistics.md, "The paired
intervals". Pure functions over numbers."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.means import binomial_floor_se
from skillassay.stats.paired import PairedDifference, paired_difference, sign_flip_p_value
from skillassay.stats.ratio import RatioEstimate, zero_baseline_reason
from skillassay.stats.sign_flip import EXACT_MAX_NONZERO, MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.stats.types import Interval
from skillassay.stats.ufuncs import ufuncs

# Sign assignments sampled beyond EXACT_MAX_NONZERO evals (seeded): the edges then move by well
# under a point between seeds, and the null value's side is always the test's own (see _cut).
INTERVAL_RESAMPLES = 4_000
_GRID = 161
_BISECT = 30


@dataclass(frozen=True)
class DifferenceInterval:
    interval: Interval | None
    explanation: str | None  # set when the interval is the whole range: why, in words
    method: str


def _sign_rows(n: int, seed: int, n_resamples: int = INTERVAL_RESAMPLES) -> np.ndarray:
    """Every sign assignment of n evals (all 2**n, as the exact test enumerates them), or a
    seeded sample of them beyond EXACT_MAX_NONZERO; the observed one (all +1) is always in."""
    if n <= EXACT_MAX_NONZERO:
        return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
    rows = np.random.default_rng(seed).choice([-1.0, 1.0], size=(n_resamples, n))
    rows[0] = 1.0
    return rows


def sign_flip_accepts(signs: np.ndarray, x: np.ndarray, y: np.ndarray, rs: np.ndarray,
                      alpha: float) -> np.ndarray:
    """For each r in rs, whether the two-sided sign-flip test of z = x - r y does not reject at
    alpha (p >= alpha). Zeros in z change no sign sum, so the fraction equals the test's p with
    ties dropped (stats/paired.sign_flip_p_value)."""
    z = x[None, :] - rs[:, None] * y[None, :]
    observed = np.abs(z.sum(axis=1))
    tol = 1e-9 * np.maximum(1.0, np.abs(z).sum(axis=1))
    flipped = np.abs(z @ signs.T)
    return (flipped >= (observed - tol)[:, None]).mean(axis=1) >= alpha


def _hull(accepts: Callable[[np.ndarray], np.ndarray], grid: np.ndarray) -> Interval | None:
    """The hull of the accepted points of `grid`, its outer edges bisected to the neighbouring
    rejected grid point; None when no grid point is accepted. An edge accepted at the grid's end
    stays there (the caller's range, or infinity)."""
    ok = accepts(grid)
    if not ok.any():
        return None
    first, last = int(np.argmax(ok)), int(len(ok) - 1 - np.argmax(ok[::-1]))

    def edge(bad: float, good: float) -> float:
        for _ in range(_BISECT):
            mid = (bad + good) / 2
            if accepts(np.array([mid]))[0]:
                good = mid
            else:
                bad = mid
        return good

    lo = float(grid[first]) if first == 0 else edge(float(grid[first - 1]), float(grid[first]))
    hi = float(grid[last]) if last == len(grid) - 1 else edge(float(grid[last + 1]), float(grid[last]))
    return lo, hi


def _cut(iv: Interval, null: float, estimate: float, rejected: bool,
         accepts: Callable[[np.ndarray], np.ndarray], beyond: Callable[[float, float], np.ndarray]) -> Interval:
    """Keep the null value out of the interval when the test rejected it (the noise floor or a
    gap in the accepted set could bring it in): the side away from the estimate ends at the
    sign-flip test's own nearest accepted point past the null (`beyond(null, far end)`: the
    points to look at, the estimate among them), or just past the null if it accepts none there.
    Keep it in when the test did not reject it (Monte-Carlo edges could leave it out). So the
    interval holds the null exactly when the test's p >= alpha, whatever else happened."""
    lo, hi = iv
    if not rejected:
        return (min(lo, null), max(hi, null))
    if not lo <= null <= hi:
        return iv
    up = estimate > null
    grid = np.unique(np.concatenate([beyond(null, hi if up else lo), [estimate]]))
    grid = grid[grid > null] if up else grid[grid < null]
    ok = accepts(grid) if grid.size else np.zeros(0, dtype=bool)
    if up:
        return (float(grid[int(np.argmax(ok))]) if ok.any() else math.nextafter(null, math.inf), hi)
    return (lo, float(grid[len(ok) - 1 - int(np.argmax(ok[::-1]))]) if ok.any() else math.nextafter(null, -math.inf))


def never_rejects(n: int) -> bool:
    """With fewer than 6 evals no sign-flip test reaches p < 0.05 (smallest p: 2 / 2**n)."""
    return n < MIN_NONZERO_FOR_SIGNIFICANCE


def too_few_words(n: int) -> str:
    return (f"with {n} eval(s) the sign-flip test can never reach p < 0.05 (it needs at least "
            f"{MIN_NONZERO_FOR_SIGNIFICANCE} evals that differ between the arms), so no difference is "
            "ruled out: the interval is the whole range, -100 to +100 pts. That is too few evals to "
            "tell anything, not evidence of no effect; any difference is consistent with these results")


def difference_by_test_inversion(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, conf: float = 0.95,
    floor_se: float = 0.0, seed: int = 0, p_at_zero: float | None = None,
    bounds: Interval = (-1.0, 1.0),
) -> DifferenceInterval:
    """The shifts delta the sign-flip test of d_e - delta does not reject at 1 - conf, widened
    to at least mean +- t * floor_se, within `bounds`, never crossing 0 on the side the test
    at delta = 0 (`p_at_zero`: the p printed beside it; computed when not given) rejected."""
    x = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    method = "sign-flip test inversion, at least the binomial noise floor"
    if x.size < 2:
        return DifferenceInterval(None, None, method)
    if never_rejects(int(x.size)):
        return DifferenceInterval(bounds, too_few_words(int(x.size)), method)
    alpha = 1 - conf
    signs = _sign_rows(int(x.size), seed)
    ones = np.ones_like(x)
    mean = float(x.mean())
    tq = float(dists.t_ppf((1 + conf) / 2, x.size - 1))

    def accepts(ds: np.ndarray) -> np.ndarray:
        return sign_flip_accepts(signs, x, ones, ds, alpha)

    grid = np.unique(np.concatenate([np.linspace(bounds[0], bounds[1], _GRID), x, [mean]]))
    grid = grid[(grid >= bounds[0]) & (grid <= bounds[1])]
    iv = _hull(accepts, grid) or (mean, mean)
    lo = max(bounds[0], min(iv[0], mean - tq * floor_se))
    hi = min(bounds[1], max(iv[1], mean + tq * floor_se))
    p0 = sign_flip_p_value(x, seed=seed)[0] if p_at_zero is None else p_at_zero
    lo, hi = _cut((lo, hi), 0.0, mean, p0 is not None and p0 < alpha, accepts,
                  lambda null, end: np.linspace(null, end, _GRID))
    return DifferenceInterval((lo, hi), None, method)


def inverted_difference(pa: Sequence[float], pb: Sequence[float], seed: int,
                        floor_se: float = 0.0) -> PairedDifference:
    """The paired difference with its sign-flip p and, as its interval, that test inverted
    (difference_by_test_inversion), so "cannot confirm" holds 0 and only then."""
    pd = paired_difference(pa, pb, seed=seed, bounds=(-1.0, 1.0), floor_se=floor_se)
    if pd.n == 0:
        return pd
    diff = difference_by_test_inversion(pa, pb, floor_se=floor_se, seed=seed, p_at_zero=pd.p_value)
    return dataclasses.replace(pd, interval=diff.interval, explanation=diff.explanation or pd.explanation)


def _fieller(ma: float, mb: float, fa: float, fb: float, q: float) -> Interval | None:
    """Ratios r >= 0 with |ma - r mb| <= q sqrt(fa^2 + r^2 fb^2): the z-type test of
    mean(a - r b) = 0 at the noise floors' SE, inverted (Fieller 1954). The hull of that set on
    r >= 0 (it is an interval there or a ray, except when the estimate is undetermined, then
    everything); None when the floor adds nothing (both SEs 0)."""
    if fa == 0 and fb == 0:
        return None
    qa, qb, qc = mb * mb - q * q * fb * fb, -2.0 * ma * mb, ma * ma - q * q * fa * fa
    disc = qb * qb - 4 * qa * qc
    if qa > 0:
        if disc < 0:
            return None
        root = math.sqrt(disc)
        r1, r2 = (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)
        return (max(0.0, r1), max(0.0, r2))
    if qc <= 0 or disc < 0 or qa == 0:
        # 0 accepted (the skill's mean is within its floor of 0), or no real root: everything.
        if qa == 0 and qc > 0 and qb < 0:
            return (qc / -qb, math.inf)
        return (0.0, math.inf)
    root = math.sqrt(disc)
    # qa < 0, qc > 0: the roots have opposite signs; accepted beyond the positive one.
    r_pos = max((-qb - root) / (2 * qa), (-qb + root) / (2 * qa))
    return (max(0.0, r_pos), math.inf)


def ratio_interval(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, conf: float = 0.95,
    floor_se_a: float = 0.0, floor_se_b: float = 0.0, seed: int = 0, p_at_one: float | None = None,
) -> RatioEstimate:
    """The improvement ratio mean(a) / mean(b) and the ratios r the sign-flip test of
    a_e - r b_e does not reject, widened to at least Fieller's interval at the binomial noise
    floors, never holding 1 when the difference's own test (`p_at_one`) rejected it. A baseline
    mean of 0 with a skill that passed something: the ratio is unbounded (value inf) and the
    interval the same inversion. Upper bound inf: no finite ratio is rejected."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("ratio_interval needs equally long inputs")
    method = "sign-flip test inversion, at least Fieller's interval at the binomial noise floor"
    if x.size == 0:
        return RatioEstimate(None, None, method, 0, "no paired evals")
    ma, mb = float(x.mean()), float(y.mean())
    if ma == 0 and mb == 0:
        return RatioEstimate(None, None, method, int(x.size), zero_baseline_reason(ma))
    r = math.inf if mb == 0 else ma / mb
    reason = zero_baseline_reason(ma) if mb == 0 else None
    if x.size < 2:
        return RatioEstimate(r, None, method, int(x.size), reason)
    alpha = 1 - conf
    signs = _sign_rows(int(x.size), seed)

    def accepts(rs: np.ndarray) -> np.ndarray:
        out = np.ones(len(rs), dtype=bool)
        finite = np.isfinite(rs)
        out[finite] = sign_flip_accepts(signs, x, y, rs[finite], alpha)
        # As r grows the test is of -b alone: inf is accepted when that is.
        out[~finite] = sign_flip_accepts(signs, np.zeros_like(x), y, np.array([1.0]), alpha)[0]
        return out

    scale = max(1.0, r) if math.isfinite(r) else max(1.0, ma / max(float(y[y > 0].min(initial=1.0)), 1e-9))
    grid = np.concatenate([np.linspace(0.0, scale, _GRID // 2), scale * 2.0 ** (np.arange(1, 61) / 3.0), [math.inf]])
    iv = _hull(accepts, grid)
    if iv is not None and math.isfinite(iv[1]) and iv[1] == float(grid[-2]):
        iv = (iv[0], math.inf)
    q = float(dists.t_ppf((1 + conf) / 2, x.size - 1))
    fl = _fieller(ma, mb, floor_se_a, floor_se_b, q)
    parts = [p for p in (iv, fl) if p is not None]
    lo, hi = (min(p[0] for p in parts), max(p[1] for p in parts)) if parts else (r, r)
    p1 = sign_flip_p_value(x - y, seed=seed)[0] if p_at_one is None else p_at_one
    lo, hi = _cut((lo, hi), 1.0, r, p1 is not None and p1 < alpha, accepts,
                  lambda null, end: np.geomspace(max(min(null, end), 1e-6),
                                                 min(max(null, end), 1e12), _GRID))
    se_floor = math.sqrt(floor_se_a**2 + (r if math.isfinite(r) else 0.0) ** 2 * floor_se_b**2) / mb if mb else None
    se = None if not math.isfinite(r) else max(float((x - r * y).std(ddof=1) / math.sqrt(x.size) / mb), se_floor or 0.0)
    return RatioEstimate(r, (lo, hi), method, int(x.size), reason, se)


def ratio_floor_cut(ma: float, mb: float, thr: float, n: int, k_a: float, k_b: float,
                    conf: float = 0.95) -> float:
    """How far from 0 the mean of a_e - thr * b_e must be, on n fresh evals of k_a and k_b
    trials whose true mean pass rates are ma and mb, for the noise-floor part of ratio_interval
    (Fieller's interval at the floors) to leave thr out: t * sqrt(fa^2 + thr^2 fb^2), the floors at
    the true rates (a baseline at 0 included). The ratio gate decides only when its whole interval
    clears thr, so the size advice must clear this as well as the test: sized for the test alone,
    it delivered 67-73% at 3 trials per eval (benchmarks/advice_power.py)."""
    if n < 2 or ma < 0 or mb < 0:
        return math.inf
    fa = binomial_floor_se(np.full(n, ma), np.full(n, k_a), pseudo=1.0)
    fb = binomial_floor_se(np.full(n, mb), np.full(n, k_b), pseudo=1.0)
    return float(dists.t_ppf((1 + conf) / 2, n - 1)) * math.hypot(fa, thr * fb)


def floor_fail_p(ma: float, mb: float, thr: float, fa: float, fb: float, df: int) -> float:
    """One-sided p of the noise floor's part of a ratio FAIL: Fieller's test of mean(a - thr b)
    >= 0 at the floors' SE (the interval's floor part misses thr below at level p)."""
    se = math.hypot(fa, thr * fb)
    if se == 0:
        return 0.0 if ma < thr * mb else 1.0
    return float(ufuncs().stdtr(df, -(thr * mb - ma) / se))


@dataclass(frozen=True)
class FixedSetDifference:
    """The difference read for "these evals": its interval and the two-sided p of the z test it
    inverts (so 0 is inside exactly when p >= 1 - conf)."""

    mean: float
    se: float
    interval: Interval
    p_value: float


def difference_these_evals(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                           trials_b: Sequence[int], conf: float = 0.95, pseudo: float = 0.5) -> FixedSetDifference | None:
    """The mean per-eval difference over the evals as written ("these evals", the fixed set: only
    trial noise varies), a stratified z interval: var = sum_e (t_a(1-t_a)/k_a + t_b(1-t_b)/k_b) / E^2
    with each eval's rates shrunk by `pseudo` successes and failures (so 3/3 does not claim zero
    noise), and the z test of 0 it inverts. Measured against its own truth (fixed eval rates,
    trials redrawn; tests/analyze/test_paired_intervals.py): 95.0-97.9% at 1-10 trials, 5-20 evals.
    Not printed yet: the paired figures' reading is "evals like these" (the gate's)."""
    ca, ka = np.asarray(passes_a, dtype=float), np.asarray(trials_a, dtype=float)
    cb, kb = np.asarray(passes_b, dtype=float), np.asarray(trials_b, dtype=float)
    if ca.size == 0 or np.any(ka <= 0) or np.any(kb <= 0):
        return None
    ta, tb = (ca + pseudo) / (ka + 2 * pseudo), (cb + pseudo) / (kb + 2 * pseudo)
    se = math.sqrt(float((ta * (1 - ta) / ka + tb * (1 - tb) / kb).sum())) / ca.size
    mean = float((ca / ka - cb / kb).mean())
    z = float(dists.norm_ppf((1 + conf) / 2))
    p = float(2 * ufuncs().ndtr(-abs(mean) / se)) if se > 0 else (1.0 if mean == 0 else 0.0)
    return FixedSetDifference(mean, se, (max(-1.0, mean - z * se), min(1.0, mean + z * se)), p)


FIXED_SET_METHOD = "stratified z test over the trials of these evals, inverted"


def _fixed_set_ses(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                   trials_b: Sequence[int], pseudo: float = 0.5) -> tuple[float, float, float, float] | None:
    """(mean a, mean b, SE of mean a, SE of mean b) over the fixed set: only trial noise, each
    eval's rate shrunk by `pseudo` successes and failures in the SE (as difference_these_evals)."""
    ca, ka = np.asarray(passes_a, dtype=float), np.asarray(trials_a, dtype=float)
    cb, kb = np.asarray(passes_b, dtype=float), np.asarray(trials_b, dtype=float)
    if ca.size == 0 or np.any(ka <= 0) or np.any(kb <= 0):
        return None
    ta, tb = (ca + pseudo) / (ka + 2 * pseudo), (cb + pseudo) / (kb + 2 * pseudo)
    se_a = math.sqrt(float((ta * (1 - ta) / ka).sum())) / ca.size
    se_b = math.sqrt(float((tb * (1 - tb) / kb).sum())) / ca.size
    return float((ca / ka).mean()), float((cb / kb).mean()), se_a, se_b


def ratio_these_evals(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                      trials_b: Sequence[int], conf: float = 0.95) -> RatioEstimate | None:
    """The improvement ratio over "these evals": Fieller's interval for mean(a) / mean(b) at the
    fixed set's trial-noise SEs, i.e. the z test of mean(a) - r mean(b) = 0 (ratio_these_p)
    inverted. At r = 1 that test is difference_these_evals's, so the two never disagree."""
    m = _fixed_set_ses(passes_a, trials_a, passes_b, trials_b)
    if m is None:
        return None
    ma, mb, fa, fb = m
    n = len(passes_a)
    if ma == 0 and mb == 0:
        return RatioEstimate(None, None, FIXED_SET_METHOD, n, zero_baseline_reason(ma))
    r = math.inf if mb == 0 else ma / mb
    iv = _fieller(ma, mb, fa, fb, float(dists.norm_ppf((1 + conf) / 2))) or (0.0, math.inf)
    se = math.hypot(fa, r * fb) / mb if mb > 0 else None
    return RatioEstimate(r, iv, FIXED_SET_METHOD, n, zero_baseline_reason(ma) if mb == 0 else None, se)


def ratio_these_p(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                  trials_b: Sequence[int], r0: float, side: str = "two-sided") -> float | None:
    """The z test of mean(a) = r0 mean(b) over the fixed set: two-sided, or one-sided "less"
    (the p that the ratio is at least r0: a FAIL's) or "greater" (at most r0: a PASS's)."""
    m = _fixed_set_ses(passes_a, trials_a, passes_b, trials_b)
    if m is None:
        return None
    ma, mb, fa, fb = m
    se = math.hypot(fa, r0 * fb)
    z = (ma - r0 * mb) / se if se > 0 else (0.0 if ma == r0 * mb else math.copysign(math.inf, ma - r0 * mb))
    ndtr = ufuncs().ndtr
    if side == "less":
        return float(ndtr(z))
    if side == "greater":
        return float(ndtr(-z))
    return float(2 * ndtr(-abs(z)))
