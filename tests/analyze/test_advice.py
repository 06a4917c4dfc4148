"""Advice that keeps its promise: the trials and evals the statistics recommend, how many trials
an iteration planned, and how fast the per-eval trials-to-call advice is."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iteration_factory import write_iteration
from scipy import stats as sps

from skillassay.analyze.advice import power_stats
from skillassay.analyze.cells import group_records
from skillassay.analyze.compare import _candidate_trials, add_trials_to_call, trials_to_call
from skillassay.analyze.gate_stats import gate_stats
from skillassay.analyze.iteration_change import compare_iterations
from skillassay.analyze.statistics import build_statistics
from skillassay.report.report import significance_sentence
from skillassay.stats.means import binomial_floor_se
from skillassay.stats.multiplicity import _boschloo, bh_adjust, bh_call_threshold, one_sided_exact_p
from skillassay.stats.paired import sign_flip_p_value
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.stats.sizing import evals_to_decide
from skillassay.store.records import TrialRecord
from skillassay.workflows.aggregate import aggregate_iteration

SKILL, BASE = "with_skill", "without_skill"

# --- item 8: trials_requested is the iteration's, not the config's default --------------------


def test_trials_requested_comes_from_the_iteration_not_the_config_default(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPPPFFF", "PPPFFFFFFF") for e in range(1, 5)})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.5}}))  # no trials_per_eval
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10
    skill = st["configurations"]["with_skill"]
    assert set(skill["pass_at_k"]) == {"1", "2", "3", "5", "10"}
    assert skill["pass_at_k"]["10"] == 1.0


def test_trials_requested_without_iteration_json_is_what_ran(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPFFFFF", "PFFFFFFFFF") for e in range(1, 4)})
    (it / "iteration.json").unlink()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {}}))
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10


# --- item 9: the trials-to-call advice is fast and still exact ---------------------------------


def scan_trials_to_call(before: tuple[int, int], after: tuple[int, int], others: list[float | None],
                        index: int, q: float, regression: bool) -> int | None:
    """The reference: every candidate in turn, each with Boschloo and BH (the old, slow way)."""
    (cb, nb), (ca, na) = before, after
    rb, ra = cb / nb, ca / na
    if math.isclose(rb, ra) or (ra < rb) != regression:
        return None
    for k in _candidate_trials(max(nb, na) + 1):
        c1, c2 = round(rb * k), round(ra * k)
        if c1 == c2:
            continue
        p_reg, p_imp = one_sided_exact_p(c1, k, c2, k, only_observed_direction=True)
        ps = list(others)
        ps[index] = p_reg if regression else p_imp
        adj = bh_adjust(ps)[index]
        if adj is not None and adj <= q:
            return k
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=30), st.data(),
       st.sampled_from([0.05, 0.1, 0.2]))
@pytest.mark.sim
def test_bh_call_threshold_is_the_largest_called_p(others: list[float | None], data: st.DataObject,
                                                   q: float) -> None:
    index = data.draw(st.integers(0, len(others) - 1))
    limit = bh_call_threshold(others, index, q)

    def adjusted(x: float) -> float:
        ps = list(others)
        ps[index] = x
        return bh_adjust(ps)[index]

    assert adjusted(limit * (1 - 1e-9)) <= q
    assert adjusted(min(1.0, limit * (1 + 1e-6) + 1e-12)) > q or limit >= 1


@pytest.mark.parametrize(("n", "m"), [(3, 0), (3, 6), (4, 9), (5, 3)])
@pytest.mark.sim
def test_fast_trials_to_call_agrees_with_the_full_scan(n: int, m: int) -> None:
    for cb in range(n + 1):
        for ca in range(n + 1):
            for regression in (True, False):
                others: list[float | None] = [0.5] * (m // 2) + [1.0] * (m - m // 2) + [None]
                got = trials_to_call((cb, n), (ca, n), [*others, 1.0], len(others), 0.1, regression)
                want = scan_trials_to_call((cb, n), (ca, n), [*others, 1.0], len(others), 0.1, regression)
                assert got == want, (cb, ca, n, m, regression)


def k10_records(rates: np.ndarray, rng: np.random.Generator) -> list[TrialRecord]:
    return [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration="with_skill", run_number=k + 1,
                        status="ok", passed=bool(rng.random() < p))
            for e, p in enumerate(rates, start=1) for k in range(10)]


@pytest.mark.sim
def test_trials_to_call_for_20_evals_at_k10_asks_few_exact_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanning took 344 Boschloo tests (~7 s idle, ~30 s loaded) for this comparison."""
    rng = np.random.default_rng(3)
    true = rng.beta(2, 2, 20)
    result = compare_iterations(k10_records(true, rng), k10_records(true, rng), "with_skill")
    possible = sum(r["label"].startswith("possible") for r in result["per_eval"])
    assert possible >= 12
    calls = []
    real = sps.boschloo_exact
    monkeypatch.setattr(sps, "boschloo_exact", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    _boschloo.cache_clear()
    add_trials_to_call(result, 0.1)
    assert len(calls) <= 3 * possible  # what made it slow, counted rather than timed
    ps = {"possible regression": [r["p_regression"] for r in result["per_eval"]],
          "possible improvement": [r["p_improvement"] for r in result["per_eval"]]}
    for i, r in enumerate(result["per_eval"]):
        if r["label"].startswith("possible") and i % 4 == 0:  # a sample against the reference
            args = ((r["before"]["passes"], 10), (r["after"]["passes"], 10), ps[r["label"]], i, 0.1,
                    r["label"] == "possible regression")
            assert r["trials_per_arm_to_call"] == scan_trials_to_call(*args)


# --- item 7: advice that can keep its promise ----------------------------------------------------


def paired_stats(pairs: list[tuple[int, int]], k: int, thresholds: dict | None = None,
                 effect: float = 0.1) -> dict:
    """build_statistics for evals given as (with_skill passes, baseline passes) of k trials,
    its advice planned for `effect`."""
    recs = []
    for e, (a, b) in enumerate(pairs):
        for config, c in ((SKILL, a), (BASE, b)):
            recs += [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=config, run_number=i + 1,
                                 status="ok", passed=i < c) for i in range(k)]
    return build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, thresholds or {},
                            min_detectable_effect=effect)


