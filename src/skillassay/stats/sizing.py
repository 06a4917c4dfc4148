"""Sample sizes: trials per arm for a two-proportion difference, evals or trials per eval
that would likely decide a threshold, and the variance bound the advice is planned on.
Method notes: docs/statistics.md, "Sample-size advice"."""

from __future__ import annotations

import math

import numpy as np

from skillassay.stats import distributions as dists
from skillassay.stats.decide import ABS_TOL, REL_TOL
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE

# planning_variance's default: the one-sided level of the variance bound advice is sized on.
SAFEGUARD_LEVEL = 0.8


def trials_per_arm(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Trials per arm to detect p1 vs p2 on one eval (two-sided two-proportion z test).

    None when p1 == p2: no finite sample detects a difference of zero.
    """

    if math.isclose(p1, p2, rel_tol=REL_TOL, abs_tol=ABS_TOL):
        return None
    za, zb = dists.norm_ppf(1 - alpha / 2), dists.norm_ppf(power)
    pbar = (p1 + p2) / 2
    num = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(
        p1 * (1 - p1) + p2 * (1 - p2)
    )
    return max(1, math.ceil(num**2 / (p1 - p2) ** 2 - 1e-9))


def _power_quantile(power: float, df: int) -> float:
    """t_{power}(df): how far beyond the threshold the estimate must sit for the interval to
    clear it with probability `power` (0 at power 0.5: the bound just reaches it, a coin flip)."""

    return float(dists.t_ppf(power, df)) if power != 0.5 else 0.0


def evals_to_decide(
    sd: float, gap: float, conf: float = 0.95, max_evals: int = 100_000, power: float = 0.5,
) -> int | None:
    """Smallest E with (t_{E-1,q} + t_{E-1,power}) * sd / sqrt(E) <= gap: evals at which the
    interval clears the threshold with probability `power`, if the mean and spread hold (at
    power 0.5, where the interval just reaches it). None when it cannot (gap 0)."""

    if gap <= 0 or not np.isfinite(sd):
        return None
    if sd <= 0:
        return 2
    q = (1 + conf) / 2
    # The normal approximation is a lower bound (t > z), so counting up from it is short.
    z = dists.norm_ppf(q) + (dists.norm_ppf(power) if power != 0.5 else 0.0)
    e = max(2, math.floor((z * sd / gap) ** 2))
    while e <= max_evals:
        if (dists.t_ppf(q, e - 1) + _power_quantile(power, e - 1)) * sd / math.sqrt(e) <= gap:
            return e
        e += 1
    return None


def trials_per_eval_to_decide(
    between_var: float, within_var: float, n_evals: int, gap: float, conf: float = 0.95,
    power: float = 0.5,
) -> int | None:
    """K per eval so that (t_q + t_power) * sqrt((omega^2 + s^2/K)/E) <= gap at the current E.

    None when even infinitely many trials cannot get there because the between-eval spread
    (omega^2) alone keeps the interval too wide: then only more evals help.
    """

    if gap <= 0 or n_evals < 2:
        return None
    tq = dists.t_ppf((1 + conf) / 2, n_evals - 1) + _power_quantile(power, n_evals - 1)
    allowed = (gap / tq) ** 2 * n_evals
    room = allowed - max(0.0, between_var)
    if room <= 0:
        return None
    if within_var <= 0:
        return 2
    return max(2, math.ceil(within_var / room - 1e-9))


def planning_variance(variance: float, df: int, level: float = SAFEGUARD_LEVEL) -> float:
    """A variance to size a new run for: its one-sided upper bound at `level`,
    s^2 df / chi2_{1-level}(df). With 10 evals a sample variance is below the truth 40% of the
    time, often by a factor of 2, and advice sized on it then falls short; for the between-eval
    part it promises trials that cannot decide anything (that spread does not shrink with
    trials), so there the caller asks for a 95% bound."""

    if df < 1 or variance <= 0:
        return max(0.0, variance)
    return variance * df / float(dists.chi2_ppf(1 - level, df))


def evals_with_differing(fraction: float, needed: int = MIN_NONZERO_FOR_SIGNIFICANCE,
                         prob: float = 0.9, max_evals: int = 100_000) -> int | None:
    """Smallest E at which, with probability `prob`, at least `needed` evals differ between the
    arms when each differs with probability `fraction`: the sign-flip test drops ties, and
    with fewer than 6 non-zero differences p < 0.05 is unreachable whatever the effect."""

    if not (0 < fraction <= 1):
        return None
    if fraction == 1:
        return needed
    e = needed
    while e <= max_evals:
        if dists.binom_sf(needed - 1, e, fraction) >= prob:
            return e
        e += max(1, e // 50)
    return None
