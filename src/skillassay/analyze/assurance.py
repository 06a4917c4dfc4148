"""Sample sizes at a planned effect: the size with 80% power if the true value is
`min_detectable_effect` from 0 or from the threshold, the pilot giving only the spread
(median_sigma_ratio, undecided_sigma_ratio). How it is sized and what it delivers:
docs/statistics.md, "Sample-size advice"; the assurance sizing it replaced is
benchmarks/assurance_sizing.py."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.stats.ufuncs import ufuncs

TARGET = 0.8  # the power every piece of advice promises
CONF = 0.95  # the tests' two-sided level (one-sided 2.5% in the direction the advice promises)
MAX_SIZE = 100_000  # beyond this, the advice says "more than" instead of a number
_NODES = 64  # quantile nodes of sigma's posterior: within 3e-4 of 4,096 nodes (t 1-3, 3-20 evals, n 6-1000)
# The cut prior's nodes (_truncated_assurance): 16 quantiles of the mean's truncated normal per
# sigma node and 16 of the new run's s' / sigma, within 0.001 of a 400,000-draw Monte Carlo of the
# same model (tests/analyze/test_assurance.py; 16 x 64 nodes moved no figure by more than 0.0001).
_MEAN_NODES = 16
_NEW_SD_NODES = 16


@functools.lru_cache(maxsize=1024)
def _sigma_ratios(df: int, nodes: int = _NODES) -> np.ndarray:
    """sigma / s at midpoint quantiles of its posterior: sqrt(df / chi2_df)."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    u = (np.arange(nodes) + 0.5) / nodes
    chi2 = 2 * special.gammaincinv(df / 2, u)
    return np.sqrt(df / chi2)


def _t_crit(df: int, conf: float = CONF) -> float:
    return float(dists.t_ppf((1 + conf) / 2, df))


def hull_t_crit(df: int, conf: float = CONF) -> float:
    """The critical value, on the t scale, of a pass rate's interval when its beta-binomial part
    is the wider one (stats/beta_binomial.beta_binomial_mean_interval compares the profile likelihood-ratio
    statistic with t_crit^2). Where that profile is as flat as a normal's with unknown variance,
    whose likelihood-ratio statistic is n log(1 + t^2 / (n - 1)) (the one-sample t test as a
    likelihood-ratio test; e.g. Cox & Hinkley, Theoretical Statistics, 1974), the interval is the t interval with this critical value instead of
    t_crit: 38% wider at 5 evals, 8% at 10, 3% at 20. The trials advice, sized on t_crit alone
    (and without the noise floor), promised 80% and reached 56% with 5 evals at 10 trials, every
    eval at 0.5 (advice_power.py's pilots and re-runs), where this part of the interval decides. Measured (300
    draws each, every eval at 0.5, the gate's whole interval against this model): 5 evals x 80
    trials 54% vs 56%, 10 x 30 81% vs 79%; on Beta(2,2) evals the model is the more cautious
    (5 x 10: 12% vs 7%)."""
    t = _t_crit(df, conf)
    return math.sqrt(df * math.expm1(t * t / (df + 1)))


def _crit(df: int, conf: float, hull: bool) -> float:
    return hull_t_crit(df, conf) if hull else _t_crit(df, conf)


Bounds = tuple[float, float] | None  # where the true mean can lie, in the pilot's SE units (t's)