def test_never_fewer_evals_than_the_sign_flip_test_can_use() -> None:
    """0% baseline, a near-certain skill: the t formula alone said 2 evals, where p < 0.05 is
    impossible (the sign-flip test needs 6 differing evals)."""
    power = paired_stats([(3, 0), (3, 0), (2, 0), (3, 0)], 3)["power"]
    assert power["evals_needed"] >= MIN_NONZERO_FOR_SIGNIFICANCE
    with_ties = paired_stats([(3, 0), (3, 0), (3, 3), (3, 0), (0, 0), (3, 0)], 3)["power"]
    assert with_ties["evals_needed"] > 6  # a third of the evals tie: 6 would rarely give 6 differing


def test_equal_pass_rates_give_no_difference_to_detect() -> None:
    """The mean difference is 9e-18 in floats (sums of thirds): it used to give 3e33 evals."""
    power = paired_stats([(2, 1), (2, 1), (0, 3), (3, 1), (1, 2), (1, 1)], 3)["power"]
    assert power["evals_needed"] is None
    assert power["evals_needed_reason"] == "observed pass rates are equal: no difference to detect"


def test_at_one_trial_per_eval_no_claim_about_trials() -> None:
    g = paired_stats([(1, 0)] * 14 + [(0, 0)] * 6, 1, {"min_pass_rate": 0.5})["gates"]["min_pass_rate"]
    assert g["decision"] == "INCONCLUSIVE"
    assert "cannot decide" not in g["decide_note"] and "alone cannot" not in g["decide_note"]
    assert "cannot be told apart" in g["decide_detail"]
    assert g["trials_to_decide"] is None and g["evals_to_decide"] > 20


