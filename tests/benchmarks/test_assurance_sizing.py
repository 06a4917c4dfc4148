"""Assurance sizing (analyze/assurance.py): the closed form against a Monte Carlo of the model it
claims to compute, minimality of the advised size, the ceiling that says when no size can be
promised, and the plug-in limit when the pilot is huge."""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pytest
import repo_paths
from scipy import stats as sps
from statsmodels.stats.power import TTestPower

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
import assurance_sizing as assurance  # noqa: E402 - the retired sizing, kept for benchmarks/advice_rules_study.py


def bayes_fresh(t_pilot: float, m: int, n: int, draws: int = 400_000, seed: int = 0) -> float:
    """The model by brute force: sigma and the effect from the pilot's posterior (flat priors on
    the mean and log sigma), a new run of n evals, its t test at 95% in the pilot's direction."""
    rng = np.random.default_rng(seed)
    s = 1.0
    sigma = s * np.sqrt((m - 1) / rng.chisquare(m - 1, draws))
    effect = t_pilot * s / math.sqrt(m) + sigma / math.sqrt(m) * rng.standard_normal(draws)
    mean2 = effect + sigma / math.sqrt(n) * rng.standard_normal(draws)
    s2 = sigma * np.sqrt(rng.chisquare(n - 1, draws) / (n - 1))
    return float(np.mean(math.copysign(1, t_pilot) * mean2 / (s2 / math.sqrt(n)) > sps.t.ppf(0.975, n - 1)))


@pytest.mark.parametrize(("t_pilot", "m", "n"), [(2.0, 10, 15), (1.2, 6, 40), (3.0, 20, 10), (-2.5, 5, 30)])
def test_fresh_assurance_is_the_posterior_probability_of_success(t_pilot: float, m: int, n: int) -> None:
    # 400,000 draws: the Monte Carlo's own sd is under 0.001.
    assert assurance.fresh_assurance(t_pilot, m, n) == pytest.approx(bayes_fresh(t_pilot, m, n), abs=0.004)


def test_ceiling_is_the_probability_of_the_side() -> None:
    assert assurance.fresh_ceiling(1.5, 8) == pytest.approx(sps.t.cdf(1.5, 7))
    assert assurance.fresh_assurance(1.5, 8, 50_000) == pytest.approx(assurance.fresh_ceiling(1.5, 8), abs=0.01)
    # The data put the effect on its side with probability 0.78 < 0.8: no size can promise 80%.
    assert assurance.fresh_ceiling(0.8, 10) < 0.8
    assert assurance.evals_for_assurance(0.8, 10) is None
    assert assurance.evals_for_assurance(1.0, 2) is None  # one df: P(side) 0.75


@pytest.mark.parametrize(("t_pilot", "m"), [(2.0, 10), (1.5, 5), (4.0, 20), (1.2, 6)])
def test_evals_for_assurance_is_the_smallest_size_reaching_80(t_pilot: float, m: int) -> None:
    n = assurance.evals_for_assurance(t_pilot, m)
    assert n is not None
    assert assurance.fresh_assurance(t_pilot, m, n) >= 0.8 > assurance.fresh_assurance(t_pilot, m, n - 1)


def test_assurance_asks_more_than_the_plug_in_and_meets_it_for_a_huge_pilot() -> None:
    """A pilot's estimate overstates the effect half the time: with 10 pilot evals and t = 2
    the plug-in t-test size (20) delivers less than 80%; with a pilot of 40,000 evals the
    effect is known and the assurance size is the plug-in's."""
    plug = math.ceil(TTestPower().solve_power(effect_size=2 / math.sqrt(10), alpha=0.05, power=0.8))
    assert assurance.evals_for_assurance(2.0, 10) > 1.5 * plug
    m = 40_000
    t = 0.02 * math.sqrt(m) * 10  # a standardized effect of 0.2
    plug = TTestPower().solve_power(effect_size=t / math.sqrt(m), alpha=0.05, power=0.8)
    assert assurance.evals_for_assurance(t, m) == pytest.approx(plug, abs=2)


def bayes_trials(gap: float, spread: float, noise: float, e: int, k: float, k2: int,
                 draws: int = 400_000, seed: int = 1) -> float:
    rng = np.random.default_rng(seed)
    v = spread * (e - 1) / rng.chisquare(e - 1, draws)
    omega2 = np.maximum(0.0, v - noise)
    tau = math.sqrt(noise * (1 + k / k2) / e)
    gap2 = gap + tau * rng.standard_normal(draws)
    s2 = np.sqrt((omega2 + noise * k / k2) * rng.chisquare(e - 1, draws) / (e - 1))
    return float(np.mean(gap2 / (s2 / math.sqrt(e)) > sps.t.ppf(0.975, e - 1)))


