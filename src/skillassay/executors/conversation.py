"""Running a multi-turn trial as a sequence of turns (issue 39): each turn is one call of the
executor's own single-turn step, which keeps whatever history it needs (a message list, a
session id); this module only strings the turns together into one TrialResult, the same way
for every executor: one TurnRecord per turn with that turn's answer, tokens, cost and
duration, the transcripts concatenated, the totals summed, and the first turn that fails ending
the conversation (the turns before it kept)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from skillassay.executors.base import TrialRequest, TrialResult, TurnRecord, Usage

# One turn: (1-based index, the user's message) -> what the agent did on it.
TurnStep = Callable[[int, str], TrialResult]


def request_prompts(request: TrialRequest) -> list[str]:
    """The user's messages in order: the request's prompt, then its later turns."""
    return [request.prompt, *request.turns]


def run_turns(prompts: Sequence[str], step: TurnStep) -> TrialResult:
    """Every turn through `step`, in order, until one does not end ok. A step that raises (a
    TransientError, a bug) propagates: the whole trial is retried or failed as any other, since
    a conversation cannot be resumed half-way in a fresh agent."""
    out = TrialResult()
    for k, prompt in enumerate(prompts, 1):
        start = len(out.transcript)
        one = step(k, prompt)
        out.turns.append(TurnRecord(index=k, prompt=prompt, final_text=one.final_text, status=one.status,
                                    error=one.error, usage=one.usage, agent_duration_ms=one.agent_duration_ms,
                                    transcript_start=start))
        out.transcript.extend(one.transcript)
        _add(out, one)
        if one.status != "ok":
            out.status = one.status
            out.error = f"turn {k}: {one.error or one.status}"
            break
    return out


def _add(total: TrialResult, one: TrialResult) -> None:
    """Fold one turn's figures into the trial's: the answer is the latest, the rest are sums."""
    total.final_text = one.final_text
    total.usage = sum_usage(total.usage, one.usage) if total.turns[:-1] else _copy(one.usage)
    for name, count in one.tool_calls.items():
        total.tool_calls[name] = total.tool_calls.get(name, 0) + count
    total.steps += one.steps
    total.errors_encountered += one.errors_encountered
    if one.skill_triggered is not None:
        total.skill_triggered = bool(total.skill_triggered) or one.skill_triggered
    if one.agent_duration_ms is not None:
        total.agent_duration_ms = (total.agent_duration_ms or 0) + one.agent_duration_ms
    total.model = one.model or total.model


def _copy(u: Usage) -> Usage:
    return Usage(u.input_tokens, u.output_tokens, u.cached_input_tokens, u.cost_usd, u.cost_source, dict(u.raw),
                 u.source, u.warning)


def _plus(a: int | float | None, b: int | float | None) -> int | float | None:
    """A sum that stays None only when neither part was measured."""
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


def sum_usage(a: Usage, b: Usage) -> Usage:
    """Two turns' usage added; the raw accounts are kept per turn under `turns`."""
    raw_turns = list(a.raw.get("turns", [a.raw])) if a.raw else []
    return Usage(
        input_tokens=_plus(a.input_tokens, b.input_tokens),  # type: ignore[arg-type]
        output_tokens=_plus(a.output_tokens, b.output_tokens),  # type: ignore[arg-type]
        cached_input_tokens=_plus(a.cached_input_tokens, b.cached_input_tokens),  # type: ignore[arg-type]
        cost_usd=_plus(a.cost_usd, b.cost_usd),
        cost_source=a.cost_source or b.cost_source,
        raw={"turns": [*raw_turns, b.raw]},
        source=a.source or b.source,
        warning="; ".join(w for w in (a.warning, b.warning) if w) or None,
    )