def test_ratio_gate_gives_real_advice_with_six_evals() -> None:
    g = paired_stats([(3, 2), (2, 2), (3, 1), (1, 1), (2, 1), (3, 2)], 3,
                     {"min_improvement_ratio": 1.0})["gates"]["min_improvement_ratio"]
    assert g["decision"] == "INCONCLUSIVE" and g["n_evals"] == 6
    assert "fewer than 2 evals" not in g["decide_note"]
    assert g["evals_to_decide"] > 6 and f"about {g['evals_to_decide']} evals" in g["decide_note"]


def test_add_evals_not_trials_only_when_no_eval_ties() -> None:
    """With ties, more trials can make tied evals differ, so "not trials" would be false."""
    five_ties = {"n_evals": 10, "n_nonzero": 5, "p_value": 0.0625}
    assert "not trials" not in significance_sentence(five_ties, "between the arms")
    assert "5 evals tie" in significance_sentence(five_ties, "between the arms")
    no_ties = {"n_evals": 5, "n_nonzero": 5, "p_value": 0.0625}
    assert "add evals (not trials)" in significance_sentence(no_ties, "between the arms")


def test_gate_advice_sized_for_80_percent_not_a_coin_flip() -> None:
    """At the advised evals the interval must clear the threshold with 80% power, so the
    advised size is larger than where the interval would just reach it."""
    sd, gap = 0.3, 0.1
    reach = evals_to_decide(sd, gap)
    powered = evals_to_decide(sd, gap, power=0.8)
    assert powered > reach
    e = powered
    assert (sps.t.ppf(0.975, e - 1) + sps.t.ppf(0.8, e - 1)) * sd / math.sqrt(e) <= gap
    assert (sps.t.ppf(0.975, e - 2) + sps.t.ppf(0.8, e - 2)) * sd / math.sqrt(e - 1) > gap


def test_ratio_advice_is_sized_on_the_test_that_decides_it() -> None:
    """The ratio gate decides when the sign-flip test of a_e - thr * b_e rejects: its advice
    is sized for that test (as the difference's evals advice is), not for the delta method's
    SE inflated twice over. 0.6 vs 0.4 at K = 3 on 6 evals was advised 334 to 16,671 evals (a
    paired t test needs about 35); re-running at the advice then passed 11 of 11 times."""
    pairs = [(2, 1), (2, 1), (1, 1), (3, 1), (2, 2), (1, 0)]
    st = paired_stats(pairs, 3, {"min_improvement_ratio": 1.0})
    g = st["gates"]["min_improvement_ratio"]
    assert g["decision"] == "INCONCLUSIVE"
    # At thr = 1 the deciding test is the difference's own, sized as power_stats sizes it, with
    # the pilot's sd read as an undecided pilot's (a little smaller: assurance.undecided_sigma_ratio),
    # and the interval's noise floor as a second bar, which at a baseline of 1/3 binds below
    # it (the log-scale floor is wide at small rates): more, but not the delta method's 334+.
    assert 0.8 * st["power"]["evals_needed"] <= g["evals_to_decide"] <= 2 * st["power"]["evals_needed"] <= 200, g
    assert f"about {g['evals_to_decide']} evals" in g["decide_note"]
    at_15 = paired_stats(pairs, 3, {"min_improvement_ratio": 1.5})["gates"]["min_improvement_ratio"]
    assert at_15["decision"] == "INCONCLUSIVE", at_15
    assert f"about {at_15['evals_to_decide']} evals" in at_15["decide_note"], at_15