@pytest.mark.parametrize(("gap", "spread", "noise", "e", "k", "k2"),
                         [(0.1, 0.04, 0.02, 10, 3, 10), (0.08, 0.03, 0.025, 20, 3, 8), (0.05, 0.01, 0.009, 30, 5, 40)])
def test_trials_assurance_matches_its_model(gap: float, spread: float, noise: float, e: int, k: float,
                                            k2: int) -> None:
    got = assurance.trials_assurance(gap, spread, noise, e, k, k2)
    assert got == pytest.approx(bayes_trials(gap, spread, noise, e, k, k2), abs=0.004)


def test_trials_for_assurance_is_minimal_and_refuses_when_the_spread_dominates() -> None:
    k = assurance.trials_for_assurance(0.08, 0.03, 0.025, 20, 3)
    assert k is not None and k > 3
    f = assurance.trials_assurance
    assert f(0.08, 0.03, 0.025, 20, 3, k) >= 0.8 > f(0.08, 0.03, 0.025, 20, 3, k - 1)
    # Between-eval spread 0.05 (sd 0.22) over 10 evals keeps a t interval +-0.16 wide whatever
    # the trials: a gap of 0.1 cannot be decided by trials alone.
    assert assurance.trials_for_assurance(0.1, 0.05 + 0.02, 0.02, 10, 3) is None


def bayes_signflip(t_pilot: float, m: int, n: int, step: float, draws: int = 400_000, seed: int = 2) -> float:
    """signflip_assurance's model by brute force: the posterior draws of bayes_fresh, a new run's
    mean and sd, and the sign-flip criterion (S - step) / sqrt(Q) > z on its sum S and
    Q = sum d^2, z being where S / sqrt(Q) is when the t statistic is at its critical value."""
    rng = np.random.default_rng(seed)
    sigma = np.sqrt((m - 1) / rng.chisquare(m - 1, draws))
    effect = abs(t_pilot) / math.sqrt(m) + sigma / math.sqrt(m) * rng.standard_normal(draws)
    mean2 = effect + sigma / math.sqrt(n) * rng.standard_normal(draws)
    var2 = sigma**2 * rng.chisquare(n - 1, draws) / (n - 1)
    q = (n - 1) * var2 + n * mean2**2
    tc = sps.t.ppf(0.975, n - 1)
    z = tc * math.sqrt(n / (n - 1 + tc**2))
    return float(np.mean((n * mean2 - step) / np.sqrt(q) > z))


@pytest.mark.parametrize(("t_pilot", "m", "n", "step"),
                         [(2.0, 10, 15, 1.0), (1.5, 5, 40, 0.8), (3.0, 20, 10, 0.5), (-2.5, 5, 30, 2.0)])
def test_signflip_assurance_is_the_posterior_probability_of_its_criterion(t_pilot: float, m: int, n: int,
                                                                         step: float) -> None:
    got = assurance.signflip_assurance(t_pilot, m, n, step)
    assert got == pytest.approx(bayes_signflip(t_pilot, m, n, step), abs=0.004)


@pytest.mark.parametrize(("t_pilot", "m", "n"), [(2.0, 10, 15), (1.2, 6, 40), (3.0, 20, 10)])
def test_signflip_assurance_without_a_lattice_is_the_t_tests(t_pilot: float, m: int, n: int) -> None:
    """With continuous differences the criterion is the t test's (S / sqrt(Q) is monotone in t),
    so the two sizings agree; a lattice (1 to 3 trials per eval) asks for more evals."""
    assert assurance.signflip_assurance(t_pilot, m, n, 0.0) == pytest.approx(
        assurance.fresh_assurance(t_pilot, m, n), abs=0.002)
    assert assurance.signflip_assurance(t_pilot, m, n, 0.9) < assurance.fresh_assurance(t_pilot, m, n) - 0.01


@pytest.mark.parametrize(("t_pilot", "m", "step"), [(2.0, 10, 0.9), (1.5, 5, 1.4), (4.0, 20, 0.3)])
def test_evals_for_signflip_assurance_is_the_smallest_size_reaching_80(t_pilot: float, m: int,
                                                                       step: float) -> None:
    n = assurance.evals_for_assurance(t_pilot, m, sign_flip_step=step)
    assert n is not None and n >= assurance.evals_for_assurance(t_pilot, m)
    assert assurance.signflip_assurance(t_pilot, m, n, step) >= 0.8 > assurance.signflip_assurance(
        t_pilot, m, n - 1, step)
    assert assurance.evals_for_assurance(0.8, 10, sign_flip_step=step) is None  # the side is uncertain


