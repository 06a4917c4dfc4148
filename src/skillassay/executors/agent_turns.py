"""An agent CLI's conversation (issue 39): turn 1 starts a session, every later user message
resumes it in a new run of the CLI, and the turns' results become one TrialResult.

Pure functions over the per-turn TrialResults, so how a conversation is summed up is tested
without a CLI. The totals follow the project's rule that unknown is not zero: a turn that
reported no token count (killed, refused by the API) leaves the conversation's total unknown,
and says so, rather than under-counting it; the turns before it keep their own figures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from skillassay.executors.base import TrialResult, TurnRecord, Usage


def tagged(events: Sequence[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """Copies of one turn's events, each naming its turn (1-based), so a reader of the
    transcript can tell the turns apart without counting."""
    return [{**event, "turn": turn} for event in events]


def conversation_result(prompts: Sequence[str], results: Sequence[TrialResult]) -> TrialResult:
    """The trial of a multi-turn conversation from its turns' results, in order (one per turn
    run; the conversation stops at the first that did not end ok). The answer and status are
    the last turn's; counts and durations are summed; the transcript is every turn's events,
    tagged, with TurnRecord.transcript_start where each begins."""
    if not results:
        raise ValueError("a conversation has at least one turn")
    last = results[-1]
    out = TrialResult(final_text=last.final_text, status=last.status,
                      model=next((r.model for r in results if r.model), None))
    if last.status != "ok":
        out.error = f"turn {len(results)} of {len(prompts)}: {last.error or last.status}"
    for index, (prompt, result) in enumerate(zip(prompts, results, strict=False), start=1):
        out.turns.append(TurnRecord(index=index, prompt=prompt, final_text=result.final_text, status=result.status,
                                    error=result.error, usage=result.usage, agent_duration_ms=result.agent_duration_ms,
                                    transcript_start=len(out.transcript)))
        out.transcript += tagged(result.transcript, index)
        for name, count in result.tool_calls.items():
            out.tool_calls[name] = out.tool_calls.get(name, 0) + count
        out.steps += result.steps
        out.errors_encountered += result.errors_encountered
    triggered = [r.skill_triggered for r in results if r.skill_triggered is not None]
    out.skill_triggered = any(triggered) if triggered else None
    out.usage = summed_usage([r.usage for r in results])
    durations = [r.agent_duration_ms for r in results]
    out.agent_duration_ms = None if None in durations else sum(d or 0 for d in durations)
    return out


def summed_usage(usages: Sequence[Usage]) -> Usage:
    """The conversation's usage: each figure summed over the turns, None when any turn's is
    unknown (named in `warning`). raw keeps every turn's own record under "turns" beside the
    summed top-level counts (what pricing reads, e.g. cache_creation_input_tokens)."""

    def total(figure: Callable[[Usage], int | float | None]) -> Any:
        values = [figure(u) for u in usages]
        return None if None in values else sum(v or 0 for v in values)

    out = Usage(input_tokens=total(lambda u: u.input_tokens), output_tokens=total(lambda u: u.output_tokens),
                cost_usd=total(lambda u: u.cost_usd))
    if out.input_tokens is not None:
        out.cached_input_tokens = sum(u.cached_input_tokens or 0 for u in usages)
    if out.cost_usd is not None:
        out.cost_usd = round(out.cost_usd, 10)
    out.cost_source = _same([u.cost_source for u in usages])
    out.source = _same([u.source for u in usages])
    out.raw = _summed_counts([u.raw for u in usages])
    out.raw["turns"] = [dict(u.raw) for u in usages]
    notes = [f"turn {k}: {u.warning}" for k, u in enumerate(usages, start=1) if u.warning]
    unknown = [str(k) for k, u in enumerate(usages, start=1) if u.input_tokens is None or u.output_tokens is None]
    if unknown and len(unknown) < len(usages):
        notes.append(f"turn {', '.join(unknown)} reported no token counts, so the conversation's total is unknown")
    out.warning = "; ".join(notes) or None
    return out


def _same(values: list[str | None]) -> str | None:
    """The one value every turn agrees on, else None (mixed sources are no single source)."""
    found = set(values)
    return values[0] if len(found) == 1 else None


def _summed_counts(raws: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Top-level integer counts summed across turns (a field missing from a turn counts 0), and
    the metering proxy's totals (raw["proxy"]) likewise."""
    out: dict[str, Any] = {}
    for raw in raws:
        for key, value in raw.items():
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] = out.get(key, 0) + value
    proxies = [raw["proxy"] for raw in raws if isinstance(raw.get("proxy"), dict)]
    if proxies:
        out["proxy"] = _summed_counts(proxies)
    return out


def counts_since(now: dict[str, Any], before: dict[str, Any] | None, keys: Sequence[str]) -> dict[str, Any]:
    """A CLI's session-long counters (`now`) made one turn's: `keys` minus the previous turn's
    value of the same counter (`before`); other fields kept. Both CLIs report some figures for
    the whole resumed session rather than for the run that printed them."""
    out = dict(now)
    for key in keys:
        value, prior = now.get(key), (before or {}).get(key)
        if _number(value) and _number(prior):
            out[key] = max(value - prior, 0) if isinstance(value, int) and isinstance(prior, int) \
                else max(round(value - prior, 10), 0.0)
    return out


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


__all__ = ["conversation_result", "counts_since", "summed_usage", "tagged"]