def fresh_ceiling(t_pilot: float, m: int, bounds: Bounds = None) -> float:
    """The assurance as n grows without bound: the probability that the effect is on the side
    the pilot saw, P(T_{m-1} < |t_pilot|) under the flat prior; with `bounds`, the same
    probability under the prior cut to them (the posterior _truncated_assurance averages over)."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    if m < 2:
        return 0.5
    if bounds is None:
        return float(special.stdtr(m - 1, abs(t_pilot)))
    t, lo, hi = _oriented(t_pilot, bounds)
    c = _sigma_ratios(m - 1)
    logz = _log_mass((lo - t) / c, (hi - t) / c)
    w = _weights(logz)
    side = np.exp(_log_mass((max(lo, 0.0) - t) / c, (hi - t) / c) - logz) if hi > 0 else np.zeros_like(c)
    return float(np.sum(w * side))


# ---------------------------------------------------------------------------------------------
# The prior cut to where the mean can be


def _oriented(t_pilot: float, bounds: tuple[float, float]) -> tuple[float, float, float]:
    """(|t|, lo, hi) with the bounds mirrored when t < 0, so the pilot's side is positive."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if not lo < hi:
        raise ValueError(f"bounds must have lo < hi, got {bounds}")
    return (abs(t_pilot), lo, hi) if t_pilot >= 0 else (-t_pilot, -hi, -lo)


def _lower_tails(a: np.ndarray | float, b: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[a, b] mirrored into the lower tail where it lies mostly in the upper one (a + b > 0), so
    log Phi stays accurate when both ends are far out there: (mirrored, log Phi(a'), log Phi(b'))."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(invalid="ignore"):
        flip = a + b > 0  # nan (both infinite) is False: nothing to mirror
    return flip, special.log_ndtr(np.where(flip, -b, a)), special.log_ndtr(np.where(flip, -a, b))


def _log_diff(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log(Phi(b) - Phi(a)) from log Phi(a) <= log Phi(b)."""
    with np.errstate(divide="ignore"):
        return np.asarray(lb + np.log1p(-np.exp(la - lb)))


def _log_mass(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """log(Phi(b) - Phi(a)) for a < b, computed on the side where it is a lower tail (so it
    stays accurate when both ends are far out in the same tail)."""
    _, la, lb = _lower_tails(a, b)
    return _log_diff(la, lb)


def _weights(logz: np.ndarray) -> np.ndarray:
    """The sigma nodes' posterior weights under the cut prior: each node's share of the flat
    posterior (equal) times the mass its conditional normal leaves inside the bounds."""
    w = np.exp(logz - np.max(logz))
    return w / np.sum(w)






def _criterion(n: int, sigma: np.ndarray, step: float, conf: float, nodes: int = _NODES) -> np.ndarray:
    """The new run's mean above which the sign-flip criterion holds, x(s'), at each sigma node
    (rows, in units of s) and each node of s' / sigma (columns): the larger root of the
    quadratic in signflip_assurance."""
    tc = _t_crit(n - 1, conf)
    z = tc * math.sqrt(n / (n - 1 + tc * tc))  # t > tc, written as S / sqrt(Q) > z
    s_new = sigma[:, None] / _sigma_ratios(n - 1, nodes)[None, :]  # s' in units of s
    a = (n - 1) * s_new**2
    g = abs(step)
    lead = n * (n - z * z)
    return np.asarray((n * g + np.sqrt(n * n * g * g - lead * (g * g - z * z * a))) / lead)


def _smallest(f: Callable[[int], float], lo: int, hi: int, target: float) -> int | None:
    """Smallest integer n in [lo, hi] with f(n) >= target, for f increasing in n: doubling, then
    bisection (about 2 log2(hi / lo) evaluations)."""
    if f(lo) >= target:
        return lo
    step = lo
    while True:
        nxt = min(hi, lo + step)
        if f(nxt) >= target:
            hi = nxt
            break
        if nxt == hi:
            return None
        lo, step = nxt, step * 2
    return _bisect(f, lo, hi, target)


def _bisect(f: Callable[[int], float], bad: int, ok: int, target: float) -> int:
    """The smallest n in (bad, ok] with f(n) >= target, given f(bad) < target <= f(ok) and f
    increasing."""
    while ok - bad > 1:
        mid = (ok + bad) // 2
        if f(mid) >= target:
            ok = mid
        else:
            bad = mid
    return ok












# ---------------------------------------------------------------------------------------------
# Power at a planned effect: what the advice is sized by (advice.power_stats, the gates)


@functools.lru_cache(maxsize=1024)
def median_sigma_ratio(df: int) -> float:
    """sigma / s at which sigma is as likely above as below, given s on df degrees of freedom:
    sqrt(df / chi2_df's median). The sample sd understates sigma more often than not (at 4 df,
    P(s < sigma) = 0.59), so sizing on s itself delivered 69-75% power at 5 pilot evals; averaging
    the power over sigma's posterior (flat on log sigma: Julious & Owen's expected power, Pharm.
    Stat. 2006, 5:29) over-corrected, 85-87% at 5-10 pilot evals at 1-3 trials, since bounded,
    lattice-valued differences have lighter tails than a normal's and their s varies less than a
    chi-square says. The median-unbiased sigma gave 75-82% in those cells (200 pilots each,
    through the exact sign-flip test; benchmarks/advice_power.py measures it)."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    return math.sqrt(df / (2 * float(special.gammaincinv(df / 2, 0.5))))


