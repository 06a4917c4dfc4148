"""skillassay.stats.decide: an interval, or a plain value, against a threshold (split from
tests/analyze/test_numerics.py)."""

from __future__ import annotations

import pytest

from skillassay.stats.decide import decide, plain_comparison

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
