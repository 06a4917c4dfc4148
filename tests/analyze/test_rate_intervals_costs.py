"""The mean cost's interval and the test it inverts read the same evals (rate_intervals._cost_evals):
evals without trials are dropped by both, fewer than 2 left gives neither."""

from __future__ import annotations

import pytest

from skillassay.analyze import rate_intervals as ri


@pytest.mark.parametrize("reading", ["population", "these_evals"])
def test_interval_and_test_drop_the_same_evals(reading: ri.Reading) -> None:
    sums, counts, wv = [3000.0, 0.0, 3300.0, 2700.0, 0.0], [3, 0, 3, 3, 0], [9000.0, None, 12000.0, 8000.0, None]
    kept = ([3000.0, 3300.0, 2700.0], [3, 3, 3], [9000.0, 12000.0, 8000.0])
    assert ri.cost_interval(sums, counts, wv, reading) == ri.cost_interval(*kept, reading)
    for x in (500.0, 950.0, 1000.0, 1100.0, 2000.0):
        assert ri.cost_p_at_most(sums, counts, wv, x, reading) == ri.cost_p_at_most(*kept, x, reading)
        lo, _ = ri.cost_interval(sums, counts, wv, reading) or (None, None)
        p = ri.cost_p_at_most(sums, counts, wv, x, reading)
        assert lo is not None and p is not None
        if abs(lo - x) > 1.0:
            assert (lo > x) == (p < 0.025), (x, lo, p)


def test_fewer_than_two_evals_with_trials_give_neither() -> None:
    sums, counts, wv = [3000.0, 0.0, 0.0], [3, 0, 0], [9000.0, None, None]
    assert ri.cost_interval(sums, counts, wv) is None
    assert ri.cost_p_at_most(sums, counts, wv, 1000.0) is None
