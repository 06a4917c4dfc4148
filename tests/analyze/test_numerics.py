"""skillassay.stats (rates, means, paired, ratios, sizing) against the reference values in stats-notes.md and against scipy /
statsmodels on random inputs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from skillassay.stats.binomial import pass_at_k, pass_hat_k, reliability_label, wilson_interval, within_eval_variance
from skillassay.stats.decide import decide, plain_comparison
from skillassay.stats.means import clustered_mean, pooled_clustered_mean
from skillassay.stats.multiplicity import bh_adjust, one_sided_exact_p
from skillassay.stats.paired import paired_difference, sign_flip_p_value
from skillassay.stats.ratio import geometric_mean_ratio, ratio_of_means
from skillassay.stats.sizing import evals_to_decide, trials_per_arm, trials_per_eval_to_decide

# --------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    ("c", "n", "lo", "hi"),
    [(0, 3, 0.0, 0.5615), (1, 3, 0.0615, 0.7923), (2, 3, 0.2077, 0.9385),
     (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (3, 3, 0.4385, 1.0)],
)
def test_wilson_reference(c: int, n: int, lo: float, hi: float) -> None:
    got = wilson_interval(c, n)
    assert got is not None
    assert got[0] == pytest.approx(lo, abs=5e-5)
    assert got[1] == pytest.approx(hi, abs=5e-5)


def test_wilson_nothing_completed() -> None:
    assert wilson_interval(0, 0) is None


@given(n=st.integers(1, 500), data=st.data(), conf=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_scipy(n: int, data: st.DataObject, conf: float) -> None:
    c = data.draw(st.integers(0, n))
    ci = sps.binomtest(c, n).proportion_ci(confidence_level=conf, method="wilson")
    lo, hi = wilson_interval(c, n, conf)
    assert lo == pytest.approx(ci.low, abs=1e-9)
    assert hi == pytest.approx(ci.high, abs=1e-9)
    assert 0.0 <= lo <= c / n <= hi <= 1.0


def test_wilson_is_statsmodels_bit_for_bit() -> None:
    """wilson_interval repeats statsmodels' arithmetic instead of importing it (start-up time):
    every bound must be the very same float, not merely close."""
    from statsmodels.stats.proportion import proportion_confint

    cases = [(c, n) for n in [*range(1, 61), 97, 200, 1000, 4000, 123_457] for c in {0, 1, n // 3, n // 2, n - 1, n}]
    for (c, n), conf in itertools.product(cases, [0.6, 0.8, 0.9, 0.95, 0.99]):
        lo, hi = proportion_confint(c, n, alpha=1 - conf, method="wilson")
        want = (0.0 if c == 0 else max(0.0, float(lo)), 1.0 if c == n else min(1.0, float(hi)))
        assert wilson_interval(c, n, conf) == want, (c, n, conf)


# --------------------------------------------------------------------------- pass@k, pass^k


def test_pass_k_reference() -> None:
    assert pass_at_k(3, 2, 2) == pytest.approx(1.0)
    assert pass_hat_k(3, 2, 2) == pytest.approx(0.333333, abs=1e-6)
    assert pass_at_k(10, 5, 3) == pytest.approx(0.916667, abs=1e-6)
    assert pass_hat_k(10, 5, 3) == pytest.approx(0.083333, abs=1e-6)


@given(n=st.integers(1, 300), data=st.data())
def test_pass_k_match_binomial_definitions(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    assert pass_at_k(n, c, k) == pytest.approx(
        1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-9)
    assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k),
                                                      abs=1e-12)
    # k = 1 is the plain pass rate for both
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n)


def test_pass_k_rejects_k_above_n() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)


# --------------------------------------------------------------------------- variance, labels


@given(k=st.integers(2, 200), data=st.data())
def test_within_variance_is_sample_variance(k: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, k))
    x = np.r_[np.ones(c), np.zeros(k - c)]
    assert within_eval_variance(c, k) == pytest.approx(float(np.var(x, ddof=1)))


def test_reliability_labels() -> None:
    assert within_eval_variance(1, 1) is None
    assert reliability_label(1, 1) == "unreliable"
    assert reliability_label(0, 0) == "unreliable"
    assert reliability_label(3, 3) == "High"
    assert reliability_label(0, 3) == "High"
    assert reliability_label(2, 3) == "Low (investigate)"


# --------------------------------------------------------------------------- clustered means

REF_TRIALS = [[1, 1, 1], [1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 0, 0]]


def _ols_cluster(y: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    x = np.ones_like(y, dtype=float)
    naive = sm.OLS(y, x).fit()
    clustered = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return float(naive.params[0]), float(naive.bse[0]), float(clustered.bse[0])


def test_clustered_reference_and_statsmodels() -> None:
    rates = [np.mean(t) for t in REF_TRIALS]
    est = clustered_mean(rates)
    assert est.mean == pytest.approx(0.466667, abs=1e-6)
    assert est.se == pytest.approx(0.169967, abs=1e-6)
    y = np.array(REF_TRIALS, dtype=float).ravel()
    g = np.repeat(np.arange(5), 3)
    mean, naive_se, cluster_se = _ols_cluster(y, g)
    assert naive_se == pytest.approx(0.133333, abs=1e-6)
    assert est.se == pytest.approx(cluster_se, rel=1e-10)
    assert est.mean == pytest.approx(mean)
    lo, hi = sps.t.interval(0.95, 4, loc=est.mean, scale=est.se)
    assert est.interval == pytest.approx((lo, hi))
    pooled = pooled_clustered_mean([sum(t) for t in REF_TRIALS], [3] * 5)
    assert pooled.se == pytest.approx(cluster_se, rel=1e-10)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1e4), min_size=1, max_size=8), min_size=2, max_size=12))
def test_pooled_clustered_mean_matches_statsmodels(groups: list[list[float]]) -> None:
    y = np.array([v for g in groups for v in g])
    ids = np.array([i for i, g in enumerate(groups) for _ in g])
    mean, _, cluster_se = _ols_cluster(y, ids)
    est = pooled_clustered_mean([sum(g) for g in groups], [len(g) for g in groups])
    assert est.mean == pytest.approx(mean, rel=1e-9, abs=1e-9)
    assert est.se == pytest.approx(cluster_se, rel=1e-6, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=40))
def test_clustered_mean_matches_scipy_t(values: list[float]) -> None:
    est = clustered_mean(values)
    assert est.se == pytest.approx(sps.sem(values), rel=1e-9, abs=1e-12)
    if est.se > 1e-12:
        ci = sps.ttest_1samp(values, 0).confidence_interval(0.95)
        assert est.interval == pytest.approx((ci.low, ci.high), rel=1e-9, abs=1e-12)


def test_clustered_mean_bounds_clip_and_single_eval() -> None:
    est = clustered_mean([0.0, 0.0, 1 / 3], bounds=(0.0, 1.0))
    assert est.interval is not None and est.interval[0] == 0.0
    single = clustered_mean([0.5])
    assert single.se is None and single.interval is None


# --------------------------------------------------------------------------- BH


def test_bh_reference() -> None:
    got = bh_adjust([0.01, 0.04, 0.03, 0.005, 0.2])
    assert got == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.2])


def test_bh_keeps_none() -> None:
    got = bh_adjust([0.01, None, 0.04])
    assert got[1] is None
    assert got[0] == pytest.approx(0.02) and got[2] == pytest.approx(0.04)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_bh_matches_statsmodels(ps: list[float]) -> None:
    expected = multipletests(ps, method="fdr_bh")[1]
    assert bh_adjust(ps) == pytest.approx(list(expected), abs=1e-12)


# --------------------------------------------------------------------------- paired difference

REF_D = [1 / 3, 2 / 3, 0, -1 / 3, 1 / 3, 2 / 3, 1, 1 / 3]


def test_paired_reference() -> None:
    pd = paired_difference(REF_D, [0.0] * len(REF_D))
    assert pd.mean == pytest.approx(0.375)
    assert pd.se == pytest.approx(0.146892, abs=1e-6)
    assert pd.p_value == pytest.approx(0.078125)
    assert pd.method == "exact sign-flip"
    assert pd.n_nonzero == 7 and pd.significance_reachable


def _brute_force_sign_flip(d: list[float]) -> float:
    d_arr = np.asarray(d, dtype=float)
    obs = abs(d_arr.mean())
    signs = np.array(list(itertools.product([-1, 1], repeat=len(d))))
    null = np.abs((signs * d_arr).mean(axis=1))
    return float(np.mean(null >= obs - 1e-12))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1]), min_size=1,
                max_size=10))
def test_sign_flip_exact_matches_brute_force(d: list[float]) -> None:
    p, _ = sign_flip_p_value(d)
    if not any(d):
        assert p == 1.0
        return
    # the brute force enumerates zeros too: dropping them must not change the p-value
    assert p == pytest.approx(min(1.0, _brute_force_sign_flip(d)), abs=1e-9)


def test_sign_flip_exact_tie_at_zero_mean() -> None:
    # Sums of thirds that are 0 exactly come out as ~5e-17 in floats; scipy's relative tie
    # tolerance then reported p = 0.945 here. The true p is 1.
    d = [-1, -1, -1 / 3, 2 / 3, -1, 2 / 3, 1, 1]
    assert sign_flip_p_value(d)[0] == pytest.approx(1.0)


def test_sign_flip_monte_carlo_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(3)
    d = list(rng.choice([-1 / 3, 1 / 3, 2 / 3], size=16))
    exact = _brute_force_sign_flip(d)
    p1, m1 = sign_flip_p_value(d, seed=7)
    p2, _ = sign_flip_p_value(d, seed=7)
    p3, _ = sign_flip_p_value(d, seed=8)
    assert "monte-carlo" in m1 and "seed 7" in m1
    assert p1 == p2
    assert p1 != p3
    assert p1 == pytest.approx(exact, abs=0.01)


def test_significance_unreachable_below_six_nonzero() -> None:
    five = paired_difference([1.0] * 5 + [0.5] * 3, [0.0] * 5 + [0.5] * 3)
    assert five.n_nonzero == 5
    assert not five.significance_reachable
    assert five.p_value == pytest.approx(0.0625)
    assert "unreachable" in five.explanation
    six = paired_difference([1.0] * 6, [0.0] * 6)
    assert six.significance_reachable and six.p_value == pytest.approx(0.03125)


# --------------------------------------------------------------------------- ratios


def test_ratio_undefined_when_baseline_zero() -> None:
    r = ratio_of_means([0.5, 1.0], [0.0, 0.0])
    assert r.ratio is None and r.interval is None
    assert r.undefined_reason and "baseline" in r.undefined_reason


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0.05, 1)), min_size=3, max_size=30))
def test_ratio_delta_method_matches_covariance_formula(pairs: list[tuple[float, float]]) -> None:
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    r = ratio_of_means(a, b)
    e = len(a)
    ratio = a.mean() / b.mean()
    cov = np.cov(a, b, ddof=1) / e
    var = (cov[0, 0] - 2 * ratio * cov[0, 1] + ratio**2 * cov[1, 1]) / b.mean() ** 2
    assert r.ratio == pytest.approx(ratio)
    assert r.se == pytest.approx(math.sqrt(max(var, 0.0)), rel=1e-6, abs=1e-9)
    assert r.interval[0] <= ratio + 1e-12 and ratio <= r.interval[1] + 1e-12


def test_ratio_bootstrap_is_seeded() -> None:
    a, b = [0.9, 0.8, 1.0, 0.7, 0.6, 1.0], [0.5, 0.6, 0.4, 0.7, 0.0, 0.3]
    r1 = ratio_of_means(a, b, method="bootstrap", seed=1)
    r2 = ratio_of_means(a, b, method="bootstrap", seed=1)
    assert r1.interval == r2.interval
    assert r1.interval[0] < r1.ratio < r1.interval[1]


def test_geometric_mean_ratio_skips_missing_and_zero() -> None:
    g = geometric_mean_ratio([100, None, 0, 50, 80], [200, 100, 10, 100, None])
    assert g.n_used == 2 and g.n_skipped == 3
    assert g.ratio == pytest.approx(0.5)
    assert g.interval == (pytest.approx(0.5), pytest.approx(0.5))
    none = geometric_mean_ratio([None], [1.0])
    assert none.ratio is None and none.reason


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1e6), st.floats(1, 1e6)), min_size=2, max_size=30))
def test_geometric_mean_ratio_matches_scipy(pairs: list[tuple[float, float]]) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    logs = np.log(np.array(a) / np.array(b))
    g = geometric_mean_ratio(a, b)
    assert g.ratio == pytest.approx(float(np.exp(logs.mean())), rel=1e-9)
    if sps.sem(logs) > 1e-9:
        ci = sps.ttest_1samp(logs, 0).confidence_interval(0.95)
        assert g.interval == pytest.approx((math.exp(ci.low), math.exp(ci.high)), rel=1e-9)


# --------------------------------------------------------------------------- exact per-eval test


def test_one_sided_exact_p() -> None:
    reg, imp = one_sided_exact_p(10, 10, 0, 10)
    assert reg < 1e-4 and imp == pytest.approx(1.0)
    expected = sps.boschloo_exact([[3, 2], [0, 1]], alternative="greater").pvalue
    assert one_sided_exact_p(3, 3, 2, 3)[0] == pytest.approx(expected)
    assert one_sided_exact_p(3, 3, 3, 3) == (1.0, 1.0)
    assert one_sided_exact_p(0, 5, 0, 5) == (1.0, 1.0)
    assert one_sided_exact_p(0, 0, 1, 3) == (None, None)
    full = one_sided_exact_p(2, 3, 1, 3)
    fast = one_sided_exact_p(2, 3, 1, 3, only_observed_direction=True)
    assert fast[0] == pytest.approx(full[0]) and fast[1] == 1.0 and full[1] < 1.0
    assert one_sided_exact_p(1, 3, 1, 3, only_observed_direction=True) == (1.0, 1.0)


# --------------------------------------------------------------------------- power


def test_trials_per_arm_formula() -> None:
    assert trials_per_arm(0.5, 0.5) is None
    p1, p2 = 0.9, 0.5
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    pbar = 0.7
    n = (za * math.sqrt(2 * pbar * (1 - pbar))
         + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / (p1 - p2) ** 2
    assert trials_per_arm(p1, p2) == math.ceil(n)
    assert trials_per_arm(0.9, 0.8) > trials_per_arm(0.9, 0.5)


def test_evals_to_decide_is_minimal() -> None:
    sd, gap = 0.3, 0.1
    e = evals_to_decide(sd, gap)
    assert e is not None
    assert sps.t.ppf(0.975, e - 1) * sd / math.sqrt(e) <= gap
    assert sps.t.ppf(0.975, e - 2) * sd / math.sqrt(e - 1) > gap
    assert evals_to_decide(sd, 0.0) is None


def test_trials_per_eval_to_decide() -> None:
    # between-eval spread alone too wide: more trials cannot help
    assert trials_per_eval_to_decide(1.0, 0.25, 5, 0.1) is None
    k = trials_per_eval_to_decide(0.0, 0.25, 10, 0.2)
    tq = sps.t.ppf(0.975, 9)
    assert tq * math.sqrt(0.25 / k / 10) <= 0.2
    assert tq * math.sqrt(0.25 / (k - 1) / 10) > 0.2


# --------------------------------------------------------------------------- gates


@pytest.mark.parametrize(
    ("interval", "threshold", "direction", "expected"),
    [
        ((0.8, 0.9), 0.8, "min", "PASS"),  # lower bound exactly at threshold: good side
        ((0.7, 0.8), 0.8, "min", "INCONCLUSIVE"),  # upper bound at threshold is not all bad
        ((0.6, 0.79), 0.8, "min", "FAIL"),
        ((0.79, 0.81), 0.8, "min", "INCONCLUSIVE"),
        ((0.8, 0.8), 0.8, "min", "PASS"),
        ((90.0, 100.0), 100.0, "max", "PASS"),
        ((100.0, 110.0), 100.0, "max", "INCONCLUSIVE"),
        ((100.5, 110.0), 100.0, "max", "FAIL"),
        ((95.0, 105.0), 100.0, "max", "INCONCLUSIVE"),
        (None, 0.8, "min", "INCONCLUSIVE"),
    ],
)
def test_decide(interval, threshold, direction, expected) -> None:
    assert decide(interval, threshold, direction) == expected


def test_plain_comparison_equality_passes() -> None:
    assert plain_comparison(0.8, 0.8, "min") is True
    assert plain_comparison(0.1 + 0.7, 0.8, "min") is True  # 0.7999999999999999
    assert plain_comparison(0.79, 0.8, "min") is False
    assert plain_comparison(100.0, 100.0, "max") is True
    assert plain_comparison(100.01, 100.0, "max") is False
    assert plain_comparison(None, 1.0, "min") is None
    with pytest.raises(ValueError):
        plain_comparison(1.0, 1.0, "above")  # type: ignore[arg-type]


def test_lognormal_interval_of_two_far_apart_values_is_unbounded_not_a_crash() -> None:
    """2 evals whose mean durations differ 5000-fold: the pivot's upper quantile is past
    exp's range (OverflowError in a Ray run's report before)."""
    from skillassay.stats.lognormal import lognormal_mean_interval

    lo, hi = lognormal_mean_interval([0.001, 5.0])
    assert 0 < lo < 5.0 and hi == float("inf")