def test_size_advice_says_what_its_80_percent_is() -> None:
    """The 80% is power at a planned effect (min_detectable_effect), said with the effect: the
    old notes promised an average over the values the data allow, which at a fixed true
    difference delivered 62-74% for weak pilots (benchmarks/advice_power.py before this)."""
    from skillassay.analyze.gate import GateResult
    from skillassay.report.report import recommendations

    pairs = [(2, 1), (2, 1), (1, 1), (3, 1), (2, 2), (1, 0)]
    st = paired_stats(pairs, 3, {"min_improvement_ratio": 1.0})
    g = st["gates"]["min_improvement_ratio"]
    # The power stated is the one planned at the size given: at least 80%, rounded down.
    stated = f"{math.floor(g['planned_power'] * 100 + 1e-9)}% power"
    assert g["planned_power"] >= 0.8
    assert f"{stated} if the skill's true pass rate is at least 10 pts above 1 x the baseline's" in g["promise"]
    assert "min_detectable_effect" in g["promise"]
    # The sentence a person reads carries no power figure (issue 34): "likely" stands for it.
    assert g["decide_note"] == (f"about {g['evals_to_decide']} evals would likely decide it if the skill's "
                                "true pass rate is at least 10 pts above 1 x the baseline's")
    recs = recommendations(st, GateResult("NOT_GATED", 0, []), None)
    power = next(r for r in recs if r.startswith("Power:"))
    # report.md's sentence carries no power figure either (issue 34): the promise is benchmark.json's
    assert power == (f"Power: about {st['power']['evals_needed']} evals would likely decide this if the true "
                     "skill-vs-baseline difference is at least 10 pts either way.")
    stated = f"{math.floor(st['power']['planned_power'] * 100 + 1e-9)}% power"
    assert f"{stated} if the true difference is at least 10 pts either way" in st["power"]["promise"]
    assert "averaged over" not in power and "of the time" not in power


# --- item 7: the power at the advised size is the promised 80% -----------------------------------


def _difference_lattice(k: int, effect: float, rng: np.random.Generator) -> np.ndarray:
    """P(d = v / k), v = -k..k: the per-eval difference at k trials when baseline ~ Beta(2,2)
    and skill = baseline + effect (clipped), each arm's passes binomial."""
    b = rng.beta(2, 2, 200_000)
    i = np.arange(k + 1)
    pa = sps.binom.pmf(i[None, :], k, np.clip(b + effect, 0, 1)[:, None])
    pb = sps.binom.pmf(i[None, :], k, b[:, None])
    joint = (pa[:, :, None] * pb[:, None, :]).mean(axis=0)
    probs = np.zeros(2 * k + 1)
    for x in range(k + 1):
        for y in range(k + 1):
            probs[x - y + k] += joint[x, y]
    return probs


