"""skillassay.stats.ratio: ratios of paired means, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from skillassay.stats.ratio import geometric_mean_ratio, ratio_of_means

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
