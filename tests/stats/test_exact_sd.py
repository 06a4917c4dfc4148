"""stats/exact_sd.stdev is statistics.stdev bit for bit (benchmark.json's stddev figures must not
move), and fast on the repeated values of a big iteration."""

from __future__ import annotations

import math
import statistics
import time
from array import array

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillassay.stats.exact_sd import stdev

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(st.lists(finite, min_size=2, max_size=60))
def test_any_floats_give_statistics_stdev_bit_for_bit(xs: list[float]) -> None:
    assert stdev(xs) == statistics.stdev(xs)


@given(st.lists(st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.25, 2.0, 100.0, 1e-9]), min_size=2, max_size=200))
def test_repeated_figures_give_statistics_stdev_bit_for_bit(xs: list[float]) -> None:
    assert stdev(xs) == statistics.stdev(xs)
    assert stdev(array("d", xs)) == statistics.stdev(xs)


@given(st.lists(st.integers(-(2**60), 2**60), min_size=2, max_size=30))
def test_ints_even_beyond_a_doubles_precision(xs: list[int]) -> None:
    assert stdev(xs) == statistics.stdev(xs)


def test_the_figures_of_typical_trials() -> None:
    rng = np.random.default_rng(3)
    durations = rng.lognormal(1.0, 0.8, 5000).tolist()
    tokens = rng.integers(50, 4000, 5000).astype(float).tolist()
    rates = (rng.integers(0, 4, 5000) / 3).tolist()
    for xs in (durations, tokens, rates, [5.0, 5.0], [1e16, 1.0, -1e16]):
        assert stdev(xs) == statistics.stdev(xs)


def test_a_million_repeated_values_take_well_under_a_second() -> None:
    """statistics.stdev took ~4 s per million values here (a Fraction per value)."""
    xs = array("d", [1.0]) * 700_000 + array("d", [0.0]) * 300_000
    start = time.process_time()
    sd = stdev(xs)
    assert time.process_time() - start < 2.0
    assert sd == pytest.approx(math.sqrt(0.7 * 0.3 * 1_000_000 / 999_999), rel=1e-15)
