"""skillassay.stats.means: the eval-clustered and the trial-pooled mean, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from skillassay.stats.means import clustered_mean, pooled_clustered_mean

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