class _LatticeSignFlip:
    """The exact two-sided sign-flip p of differences v / k (integer v), from the counts of each
    v: the permutation distribution of sum(sign x |v|) is a convolution of binomials, so the
    p of a 200-eval run costs a few convolutions instead of 2**200 sign patterns (or 50,000
    resamples). Written here, not taken from the library, so that the re-runs' power can be
    computed exactly at every advised size; it agrees with stats/paired.sign_flip_p_value (checked
    in the test that uses it)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.tails: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def p(self, counts: np.ndarray) -> tuple[float, int]:
        k = self.k
        c = tuple(int(counts[k + j] + counts[k - j]) for j in range(1, k + 1))
        s = sum(j * (int(counts[k + j]) - int(counts[k - j])) for j in range(1, k + 1))
        total = sum(j * cj for j, cj in enumerate(c, start=1))
        if total == 0:
            return 1.0, s
        if c not in self.tails:
            pmf = np.ones(1)
            for j, cj in enumerate(c, start=1):
                part = np.zeros(j * cj + 1)
                part[::j] = [math.comb(cj, i) / 2.0**cj for i in range(cj + 1)]
                pmf = np.convolve(pmf, part)
            self.tails[c] = (np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1])
        cdf, sf = self.tails[c]
        t = (s + total) // 2  # sum over the evals with a positive sign, in units of 1 / k
        return min(1.0, 2 * min(float(sf[t]), float(cdf[t]))), s

    def power(self, n: int, probs: np.ndarray, rng: np.random.Generator, draws: int) -> float:
        """P(p < 0.05 with a positive mean) for n evals drawn from the lattice `probs`."""
        hits = 0
        for counts in rng.multinomial(n, probs, size=draws):
            p, s = self.p(counts)
            hits += p < 0.05 and s > 0
        return hits / draws


def _mean_difference(effect: float) -> float:
    """E[clip(b + effect, 0, 1)] - E[b], b ~ Beta(2,2): the true mean difference of a cell."""
    b = (np.arange(20_000) + 0.5) / 20_000
    return float(np.sum(6 * b * (1 - b) / 20_000 * (np.clip(b + effect, 0, 1) - b)))


@pytest.mark.parametrize(("k", "m", "effect"), [(1, 5, 0.15), (3, 5, 0.15), (3, 20, 0.15), (1, 10, 0.3),
                                               (10, 10, 0.3)])
@pytest.mark.sim
def test_evals_advice_delivers_its_80_percent_through_the_sign_flip_test(k: int, m: int, effect: float) -> None:
    """Pilots of m evals x k trials, baseline Beta(2,2), skill + effect, the advice planned for
    the true mean difference: the power of the exact sign-flip test (the test that decides) at
    the advised evals, averaged over 200 pilots, is within 5 points of the power the advice
    states (at least 80%). Sized for the observed difference by assurance it was 73.0% at K = 1,
    5 evals, +0.15 and 73.9% at K = 3, 5 evals, +0.15 (the pilots that overstated the effect got
    the small sizes), and 85.8% at K = 1, 10 evals, +0.3; sized for the planned effect on the
    sample sd itself, 69.4% and 72.7% at 5 evals (the sd understates sigma more often than not).
    At K = 10, +0.3 the advised sizes are 6-12 evals, where one eval more moves the power 10-20
    points: no size there has 80%, and advice that stated 80% delivered 86-89% (61a7b5b); it
    states the power at the size it gives (assurance.planned_power)."""
    rng = np.random.default_rng([k, m, int(effect * 100)])
    probs = _difference_lattice(k, effect, rng)
    test = _LatticeSignFlip(k)
    for _ in range(10):  # the reference is the library's exact test
        d = rng.integers(-k, k + 1, int(rng.integers(6, 13)))
        assert test.p(np.bincount(d + k, minlength=2 * k + 1))[0] == pytest.approx(
            sign_flip_p_value(d / k)[0], abs=1e-12)
    powers: dict[int, float] = {}
    delivered: list[float] = []
    promised: list[float] = []
    for _ in range(200):
        base = rng.beta(2, 2, m)
        skill = np.clip(base + effect, 0, 1)
        recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=config, run_number=i + 1, status="ok",
                            passed=bool(rng.random() < rates[e]))
                for config, rates in ((SKILL, skill), (BASE, base)) for e in range(m) for i in range(k)]
        # power_stats is what build_statistics' "power" section is: called alone, without the
        # sign-flip tests the pilot's other figures need (300 full pilots took 2 minutes).
        advice = power_stats(group_records(recs, (SKILL, BASE)), SKILL, BASE, _mean_difference(effect))
        n = advice["evals_needed"]
        if n is not None:
            if n not in powers:
                powers[n] = test.power(n, probs, rng, 200)
            delivered.append(powers[n])
            promised.append(advice["planned_power"])
            assert advice["planned_power"] >= 0.8
            assert f"{math.floor(advice['planned_power'] * 100 + 1e-9)}% power if" in advice["promise"]
    assert len(delivered) > 140
    # Within 5 points of the promise, less 1 for this test's own scatter (200 pilots, 200 runs
    # per size: about 2.5 points) where the advice is known to fall short: from 5 evals at 3
    # trials it delivers 76.8% of 80.8% promised in the 300-pilot harness (README), here 75.1%.
    short = 0.01 if (k, m) == (3, 5) else 0.0
    gap = float(np.mean(delivered)) - float(np.mean(promised))
    assert -0.05 - short <= gap <= 0.05, (np.mean(delivered), np.mean(promised))


def test_advice_is_planned_for_the_effect_not_for_the_observed_one() -> None:
    """Two pilots with the same spread of differences but observed differences of +0.2 and
    +0.4 get the same size: sizing on the observed difference is what made the advice small
    exactly when the pilot overstated the effect. A larger planned effect needs fewer evals."""
    small = [(1, 0), (2, 2), (0, 1), (2, 1), (1, 1), (2, 1), (1, 0), (0, 0), (2, 1), (1, 2)]
    large = [(a + 1, b) for a, b in small]  # every difference a third higher: the same spread
    ds = [np.array([a - b for a, b in p], dtype=float) for p in (small, large)]
    assert ds[0].mean() != ds[1].mean() and ds[0].std(ddof=1) == pytest.approx(ds[1].std(ddof=1))
    first, second = (paired_stats(p, 3)["power"] for p in (small, large))
    assert first["evals_needed"] == second["evals_needed"] > 10
    assert first["detectable_difference"] == 0.1
    recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=cfg, run_number=i + 1, status="ok",
                        passed=i < x) for e, pair in enumerate(large) for cfg, x in zip((SKILL, BASE), pair, strict=True)
            for i in range(3)]
    at_30 = power_stats(group_records(recs, (SKILL, BASE)), SKILL, BASE, 0.3)
    assert at_30["detectable_difference"] == 0.3
    assert at_30["evals_needed"] < second["evals_needed"] / 4


def test_a_pilot_that_cannot_tell_the_sign_still_gets_its_planned_size() -> None:
    """+3 pts observed with a spread of 40 pts over 10 evals: the observed difference says
    nothing about the size needed for a 10-point difference, so the size is given, and the
    probability of the observed side is reported beside it."""
    power = paired_stats([(3, 1), (1, 3), (2, 2), (3, 2), (0, 1), (2, 1), (1, 2), (3, 2), (1, 1), (2, 2)], 3)["power"]
    assert power["evals_needed"] is not None and power["evals_needed"] > 50
    assert power["sign_probability"] < 0.8


def test_the_config_plans_the_advice(tmp_path: Path) -> None:
    """min_detectable_effect in benchmark_config.json reaches the advice through aggregate."""
    it = write_iteration(tmp_path, 1, {e: ("PPPPFFFFFF", "PFFFFFFFFF") if e % 2 else ("PPPPPPFFFF", "PPPFFFFFFF")
                                       for e in range(1, 9)})
    sizes = {}
    for effect in (0.1, 0.25):
        config = tmp_path / f"config-{effect}.json"
        config.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.45}, "min_detectable_effect": effect}))
        st = aggregate_iteration(it, config_path=config).benchmark.statistics
        assert st["power"]["detectable_difference"] == effect
        assert f"{effect * 100:.3g} pts from 0.45" in st["gates"]["min_pass_rate"]["decide_note"]
        sizes[effect] = (st["power"]["evals_needed"], st["gates"]["min_pass_rate"]["evals_to_decide"])
    assert sizes[0.25][0] <= sizes[0.1][0] and sizes[0.25][1] < sizes[0.1][1]


def _ratio_passes(test: _LatticeSignFlip, pa: np.ndarray, pb: np.ndarray, k: int) -> bool:
    """The ratio gate's PASS at 1.0 for passes pa, pb (k trials per eval), written out: the
    paired sign-flip test rejects with a positive mean, and the noise-floor part of its interval
    (paired_intervals.ratio_interval: Fieller's interval at the floors, one pseudo-success and one
    pseudo-failure per arm) clears 1. Checked against the library's decision in the test."""
    p, s = test.p(np.bincount(pa - pb + k, minlength=2 * k + 1))
    if not (p < 0.05 and s > 0):
        return False
    n = len(pa)
    ma, mb = pa.mean() / k, pb.mean() / k
    fa = binomial_floor_se(pa / k, np.full(n, k), pseudo=1.0)
    fb = binomial_floor_se(pb / k, np.full(n, k), pseudo=1.0)
    return bool(ma - mb > sps.t.ppf(0.975, n - 1) * math.hypot(fa, fb))