def test_signflip_advice_costs_milliseconds() -> None:
    started = time.process_time()
    for t in np.linspace(1.3, 6, 40):
        assurance.evals_for_assurance(float(t), 10, sign_flip_step=0.9)
    assert (time.process_time() - started) / 40 < 0.02


def _prior_averaged(lo: float, hi: float, m: int = 10, sigma: float = 0.4, pilots: int = 1500,
                    seed: int = 0, cut: tuple[float, float] | None = None) -> tuple[float, float]:
    """(success rate, mean assurance promised) over the advised runs, each experiment's mean
    drawn from Uniform(lo, hi) with sigma fixed: pilot, advice (only where a size can be
    promised), a fresh run of the advised size with the same truth, its t test in the pilot's
    direction. The fresh run's mean and sd are drawn in closed form, so any size is cheap."""
    rng = np.random.default_rng(seed)
    hits, promised = [], []
    for _ in range(pilots):
        mu = rng.uniform(lo, hi)
        d = rng.normal(mu, sigma, m)
        se = d.std(ddof=1) / math.sqrt(m)
        t = float(d.mean() / se)
        bounds = None if cut is None else (cut[0] / se, cut[1] / se)
        n = assurance.evals_for_assurance(t, m, bounds=bounds)
        if n is None:
            continue
        mean2 = rng.normal(mu, sigma / math.sqrt(n))
        s2 = sigma * math.sqrt(rng.chisquare(n - 1) / (n - 1))
        hits.append(math.copysign(1, t) * mean2 / (s2 / math.sqrt(n)) > sps.t.ppf(0.975, n - 1))
        promised.append(assurance.fresh_assurance(t, m, n, bounds=bounds))
    return float(np.mean(hits)), float(np.mean(promised))


@pytest.mark.sim
def test_assurance_keeps_its_promise_averaged_over_a_wide_prior() -> None:
    """Assurance promises E[success | pilot] = its value when truths come from its flat prior,
    so averaged over the runs it advises (whatever selects them) the success rate is the mean
    promise. A prior 24 pilot SEs wide is flat enough: 84.7% kept of 85.0% promised (with sigma
    fixed: the flat prior on log sigma is not what matters). On a prior 5 SEs wide, like bounded
    pass-rate effects, the flat prior weighs large effects the prior rules out and the advice
    falls short (74.0% against 80.8%; benchmarks/advice_power.py --truth prior: 65-73% against
    78-80% through the library)."""
    got, promised = _prior_averaged(-1.5, 1.5)
    assert got == pytest.approx(promised, abs=0.035), (got, promised)  # sd of `got` about 0.01
    narrow, promised_narrow = _prior_averaged(-0.1, 0.5)
    assert narrow < promised_narrow - 0.03, (narrow, promised_narrow)  # sd about 0.013


# --- the prior cut to where the mean can be (a pass rate's bounded range) -------------------------


def bayes_truncated(t_pilot: float, m: int, n: int, step: float, bounds: tuple[float, float],
                    draws: int = 400_000, seed: int = 3) -> tuple[float, float]:
    """_truncated_assurance's model by brute force: (sigma, mean) from the flat posterior kept
    only where the mean lies inside `bounds` (in the pilot's SE units), a new run of n evals, the
    sign-flip criterion in the pilot's direction; and the probability of the pilot's side."""
    rng = np.random.default_rng(seed)
    kept_c, kept_mu = [], []
    while sum(len(c) for c in kept_c) < draws:
        c = np.sqrt((m - 1) / rng.chisquare(m - 1, draws))
        mu = t_pilot + c * rng.standard_normal(draws)  # the mean in SE units, given sigma = c s
        inside = (mu > bounds[0]) & (mu < bounds[1])
        kept_c.append(c[inside])
        kept_mu.append(mu[inside])
    c, mu = np.concatenate(kept_c)[:draws], np.concatenate(kept_mu)[:draws]
    sign = math.copysign(1, t_pilot)
    mean2 = mu / math.sqrt(m) + c / math.sqrt(n) * rng.standard_normal(draws)  # in units of s
    q = (n - 1) * c**2 * rng.chisquare(n - 1, draws) / (n - 1) + n * mean2**2
    tc = sps.t.ppf(0.975, n - 1)
    z = tc * math.sqrt(n / (n - 1 + tc**2))
    return float(np.mean((sign * n * mean2 - step) / np.sqrt(q) > z)), float(np.mean(sign * mu > 0))


@pytest.mark.parametrize(("t_pilot", "m", "n", "step", "bounds"),
                         [(2.0, 5, 20, 1.0, (-1.5, 2.5)), (1.5, 10, 40, 0.8, (-2.0, 3.0)),
                          (-2.0, 5, 30, 0.5, (-3.0, 1.0)), (1.2, 6, 200, 0.0, (-2.0, 2.5))])
