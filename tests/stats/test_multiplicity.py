"""skillassay.stats.multiplicity: Benjamini-Hochberg and the exact one-sided per-eval test, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from skillassay.stats.multiplicity import bh_adjust, one_sided_exact_p

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