@pytest.mark.parametrize(("k", "m", "effect"), [(3, 5, 0.3), (10, 5, 0.3)])
@pytest.mark.sim
def test_ratio_advice_delivers_its_80_percent_through_the_gate_decision(k: int, m: int, effect: float) -> None:
    """The ratio gate decides only when the sign-flip test rejects and its whole interval clears
    the threshold, noise floor included: its advice must be sized for both. Sized for the test
    alone, undecided pilots' advice passed the gate in 72.5% of re-runs at K = 3, 5 evals, +0.3
    (benchmarks/advice_power.py, 287 pilots; 72.4% here). At K = 10 the 5-eval pilots, which the
    sign-flip test can never decide, had their sd read as undecided pilots' all the same, and
    the advice passed 72.2% of re-runs. The chance of a PASS at each advised size (300 re-runs,
    the decision written out and checked against the library's), averaged over the advised
    pilots, is 80% within 5 points (up to 90% at K = 10, below)."""
    rng = np.random.default_rng([k, m, 7])
    test = _LatticeSignFlip(k)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        base = rng.beta(2, 2, n)
        return rng.binomial(k, np.clip(base + effect, 0, 1)), rng.binomial(k, base)

    def gate(pa: np.ndarray, pb: np.ndarray) -> dict:
        st = paired_stats(list(zip(pa.tolist(), pb.tolist(), strict=True)), k, {"min_improvement_ratio": 1.0},
                          _mean_difference(effect))
        return st["gates"]["min_improvement_ratio"]

    checked = 0
    while checked < 12:  # the written-out decision is the library's
        pa, pb = draw(int(rng.integers(12, 30)))
        if pb.sum() == 0:
            continue
        assert _ratio_passes(test, pa, pb, k) == (gate(pa, pb)["decision"] == "PASS")
        checked += 1
    powers: dict[int, float] = {}
    delivered = []
    for _ in range(150):
        pa, pb = draw(m)
        if pb.sum() == 0:
            continue
        g = gate(pa, pb)
        if g["decision"] != "INCONCLUSIVE" or g["evals_to_decide"] is None:
            continue
        n = g["evals_to_decide"]
        if n not in powers:
            runs = [draw(n) for _ in range(300)]
            powers[n] = float(np.mean([_ratio_passes(test, a, b, k) for a, b in runs if b.sum() > 0]))
        delivered.append(powers[n])
    assert len(delivered) > 80
    # At K = 10 the advised sizes are 6-9 evals, where one eval moves the exact test's power by
    # 20 points or more (46%, 74%, 93% at 6, 7, 8 evals): the rounding up lands above 80%.
    assert 0.75 <= float(np.mean(delivered)) <= (0.85 if k < 10 else 0.90), (np.mean(delivered), len(delivered))