_SELECTION_NODES = 512  # chi-square quantiles for undecided_sigma_ratio


@functools.lru_cache(maxsize=4096)
def undecided_sigma_ratio(effect: float, m: int, conf: float = CONF) -> float:
    """sigma / s at which s is as likely below as above its observed value **among runs left
    undecided** (a conditionally median-unbiased sigma), when the true value is `effect` (units
    of s) from the threshold: gate advice is given only when the gate is undecided, and an
    undecided pilot has its sd drawn from the upper part of its distribution (a wide interval is
    what keeps it undecided), so the sd alone oversized the advice: 95% power instead of 80% at a
    gap of 0.2, 10 evals x 3 trials (benchmarks/advice_power.py). The pilot's mean minus the
    threshold is N(effect, sigma^2 / m) and independent of s = sigma sqrt(u), u ~ chi2_df / df; it
    is undecided when that mean is within t_crit s / sqrt(m) of the threshold, with probability
    Phi(t sqrt(u) - e) - Phi(-t sqrt(u) - e), e = effect sqrt(m) / (sigma / s). Solved by bisection
    on quantile nodes of u. With no selection (every pilot advised) it is median_sigma_ratio."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    df = m - 1
    root_u = 1 / _sigma_ratios(df, _SELECTION_NODES)  # sqrt(chi2 / df), increasing
    tc = _t_crit(df, conf)

    def below(c: float) -> float:
        e = abs(effect) * math.sqrt(m) / c
        p = special.ndtr(tc * root_u - e) - special.ndtr(-tc * root_u - e)
        total = float(np.sum(p))
        return float(np.sum(p[root_u <= 1 / c])) / total if total > 0 else 0.5

    lo, hi = 0.05, 20.0  # below() falls from 1 to 0 as c grows
    for _ in range(50):
        mid = math.sqrt(lo * hi)
        if below(mid) > 0.5:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def planned_signflip_power(effect: float, m: int, n: int, step: float, conf: float = CONF,
                           sigma_ratio: float | None = None, cut: float = 0.0) -> float:
    """Power of the exact sign-flip test on n fresh evals when the true mean of the differences
    is `effect` (in units of the pilot's sd s) and their sd sigma_ratio s (default the
    median-unbiased one a pilot of m evals gives, median_sigma_ratio): the new run's mean N(effect, sigma^2 / n) and its sd s' on
    its own chi-square, the criterion signflip_assurance's (mean' > x(s')). `cut`: a second bar
    the mean must also clear (the ratio gate's noise floor, paired_intervals.ratio_floor_cut).

    Capped by what the exact test can do at few evals: it rejects (two-sided, 5%) only if at
    least 6 evals differ in the effect's direction, since with j against it the smallest p is
    2^(j+1) / 2^n (all six or more when n is 6-7, the rest at most n - 6), so the power is at
    most P(Binomial(n, q) >= 6), q = P(a difference beyond half a lattice step in that
    direction). The normal form alone put 6 evals at 80% where the exact test, at K = 10 and
    +0.3, reached 46% (74% at 7, 93% at 8), and advice there delivered 72% (tests/analyze/test_advice.py)."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    if n < 2 or m < 2:
        return 0.0
    sigma = np.array([sigma_ratio or median_sigma_ratio(m - 1)])  # in units of s
    x = np.maximum(_criterion(n, sigma, step, conf), cut)
    normal = float(np.mean(special.ndtr((abs(effect) - x) * (math.sqrt(n) / sigma[:, None]))))
    q = float(special.ndtr((abs(effect) - abs(step) / 2) / sigma[0]))
    return min(normal, float(dists.binom_sf(MIN_NONZERO_FOR_SIGNIFICANCE - 1, n, q)))


def planned_t_power(effect: float, m: int, n: int, conf: float = CONF, sigma_ratio: float | None = None,
                    cut: float = 0.0, hull: bool = False) -> float:
    """Power of a t interval on n fresh evals to clear a threshold `effect` away (in units of the
    pilot's sd s), at sigma = sigma_ratio s (default the median-unbiased one from m pilot evals):
    planned_signflip_power's model with the t test's criterion, a noncentral t tail. `cut`: a
    bar the new mean must clear whatever its sd (an interval whose SE has a floor: t times the
    floor), then integrated over quantile nodes of the new sd. `hull`: the interval is a pass
    rate's, whose beta-binomial part widens it at few evals (hull_t_crit)."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    if n < 2 or m < 2:
        return 0.0
    sigma = sigma_ratio or median_sigma_ratio(m - 1)
    crit = _crit(n - 1, conf, hull)
    if cut <= 0:
        return float(1 - special.nctdtr(n - 1, abs(effect) / sigma * math.sqrt(n), crit))
    s_new = sigma / _sigma_ratios(n - 1)  # nodes of the new run's sd, in units of s
    x = np.maximum(crit * s_new / math.sqrt(n), cut)
    return float(np.mean(special.ndtr((abs(effect) - x) * math.sqrt(n) / sigma)))


def _planned_power_fn(effect: float, m: int, step: float | None, conf: float, undecided: bool,
                      cut: Callable[[int], float] | None, known_sd: bool,
                      hull: bool = False) -> Callable[[int], float]:
    """The power at n fresh evals that evals_for_power sizes by and planned_power reports: one
    function, so the figure a note states is the one the size was chosen on."""
    if known_sd:
        ratio = 1.0
    else:
        ratio = undecided_sigma_ratio(round(abs(effect), 12), m, conf) if undecided else median_sigma_ratio(m - 1)

    def f(n: int) -> float:
        bar = 0.0 if cut is None else cut(n)
        if step is None:
            return planned_t_power(effect, m, n, conf, ratio, bar, hull)
        return planned_signflip_power(effect, m, n, step, conf, ratio, bar)

    return f


def evals_for_power(effect: float, m: int, step: float | None = None, target: float = TARGET,
                    conf: float = CONF, max_evals: int = MAX_SIZE, undecided: bool = False,
                    cut: Callable[[int], float] | None = None, known_sd: bool = False,
                    hull: bool = False) -> int | None:
    """Smallest number of fresh evals with `target` power at the planned `effect` (in units of
    the pilot's sd), decided by the sign-flip test on a lattice of `step` (units of the sd; 0 for
    continuous data), or with step None by a t interval; None beyond max_evals. `undecided`: the
    advice is given only to pilots whose test left it undecided (undecided_sigma_ratio). `cut`:
    at n evals, a second bar the new run's mean must clear (units of the sd). `known_sd`:
    the sd is not read from the pilot but known at the planned effect (0/1 outcomes), so it is
    taken as it is. `hull`: a pass rate's interval (planned_t_power)."""
    if m < 2 or effect == 0 or not math.isfinite(effect):
        return None
    return _smallest(_planned_power_fn(effect, m, step, conf, undecided, cut, known_sd, hull), 2, max_evals,
                     target)


def planned_power(effect: float, m: int, n: int, step: float | None = None, conf: float = CONF,
                  undecided: bool = False, cut: Callable[[int], float] | None = None,
                  known_sd: bool = False, hull: bool = False) -> float:
    """The power evals_for_power plans at n fresh evals (same arguments). At the smallest size
    with 80% it can be far above 80%: where one eval more moves the power 10-20 points (the
    exact test at K = 10, +0.3: 46%, 74%, 93% at 6, 7, 8 evals) no size has 80%, and the advice,
    which rounds up, delivered 86-87% (benchmarks/advice_power.py). So each note states the
    power at the size it gives, and that figure is what the advice promises."""
    if m < 2 or effect == 0 or not math.isfinite(effect):
        return 0.0
    return _planned_power_fn(effect, m, step, conf, undecided, cut, known_sd, hull)(n)


def planned_trials_power(gap: float, spread_var: float, noise_var: float, n_evals: int, k_now: float,
                         k_new: int, conf: float = CONF, cut: Callable[[int], float] | None = None,
                         hull: bool = False, undecided: bool = False) -> float:
    """Power of re-running the same n_evals evals at k_new trials per eval when their true mean is
    `gap` from the threshold: trials_assurance's model (the spread between evals, omega^2, from
    the pilot's variance of per-eval means V minus its trial-noise part, V on its chi-square)
    with the mean fixed at the planned gap, so the new mean moves by the new trials' noise only,
    tau^2 = noise_var k_now / (k_new E), and the new run's sd of means on its own chi-square.
    `cut`: at k trials, a bar the new mean must clear whatever its sd (a pass rate's noise
    floor, t times the floor SE); `hull`: a pass rate's interval (hull_t_crit). Without the two,
    the advice promised 80% where, with 5 evals all at 0.5 and 10 trials, the gate's interval
    passed 56% of the re-runs at the advised trials (benchmarks/advice_power.py). `undecided`:
    the advice goes only to pilots the gate left undecided, whose spread is read as such
    (undecided_sigma_ratio, as the evals advice reads it) instead of averaged over its
    posterior; averaged, the advice delivered 91-96% of re-runs at 3 trials per eval with every
    eval at 0.5, where it promised 80-82%."""
    special = ufuncs()  # scipy.special's ufuncs without its package import (stats.ufuncs)

    if n_evals < 2 or noise_var <= 0 or gap == 0:
        return 0.0
    df = n_evals - 1
    if undecided and spread_var > 0:
        ratio = undecided_sigma_ratio(round(abs(gap) / math.sqrt(spread_var), 12), n_evals, conf)
        v = np.array([spread_var * ratio**2])
    else:
        v = spread_var * _sigma_ratios(df) ** 2
    new_var = np.maximum(0.0, v - noise_var) + noise_var * k_now / k_new
    tau = math.sqrt(noise_var * k_now / k_new / n_evals)
    crit = _crit(df, conf, hull)
    bar = 0.0 if cut is None else cut(k_new)
    if bar <= 0:
        return float(np.mean(1 - special.nctdtr(df, abs(gap) / tau, crit * np.sqrt(new_var / n_evals) / tau)))
    s_new = np.sqrt(new_var / n_evals)[:, None] / _sigma_ratios(df)[None, :]  # the new run's SE, per node
    x = np.maximum(crit * s_new, bar)
    return float(np.mean(special.ndtr((abs(gap) - x) / tau)))


def trials_for_power(gap: float, spread_var: float, noise_var: float, n_evals: int, k_now: float,
                     target: float = TARGET, conf: float = CONF, max_trials: int = 10_000,
                     cut: Callable[[int], float] | None = None, hull: bool = False,
                     undecided: bool = False) -> int | None:
    """Smallest trials per eval (more than k_now) with `target` power at the planned gap; None
    when even max_trials would not (the spread between evals keeps the interval too wide)."""
    def f(k: int) -> float:
        return planned_trials_power(gap, spread_var, noise_var, n_evals, k_now, k, conf, cut, hull, undecided)

    if f(max_trials) < target:
        return None
    return _smallest(f, math.floor(k_now) + 1, max_trials, target)
