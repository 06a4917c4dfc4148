"""A resumed session's counters made one turn's (executors/session_counts.py)."""

from __future__ import annotations

import pytest

from skillassay.executors.session_counts import counts_since


def test_only_the_named_counters_are_reduced_by_the_turn_before():
    now = {"inputTokens": 300, "costUSD": 0.0135, "contextWindow": 200000, "name": "x"}
    before = {"inputTokens": 100, "costUSD": 0.0045, "contextWindow": 200000}
    out = counts_since(now, before, ("inputTokens", "costUSD", "missing"))
    assert out == {"inputTokens": 200, "costUSD": pytest.approx(0.009), "contextWindow": 200000, "name": "x"}


def test_without_a_turn_before_or_a_number_nothing_changes():
    now = {"inputTokens": 300, "flag": True}
    assert counts_since(now, None, ("inputTokens",)) == now
    assert counts_since(now, {"inputTokens": "100", "flag": False}, ("inputTokens", "flag")) == now


def test_a_counter_never_goes_below_zero():
    assert counts_since({"n": 5}, {"n": 7}, ("n",)) == {"n": 0}