@pytest.mark.sim
def test_pass_rate_advice_clears_the_binomial_floor() -> None:
    """The pass rate's interval never has an SE below the binomial floor (stats/means.
    binomial_floor_se), so where trial noise is all the spread there is (every eval at 0.5, 10
    trials) the advice must be sized for that floor too. Sized on the pilot's sd alone, pilots
    of 5 evals were advised 6-10 evals that passed `min_pass_rate 0.3` in 70.0% of re-runs
    (benchmarks/advice_power.py, 217 pilots); here the library's own PASS rate at each advised
    size (100 re-runs), averaged over the advised pilots, is at least 75%."""
    k, m, thr = 10, 5, 0.3
    rng = np.random.default_rng(11)

    def gate(n: int) -> dict:
        recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=SKILL, run_number=i + 1, status="ok",
                            passed=bool(rng.random() < 0.5)) for e in range(n) for i in range(k)]
        # gate_stats is build_statistics' gate section, called alone (the rest of a full
        # build_statistics is 20-300 times its cost here).
        return gate_stats({"min_pass_rate": thr}, group_records(recs, (SKILL, BASE)), SKILL, BASE, [], {},
                          effect=0.5 - thr)["min_pass_rate"]

    powers: dict[int, float] = {}
    delivered = []
    for _ in range(50):
        g = gate(m)
        if g["decision"] != "INCONCLUSIVE" or g["evals_to_decide"] is None:
            continue
        n = g["evals_to_decide"]
        if n not in powers:  # the interval's beta-binomial part makes each call ~70 ms: 100 each
            powers[n] = float(np.mean([gate(n)["decision"] == "PASS" for _ in range(100)]))
        delivered.append(powers[n])
    assert len(delivered) > 30
    # Up to 90%: at 7-10 evals one eval more moves the power by 5-9 points (7: 83%, 9: 92% here),
    # and pilots whose sd came out above the floor get the larger sizes.
    assert 0.75 <= float(np.mean(delivered)) <= 0.90, (np.mean(delivered), powers)


