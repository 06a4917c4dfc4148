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
                           trials_b: Sequence[int], conf: float = 0.95) -> FixedSetDifference | None:
    """The mean per-eval difference over the evals as written ("these evals", the fixed set: only
    trial noise varies): the z interval around the adjusted means' difference at the fixed set's
    trial-noise SE (fixed_set_means), and the z test of 0 it inverts. Measured against its own
    truth: benchmarks/these_evals_paired_coverage.py, docs/statistics.md."""
    m = fixed_set_means(passes_a, trials_a, passes_b, trials_b)
    if m is None:
        return None
    se = math.hypot(m.se_a, m.se_b)
    center = m.adjusted_a - m.adjusted_b
    z = float(dists.norm_ppf((1 + conf) / 2))
    p = float(2 * ufuncs().ndtr(-abs(center) / se)) if se > 0 else (1.0 if center == 0 else 0.0)
    return FixedSetDifference(m.mean_a - m.mean_b, se, (max(-1.0, center - z * se), min(1.0, center + z * se)), p)


FIXED_SET_METHOD = "stratified z test over the trials of these evals (Agresti-Caffo adjusted), inverted"


def _trial_variances(passes: np.ndarray, trials: np.ndarray, pseudo: float = 0.5) -> np.ndarray:
    """Each eval's trial variance p_e (1 - p_e), estimated for the fixed set's SE. From 2 trials
    on: the larger of the unbiased k/(k-1) p(1-p) and the rate shrunk by `pseudo` successes and
    failures (so 3/3 does not claim zero noise). From 1 trial an eval's own variance cannot be
    read (its shrunk rate is always 1/4 or 3/4: 0.1875, where a rate near 1/2 has 0.25), so such an
    eval gets the arm's pooled rate's, an upper bound on the mean of p_e (1 - p_e) (concavity)."""
    p = passes / trials
    shrunk = (passes + pseudo) / (trials + 2 * pseudo)
    own = np.maximum(p * (1 - p) * trials / np.maximum(trials - 1, 1), shrunk * (1 - shrunk))
    pooled = (float(passes.sum()) + 1) / (float(trials.sum()) + 2)
    return np.where(trials >= 2, own, pooled * (1 - pooled))


@dataclass(frozen=True)
class FixedSetMeans:
    """Both arms' mean pass rates over the fixed set: as measured, adjusted, and the SEs."""

    mean_a: float
    mean_b: float
    adjusted_a: float
    adjusted_b: float
    se_a: float
    se_b: float


def _arm(passes: np.ndarray, trials: np.ndarray) -> tuple[float, float, float]:
    """(mean, adjusted mean, SE) of one arm. Agresti and Caffo's (2000) adjustment, one success and
    one failure added to the arm's (effective, Kish) trial count N: the mean moves to
    (C + 1) / (N + 2) and the variance sum_e v_e / k_e / E^2 shrinks by N / (N + 2). Without it
    the z interval is Wald's, which at 5 evals x 1 trial, every rate 1/2 (an A/A test), covered
    87.5% (docs/statistics.md)."""
    e = passes.size
    mean = float((passes / trials).mean())
    n_eff = e * e / float((1.0 / trials).sum())
    var = float((_trial_variances(passes, trials) / trials).sum()) / (e * e) * n_eff / (n_eff + 2)
    return mean, (mean * n_eff + 1) / (n_eff + 2), math.sqrt(var)


def fixed_set_means(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                    trials_b: Sequence[int]) -> FixedSetMeans | None:
    """Both arms over the fixed set (only trial noise): None without trials in every eval."""
    ca, ka = np.asarray(passes_a, dtype=float), np.asarray(trials_a, dtype=float)
    cb, kb = np.asarray(passes_b, dtype=float), np.asarray(trials_b, dtype=float)
    if ca.size == 0 or ca.size != cb.size or np.any(ka <= 0) or np.any(kb <= 0):
        return None
    (ma, adj_a, se_a), (mb, adj_b, se_b) = _arm(ca, ka), _arm(cb, kb)
    return FixedSetMeans(ma, mb, adj_a, adj_b, se_a, se_b)


def ratio_these_evals(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                      trials_b: Sequence[int], conf: float = 0.95) -> RatioEstimate | None:
    """The improvement ratio over "these evals": Fieller's interval for mean(a) / mean(b) at the
    adjusted means and the fixed set's trial-noise SEs, i.e. the z test of mean(a) - r mean(b) = 0
    (ratio_these_p) inverted. At r = 1 that test is difference_these_evals's, so the two never
    disagree. Over a baseline that passed nothing the ratio is unbounded and so is the interval."""
    m = fixed_set_means(passes_a, trials_a, passes_b, trials_b)
    if m is None:
        return None
    n = len(passes_a)
    if m.mean_a == 0 and m.mean_b == 0:
        return RatioEstimate(None, None, FIXED_SET_METHOD, n, zero_baseline_reason(m.mean_a))
    r = math.inf if m.mean_b == 0 else m.mean_a / m.mean_b
    iv = _fieller(m.adjusted_a, m.adjusted_b, m.se_a, m.se_b, float(dists.norm_ppf((1 + conf) / 2))) or (0.0, math.inf)
    if math.isinf(r):
        iv = (iv[0], math.inf)
    se = math.hypot(m.se_a, r * m.se_b) / m.mean_b if m.mean_b > 0 else None
    return RatioEstimate(r, iv, FIXED_SET_METHOD, n, zero_baseline_reason(m.mean_a) if m.mean_b == 0 else None, se)


def ratio_these_p(passes_a: Sequence[int], trials_a: Sequence[int], passes_b: Sequence[int],
                  trials_b: Sequence[int], r0: float, side: str = "two-sided") -> float | None:
    """The z test of mean(a) = r0 mean(b) over the fixed set, at the adjusted means: two-sided, or
    one-sided "less" (the p that the ratio is at least r0: a FAIL's) or "greater" (at most r0: a
    PASS's). Over a baseline that passed nothing no ratio is too large (ratio_these_evals' interval
    reaches infinity): the FAIL side's p is 1."""
    m = fixed_set_means(passes_a, trials_a, passes_b, trials_b)
    if m is None:
        return None
    se = math.hypot(m.se_a, r0 * m.se_b)
    diff = m.adjusted_a - r0 * m.adjusted_b
    z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    ndtr = ufuncs().ndtr
    less = 1.0 if m.mean_b == 0 and m.mean_a > 0 else float(ndtr(z))
    greater = float(ndtr(-z))
    if side == "less":
        return less
    if side == "greater":
        return greater
    return min(1.0, 2 * min(less, greater))
