"""skillassay.stats.paired: the paired difference and its sign-flip test, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillassay.stats.paired import paired_difference, sign_flip_p_value

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
