"""The cost of one trial (executors/pricing.py): the agent's figure, else tokens x the dated price
table (the config's prices over it), else unknown: null, never 0."""

from __future__ import annotations

import json

import pytest

from skillassay.executors.pricing import PRICES_FILE, price_for, price_table, shipped_table, trial_cost


def test_shipped_table_is_dated_and_complete() -> None:
    data = json.loads(PRICES_FILE.read_text(encoding="utf-8"))
    assert data["as_of"] == shipped_table()[0]
    for name, p in data["models"].items():
        assert set(p) == {"input", "output", "cache_read", "cache_write"}, name


def test_dated_release_matches_its_model_and_unknown_model_has_no_price() -> None:
    table = price_table(None)
    assert price_for("claude-sonnet-4-5-20250929", table) == table["claude-sonnet-4-5"]
    assert price_for("claude-sonnet-4-20250514", table) == table["claude-sonnet-4"]
    assert price_for("mystery-model", table) is None and price_for(None, table) is None


def test_sources() -> None:
    table = price_table({"smol": {"input": 1.0, "output": 2.0, "cache_read": 0.5}})
    assert trial_cost("claude_code", "x", 0.0123, 10, 5, None, {}, table) == (0.0123, "reported")
    # 1,000,000 input of which 400,000 cache reads, 500,000 output
    assert trial_cost("openai", "smol", None, 1_000_000, 500_000, 400_000, {}, table) == \
        (pytest.approx(0.6 + 0.2 + 1.0), "priced")
    assert trial_cost("codex", "mystery", None, 10, 5, None, {}, table) == (None, "unknown")
    assert trial_cost("codex", "smol", None, None, None, None, {}, table) == (None, "unknown")
    assert trial_cost("local", "smol", None, 10, 5, None, {}, table) == (0.0, "reported")
    assert trial_cost("echo", None, None, 10, 5, None, {}, table) == (0.0, "reported")
    assert trial_cost("openai", "x", 0.5, 10, 5, None, {}, table, "priced") == (0.5, "priced")


def test_cache_writes_are_priced_at_the_cache_write_price() -> None:
    table = price_table({"m": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}})
    cost, _ = trial_cost("codex", "m", None, 1_000_000, 0, 0, {"cache_creation_input_tokens": 1_000_000}, table)
    assert cost == pytest.approx(3.75)
