"""What a trial cost in USD, and where the figure came from (issue 36).

The agent's own figure where it gives one (Claude Code's total_cost_usd: it knows the prices it
was charged), else its tokens x a price table: the dated one shipped beside this module
(prices.json), with the config's `prices` over it per model. A trial whose cost is neither
reported nor priceable stays null ("unknown"), never 0: a 0 would make a budget and a cost
effect look met. The embedded local model and `echo` cost nothing, by definition."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

CostSource = Literal["reported", "priced", "unknown"]
FREE_EXECUTORS = frozenset({"local", "echo"})
PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
PRICES_FILE = Path(__file__).with_name("prices.json")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float | None = None  # None: as input
    cache_write: float | None = None  # None: as input

    @classmethod
    def of(cls, given: Mapping[str, Any]) -> ModelPrice:
        return cls(float(given["input"]), float(given["output"]),
                   None if given.get("cache_read") is None else float(given["cache_read"]),
                   None if given.get("cache_write") is None else float(given["cache_write"]))


@functools.cache
def shipped_table() -> tuple[str, dict[str, ModelPrice]]:
    """(the date the shipped prices were read, model -> price)."""
    data = json.loads(PRICES_FILE.read_text(encoding="utf-8"))
    return str(data["as_of"]), {name: ModelPrice.of(p) for name, p in data["models"].items()}


def price_table(overrides: Mapping[str, Mapping[str, Any]] | None) -> dict[str, ModelPrice]:
    """The shipped table with the config's prices over it, model by model."""
    table = dict(shipped_table()[1])
    for name, given in (overrides or {}).items():
        table[name] = ModelPrice.of(given)
    return table


def price_for(model: str | None, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The model's price: its own name, else the longest listed name it starts with (a dated
    release of a listed model). None when nothing matches: a guess would be a wrong figure."""
    if not model:
        return None
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name + "-") or model.startswith(name + "@")]
    return table[max(prefixes, key=len)] if prefixes else None


def priced_usd(price: ModelPrice, input_tokens: int, output_tokens: int, cache_read: int = 0,
               cache_write: int = 0) -> float:
    """Input counts every input token (cache reads and writes included, as Usage does)."""
    fresh = max(input_tokens - cache_read - cache_write, 0)
    read = price.input if price.cache_read is None else price.cache_read
    write = price.input if price.cache_write is None else price.cache_write
    return (fresh * price.input + cache_read * read + cache_write * write + output_tokens * price.output) / 1e6


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def trial_cost(executor: str, model: str | None, cost_usd: float | None, input_tokens: int | None,
               output_tokens: int | None, cached_input_tokens: int | None, raw: Mapping[str, Any],
               table: Mapping[str, Any] | None, given_source: str | None = None
               ) -> tuple[float | None, CostSource]:
    """(USD or None, its source). `given_source` "priced": the executor computed cost_usd itself
    from the prices it was given (the API executors' `prices` option), not the provider."""
    if executor in FREE_EXECUTORS:
        return 0.0, "reported"
    if cost_usd is not None:
        return float(cost_usd), "priced" if given_source == "priced" else "reported"
    price = price_for(model, table or {})
    if price is None or input_tokens is None or output_tokens is None:
        return None, "unknown"
    usd = priced_usd(price, input_tokens, output_tokens, cached_input_tokens or 0,
                     _int(raw.get("cache_creation_input_tokens")))
    return round(usd, 8), "priced"


def metered_usd(totals: Mapping[str, int], price: ModelPrice) -> float:
    """USD of a metering proxy's summed usage (sandbox/proxy.py): Anthropic reports cache reads
    and writes beside input_tokens; the Responses API counts them inside it."""
    read, write = totals.get("cache_read_input_tokens", 0), totals.get("cache_creation_input_tokens", 0)
    return priced_usd(price, totals.get("input_tokens", 0) + read + write, totals.get("output_tokens", 0), read, write)


def worst_case_usd(price: ModelPrice | None, token_ceiling: int | None) -> float | None:
    """A trial's most expensive case under a total-token ceiling: every token at the dearer of
    the input and output prices. None without a ceiling or a price."""
    if price is None or token_ceiling is None:
        return None
    dearest = max(price.input, price.output, price.cache_write or 0.0)
    return token_ceiling * dearest / 1e6


__all__ = ["FREE_EXECUTORS", "CostSource", "ModelPrice", "metered_usd", "price_for", "price_table", "priced_usd",
           "shipped_table", "trial_cost", "worst_case_usd"]