@pytest.mark.sim
def test_pass_rate_trials_advice_keeps_the_power_it_states() -> None:
    """`trials_to_decide` for `min_pass_rate`, with every eval at 0.5 (where more trials are the
    right advice): the power it states is what re-runs of the same evals at the advised trials
    reach. Sized on the t interval alone, with the pilot's own trial noise and its spread
    averaged over sigma's posterior, it promised 80% and reached 56% at 5 evals x 10 trials
    (the interval's beta-binomial part decides there) and 91-96% at 3 trials (pilots whose
    evals tie read a trial noise of 1/3 for 1/4). Below 10 evals no trials figure is promised
    (the beta-binomial part's width at many trials is not planned for); at 20 evals x 10 trials
    it is, and kept (benchmarks/advice_power.py, 50 pilots: 85.2% reached, 83.0% stated). It
    is stated as what trials would do if the evals share one rate (trials_if_alike), not as
    advice: evals that tie by chance look alike too (Beta(2,2): 90% stated, 63% reached)."""
    rng = np.random.default_rng(17)

    def gate(n: int, k: int, thr: float) -> dict:
        recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=SKILL, run_number=i + 1, status="ok",
                            passed=bool(rng.random() < 0.5)) for e in range(n) for i in range(k)]
        return gate_stats({"min_pass_rate": thr}, group_records(recs, (SKILL, BASE)), SKILL, BASE, [], {},
                          effect=0.5 - thr)["min_pass_rate"]

    few = [g for g in (gate(5, 10, 0.4) for _ in range(60)) if g["decision"] == "INCONCLUSIVE"]
    assert few and all(g["trials_to_decide"] is None and g.get("trials_if_alike") is None for g in few), few
    assert not any("completed trials per eval" in g["decide_note"] for g in few), few[0]["decide_note"]

    promised, reached = [], []
    passes: dict[int, float] = {}
    for _ in range(400):
        g = gate(20, 10, 0.4)
        if g["decision"] != "INCONCLUSIVE" or g["trials_if_alike"] is None:
            continue
        assert g["trials_to_decide"] is None  # a figure with its condition, not advice
        k = g["trials_if_alike"]
        if k not in passes:
            passes[k] = float(np.mean([gate(20, k, 0.4)["decision"] == "PASS" for _ in range(150)]))
        promised.append(g["trials_planned_power"])
        reached.append(passes[k])
        if len(promised) == 8:
            break
    assert len(promised) >= 4, promised
    # 150 re-runs per size: a 95% band of about 6 points around the true rate, plus the 5 the
    # promise allows.
    assert abs(float(np.mean(reached)) - float(np.mean(promised))) <= 0.05 + 0.065, (promised, passes)


@pytest.mark.sim
def test_pass_rate_advice_states_the_power_at_the_size_it_gives() -> None:
    """When the plan says the pilot's own size would do, the advice is one eval more, and the
    note states the plan's power there, not at the smaller size the plan found: stated there,
    20-eval pilots at 10 trials, a true gap of 0.2, said 82% and passed 28 of 28 re-runs
    (benchmarks/advice_power.py)."""
    k, m, thr = 10, 20, 0.3
    rng = np.random.default_rng(23)

    def gate(rates: np.ndarray) -> dict:
        recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=SKILL, run_number=i + 1, status="ok",
                            passed=bool(rng.random() < p)) for e, p in enumerate(rates) for i in range(k)]
        return gate_stats({"min_pass_rate": thr}, group_records(recs, (SKILL, BASE)), SKILL, BASE, [], {},
                          effect=0.5 - thr)["min_pass_rate"]

    advised = []
    for _ in range(400):
        g = gate(rng.beta(2, 2, m))
        if g["decision"] == "INCONCLUSIVE" and g["evals_to_decide"] == m + 1:
            advised.append(g["planned_power"])
            if len(advised) == 3:
                break
    assert advised, "no pilot was advised one eval more"
    reached = float(np.mean([gate(rng.beta(2, 2, m + 1))["decision"] == "PASS" for _ in range(80)]))
    # 80 re-runs: a 95% band of about 6 points at 0.9, plus the 5 the promise allows.
    assert abs(reached - float(np.mean(advised))) <= 0.05 + 0.07, (advised, reached)
