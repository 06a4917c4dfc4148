"""How an agent CLI's turns become one trial (executors/agent_turns.py): pure, on plain results."""

from __future__ import annotations

import pytest

from skillassay.executors.agent_turns import conversation_result, counts_since, summed_usage
from skillassay.executors.base import TrialResult, Usage

PROMPTS = ("one", "two", "three")


def _turn(text: str, tokens: tuple[int, int] | None, *, status: str = "ok", cost: float | None = 0.01,
          events: int = 2, triggered: bool | None = None) -> TrialResult:
    usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cached_input_tokens=5, cost_usd=cost,
                  raw={"input_tokens": tokens[0], "cache_creation_input_tokens": 3}) if tokens else Usage()
    return TrialResult(final_text=text, status=status,  # type: ignore[arg-type]
                       error=None if status == "ok" else "API status 400 refused", usage=usage,
                       tool_calls={"Bash": 1}, steps=2, errors_encountered=1 if status != "ok" else 0,
                       skill_triggered=triggered, agent_duration_ms=100,
                       transcript=[{"type": "x", "n": i} for i in range(events)], model="m")


def test_three_turns_sum_up_and_keep_each_turn():
    r = conversation_result(PROMPTS, [_turn("a", (100, 10), events=2, triggered=False),
                                      _turn("b", (200, 20), events=3, triggered=True),
                                      _turn("c", (300, 30), events=1, triggered=False)])
    assert (r.status, r.error, r.final_text, r.model) == ("ok", None, "c", "m")
    assert [(t.index, t.prompt, t.final_text, t.transcript_start) for t in r.turns] == [
        (1, "one", "a", 0), (2, "two", "b", 2), (3, "three", "c", 5)]
    assert [e["turn"] for e in r.transcript] == [1, 1, 2, 2, 2, 3]
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_input_tokens) == (600, 60, 15)
    assert r.usage.cost_usd == pytest.approx(0.03) and r.usage.warning is None
    assert r.usage.raw["cache_creation_input_tokens"] == 9 and len(r.usage.raw["turns"]) == 3
    assert (r.tool_calls, r.steps, r.agent_duration_ms, r.skill_triggered) == ({"Bash": 3}, 6, 300, True)


def test_an_errored_turn_ends_the_conversation_named_and_leaves_the_total_unknown():
    r = conversation_result(PROMPTS, [_turn("a", (100, 10)), _turn("", None, status="error")])
    assert r.status == "error" and r.error == "turn 2 of 3: API status 400 refused"
    assert [t.status for t in r.turns] == ["ok", "error"] and r.turns[0].usage.input_tokens == 100
    assert r.usage.input_tokens is None and r.usage.cost_usd is None  # unknown, not turn 1's alone
    assert "turn 2 reported no token counts" in (r.usage.warning or "")
    assert r.skill_triggered is None


def test_usage_sources_agree_or_are_none():
    priced = Usage(input_tokens=1, output_tokens=1, cost_usd=0.1, cost_source="priced", source="proxy")
    reported = Usage(input_tokens=1, output_tokens=1, cost_usd=0.1, source="proxy")
    assert summed_usage([priced, priced]).cost_source == "priced"
    both = summed_usage([priced, reported])
    assert both.cost_source is None and both.source == "proxy"


def test_counts_since_subtracts_only_the_counters_named():
    now = {"inputTokens": 300, "costUSD": 0.0135, "contextWindow": 200000, "name": "x"}
    before = {"inputTokens": 100, "costUSD": 0.0045, "contextWindow": 200000}
    out = counts_since(now, before, ("inputTokens", "costUSD"))
    assert out == {"inputTokens": 200, "costUSD": pytest.approx(0.009), "contextWindow": 200000, "name": "x"}
    assert counts_since(now, None, ("inputTokens",)) == now


def test_an_empty_conversation_is_refused():
    with pytest.raises(ValueError):
        conversation_result(PROMPTS, [])
