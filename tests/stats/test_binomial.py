"""skillassay.stats.binomial: Wilson intervals, pass@k and pass^k, within-eval variance and
reliability labels, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from skillassay.stats.binomial import pass_at_k, pass_hat_k, reliability_label, wilson_interval, within_eval_variance

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
