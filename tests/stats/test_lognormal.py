"""skillassay.stats.lognormal: the mean cost's interval (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

from skillassay.stats.lognormal import lognormal_mean_interval


def test_lognormal_interval_of_two_far_apart_values_is_unbounded_not_a_crash() -> None:
    """2 evals whose mean durations differ 5000-fold: the pivot's upper quantile is past
    exp's range (OverflowError in a Ray run's report before)."""
    lo, hi = lognormal_mean_interval([0.001, 5.0])
    assert 0 < lo < 5.0 and hi == float("inf")
