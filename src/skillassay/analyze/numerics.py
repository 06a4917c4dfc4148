"""Pure numerical building blocks for the benchmark's statistics.

Everything here takes plain numbers or arrays and returns plain numbers, tuples or small
frozen dataclasses, so it can be tested against scipy/statsmodels directly and reused by
aggregation, comparison and the threshold gate. The methods and reference values are in
/work/shared/stats-notes.md. The unit of replication is the eval, never the trial: trials of
one eval share the prompt, so treating E*K trials as independent would overstate certainty.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.beta_binomial import (  # noqa: F401 - moved there (issue 35)
    _bb_fit,
    _bb_interval,
    beta_binomial_mean_interval,
    beta_binomial_mean_p,
)
from skillassay.stats.binomial import (  # noqa: F401 - moved there (issue 35)
    RELIABILITY_HIGH,
    RELIABILITY_LOW,
    RELIABILITY_UNRELIABLE,
    _check_counts,
    _wilson_bounds,
    clopper_pearson_interval,
    pass_at_k,
    pass_hat_k,
    reliability_label,
    wilson_interval,
    within_eval_variance,
)
from skillassay.stats.decide import ABS_TOL, REL_TOL, _at, decide, plain_comparison  # noqa: F401 - moved there (issue 35)
from skillassay.stats.multiplicity import _boschloo, bh_adjust, bh_call_threshold, one_sided_exact_p  # noqa: F401 - moved there (issue 35)
from skillassay.stats.sign_flip import EXACT_MAX_NONZERO, MIN_NONZERO_FOR_SIGNIFICANCE, MONTE_CARLO_RESAMPLES  # noqa: F401 - moved there (issue 35)
from skillassay.stats.sizing import (  # noqa: F401 - moved there (issue 35)
    SAFEGUARD_LEVEL,
    _power_quantile,
    evals_to_decide,
    evals_with_differing,
    planning_variance,
    trials_per_arm,
    trials_per_eval_to_decide,
)
from skillassay.stats.types import Decision, Direction, Interval  # noqa: F401 - moved there (issue 35)
from skillassay.stats.ufuncs import ufuncs
from skillassay.wording import UNBOUNDED

# The quantiles and the sign-flip test come from `distributions` (scipy.special and numpy,
# bit-identical to scipy.stats): importing scipy.stats costs about 1.3 CPU-s, which `aggregate`
# paid on every call. scipy.stats (Boschloo, the bootstrap, Benjamini-Hochberg) and statsmodels
# (t-test power, which pulls in pandas) are imported where they are used, by the few paths that
# need them.


def preload() -> None:
    """Load what the statistics need now (scipy.special's ufuncs): for a caller that is
    otherwise idle (waiting on worker processes). Not scipy.stats or statsmodels: only the
    paths that use them import them, when needed."""
    ufuncs()






# ---------------------------------------------------------------------------------------------
# Rates within one eval
















# ---------------------------------------------------------------------------------------------
# Means over evals


@dataclass(frozen=True)
class MeanEstimate:
    """A mean over evals with its eval-clustered SE and t(E-1) interval (None when E < 2)."""

    mean: float
    se: float | None
    interval: Interval | None
    n: int


def _as_float_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=float).ravel()


def _t_interval(mean: float, se: float, df: int, conf: float) -> Interval:
    if se == 0:
        return (mean, mean)
    lo, hi = dists.t_interval(conf, df, loc=mean, scale=se)
    return (float(lo), float(hi))


def clustered_mean(
    values: Sequence[float] | np.ndarray,
    conf: float = 0.95,
    bounds: Interval | None = None,
    floor_se: float = 0.0,
) -> MeanEstimate:
    """Mean of per-eval values with SE sd(ddof=1)/sqrt(E) and a t(E-1) interval.

    This is the eval-clustered SE (equal to statsmodels OLS on a constant with
    cov_type="cluster" when every eval has the same K), and the t interval is honest with few
    evals where a normal interval would be too narrow. `bounds` clips the interval to the
    parameter's range (a pass rate cannot be below 0), which only removes impossible values.
    `floor_se` (see binomial_floor_se) keeps the SE from falling below the trial-level noise
    when the evals happen to agree exactly (all 3/3: sd 0, an interval [1, 1]).
    """
    x = _as_float_array(values)
    if x.size == 0:
        raise ValueError("clustered_mean needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return MeanEstimate(mean, None, None, int(x.size))
    se = max(float(x.std(ddof=1) / math.sqrt(x.size)), floor_se)
    lo, hi = _t_interval(mean, se, x.size - 1, conf)
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return MeanEstimate(mean, se, (lo, hi), int(x.size))


def binomial_floor_se(rates: Sequence[float] | np.ndarray, trials: Sequence[int] | np.ndarray,
                      pseudo: float = 2.0) -> float:
    """The smallest honest SE of a mean of per-eval pass rates: the one it would have if all
    the trials were independent draws at the pooled rate.

    Why a floor, and why this one: the eval-clustered variance is the trial-independent
    variance times the design effect 1 + (K-1)ICC (Kish, Survey Sampling, 1965, ch. 5), and
    the ICC of trials sharing a prompt is not negative, so var(mean) >= p(1-p)/n_eff, where
    n_eff = E^2 / sum(1/K_e) is what E evals of K_e trials weigh in a mean of per-eval rates.
    The plain sd of per-eval rates can come out far below that when the evals happen to agree
    (five evals at 3/3 from a true 0.9 do so 21% of the time), and the interval then collapses to
    a point. The rate is shrunk by `pseudo` successes and `pseudo` failures (Agresti & Coull,
    "Approximate is better than 'exact' for interval estimation of binomial proportions", The
    American Statistician 52, 1998: add 2 and 2 for one proportion; Agresti & Caffo, ibid. 54,
    2000: add 1 and 1 per arm for a difference), so that 3/3 does not claim zero noise.
    A random-effects (beta-binomial) model would estimate the same two variance parts with
    more machinery; the floor only ever widens the clustered interval, never narrows it.
    """
    p, n = _as_float_array(rates), _as_float_array(trials)
    keep = n > 0
    p, n = p[keep], n[keep]
    if p.size == 0:
        return 0.0
    n_eff = p.size**2 / float((1.0 / n).sum())
    shrunk = (float(p.mean()) * n_eff + pseudo) / (n_eff + 2 * pseudo)
    return math.sqrt(shrunk * (1 - shrunk) / n_eff)


def pooled_clustered_mean(
    sums: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray, conf: float = 0.95,
) -> MeanEstimate:
    """Trial-weighted mean sum(S_e)/sum(n_e) with the eval-clustered SE and a t(G-1) interval.

    The spec's avg_tokens / avg_duration pool trials, so the interval must be around that same
    figure; the SE is statsmodels' OLS cluster SE on a constant, sqrt(G/(G-1) sum_e
    (S_e - n_e m)^2) / N, which reduces to sd(m_e)/sqrt(G) when every eval has the same n.
    The cost intervals the gates use are rate_intervals.cost_interval's.
    """
    s, n = _as_float_array(sums), _as_float_array(counts)
    keep = n > 0
    s, n = s[keep], n[keep]
    if s.size == 0:
        raise ValueError("pooled_clustered_mean needs at least one non-empty eval")
    total = float(n.sum())
    mean = float(s.sum() / total)
    g = int(s.size)
    if g < 2:
        return MeanEstimate(mean, None, None, g)
    se = math.sqrt(g / (g - 1) * float(((s - n * mean) ** 2).sum())) / total
    return MeanEstimate(mean, se, _t_interval(mean, se, g - 1, conf), g)


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
    """Interval for the mean of positive, right-skewed per-eval values (costs) from their logs:
    the generalized confidence interval for a lognormal mean exp(mu + sigma^2 / 2) of
    Krishnamoorthy & Mathew ("Inferences on the means of lognormal distributions using
    generalized p-values and generalized confidence intervals", J. Stat. Plan. Inference 115,
    2003), accurate from 5 values on, where Cox's large-sample log-scale interval is not (Zhou
    & Gao, Stat. Med. 16, 1997; simulated here: 4.5% above the upper bound at 5 evals).

    Why: token counts per eval are multiplicative and heavy-tailed, and a t interval on them
    (clustered or not) has its upper bound below the true mean far more often than 2.5%: at 5
    evals of lognormal(0, 0.5) costs 9%, which `max_avg_tokens` turned into a false PASS (the
    sample mean and sd of a right-skewed sample are low together). It is the population
    reading's one cost interval (rate_intervals.cost_interval; docs/statistics.md has its misses).
    """
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




# Beta-binomial random-effects model of per-eval pass counts, for the suite pass rate's interval.



# Two one-dimensional searches written here rather than taken from scipy.optimize: importing
# scipy.optimize costs 0.23-0.35 CPU-s on this machine (it pulls in scipy.linalg, scipy.sparse
# and scipy.special's whole namespace), a tenth of what `skillassay aggregate` may spend on
# 20,000 runs to stay within skill-creator's script (issue 17), for a golden-section search
# and a bisection that are ten lines each. tests/analyze/test_interval_coverage.py checks them
# against scipy.optimize's minimize_scalar(method="bounded") and brentq on many count vectors.























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


# ---------------------------------------------------------------------------------------------
# Per-eval change between two K-trial samples










# ---------------------------------------------------------------------------------------------
# Power




# ---------------------------------------------------------------------------------------------
# Thresholds
