@pytest.mark.sim
def test_assurance_under_a_cut_prior_is_its_posterior_probability_of_success(
        t_pilot: float, m: int, n: int, step: float, bounds: tuple[float, float]) -> None:
    """A pass rate lies in [0, 1], so the advice's prior is flat only over the values it allows:
    given sigma the mean's posterior is a truncated normal, and sigma's is reweighted by the mass
    left inside. The flat prior gives 0.708, 0.629, 0.786 and 0.771 in these cases."""
    want, side = bayes_truncated(t_pilot, m, n, step, bounds)
    assert assurance.signflip_assurance(t_pilot, m, n, step, bounds=bounds) == pytest.approx(want, abs=0.004)
    assert assurance.fresh_ceiling(t_pilot, m, bounds) == pytest.approx(side, abs=0.004)
    if step == 0:
        assert assurance.fresh_assurance(t_pilot, m, n, bounds=bounds) == pytest.approx(want, abs=0.004)
    assert assurance.signflip_assurance(t_pilot, m, n, step) > want + 0.015  # the flat prior promises more


def test_bounds_far_away_give_the_flat_prior() -> None:
    far = (-1e6, 1e6)
    assert assurance.signflip_assurance(2.0, 10, 15, 1.0, bounds=far) == pytest.approx(
        assurance.signflip_assurance(2.0, 10, 15, 1.0), abs=0.001)
    assert assurance.fresh_assurance(2.0, 10, 15, bounds=far) == pytest.approx(
        assurance.fresh_assurance(2.0, 10, 15), abs=0.001)
    assert assurance.fresh_ceiling(1.5, 8, far) == pytest.approx(assurance.fresh_ceiling(1.5, 8), abs=0.001)
    assert assurance.evals_for_assurance(2.0, 10, bounds=far) == assurance.evals_for_assurance(2.0, 10)


@pytest.mark.parametrize(("t_pilot", "m", "step"), [(2.0, 5, 0.9), (3.0, 10, 0.5), (2.5, 20, 0.0)])
def test_evals_under_a_cut_prior_are_the_smallest_reaching_80(t_pilot: float, m: int, step: float) -> None:
    """A range 4 pilot SEs either side of 0 (a weak pilot of pass rates) asks for more evals than
    the flat prior, and the size is the smallest whose assurance under the cut prior is 80%."""
    b = (-4.0, 4.0)
    n = assurance.evals_for_assurance(t_pilot, m, sign_flip_step=step, bounds=b)
    assert n is not None and n > assurance.evals_for_assurance(t_pilot, m, sign_flip_step=step)
    f = assurance.signflip_assurance
    assert f(t_pilot, m, n, step, bounds=b) >= 0.8 > f(t_pilot, m, n - 1, step, bounds=b)


def test_cut_prior_advice_costs_milliseconds() -> None:
    assurance.evals_for_assurance(2.0, 10, sign_flip_step=0.9, bounds=(-4.0, 4.0))
    started = time.process_time()
    for t in np.linspace(1.3, 3.9, 20):
        assurance.evals_for_assurance(float(t), 10, sign_flip_step=0.9, bounds=(-4.0, 4.0))
    assert (time.process_time() - started) / 20 < 0.03


@pytest.mark.sim
def test_cut_prior_keeps_its_promise_averaged_over_a_narrow_prior() -> None:
    """The flat prior falls short on truths from U(-0.1, 0.5) (74.0% against 80.8%, the test
    above); cut to where those truths can lie, the prior is the generating one, and the promise
    is kept (sd of the success rate about 0.017 over 600 advised runs)."""
    got, promised = _prior_averaged(-0.1, 0.5, pilots=800, cut=(-0.1, 0.5))
    assert got == pytest.approx(promised, abs=0.04), (got, promised)


@pytest.mark.sim
def test_planned_power_at_few_evals_is_the_exact_tests() -> None:
    """At 6-8 evals the exact sign-flip test rejects only when nearly every difference has the
    effect's sign (at 6, all of them: the smallest p is 2 / 64), which the test's normal form
    does not see: it put 6 evals of N(1.4, 1) differences near 80% where the exact test rejects
    46-60% of the time. The planned power is now within 6 points of the exact test's at 6, 7, 8
    and 12 evals (1,000 draws each, the library's exact test)."""
    from skillassay.stats.paired import sign_flip_p_value

    rng = np.random.default_rng(4)
    for n in (6, 7, 8, 12):
        z = rng.normal(1.4, 1.0, (1000, n))
        exact = np.mean([sign_flip_p_value(row)[0] < 0.05 and row.sum() > 0 for row in z])
        planned = assurance.planned_signflip_power(1.4, 10_000, n, 0.0, sigma_ratio=1.0)
        assert abs(planned - exact) < 0.06, (n, planned, exact)
