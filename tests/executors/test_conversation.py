"""executors/conversation.py: turns strung into one TrialResult the same way for every executor."""

from __future__ import annotations

from skillassay.executors.base import TrialResult, Usage
from skillassay.executors.conversation import run_turns, sum_usage


def step_with(results: dict[int, TrialResult]):
    seen: list[tuple[int, str]] = []

    def step(k: int, prompt: str) -> TrialResult:
        seen.append((k, prompt))
        return results[k]

    return step, seen


def ok(text: str, tokens: int, ms: int, tools: dict[str, int] | None = None) -> TrialResult:
    return TrialResult(final_text=text, usage=Usage(input_tokens=tokens, output_tokens=1, cost_usd=0.5), steps=1,
                       tool_calls=tools or {}, transcript=[{"type": "a"}, {"type": "b"}], agent_duration_ms=ms)


def test_turns_are_recorded_in_order_and_the_totals_summed() -> None:
    step, seen = step_with({1: ok("one", 10, 5, {"read_file": 1}), 2: ok("two", 20, 7, {"read_file": 2}),
                            3: ok("three", 30, 9)})
    out = run_turns(["a", "b", "c"], step)
    assert seen == [(1, "a"), (2, "b"), (3, "c")]
    assert out.status == "ok" and out.final_text == "three"
    assert [(t.index, t.prompt, t.final_text, t.transcript_start) for t in out.turns] == \
        [(1, "a", "one", 0), (2, "b", "two", 2), (3, "c", "three", 4)]
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cost_usd) == (60, 3, 1.5)
    assert out.agent_duration_ms == 21 and out.steps == 3 and out.tool_calls == {"read_file": 3}
    assert [t.usage.input_tokens for t in out.turns] == [10, 20, 30]  # each turn's own, not the running sum


def test_the_first_failing_turn_ends_the_conversation() -> None:
    bad = TrialResult(status="timeout", error="timed out after 5s", transcript=[{"type": "c"}])
    step, seen = step_with({1: ok("one", 10, 5), 2: bad, 3: ok("never", 1, 1)})
    out = run_turns(["a", "b", "c"], step)
    assert [k for k, _ in seen] == [1, 2]
    assert out.status == "timeout" and out.error == "turn 2: timed out after 5s"
    assert [(t.index, t.status) for t in out.turns] == [(1, "ok"), (2, "timeout")]
    assert len(out.transcript) == 3


def test_unmeasured_counts_stay_unknown_when_summed() -> None:
    total = sum_usage(Usage(input_tokens=None, output_tokens=3), Usage(input_tokens=None, output_tokens=4))
    assert total.input_tokens is None and total.output_tokens == 7
