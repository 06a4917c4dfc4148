"""A multi-turn trial's files (issue 39): each transcript event tagged with its turn, "Turn k"
headings in transcript.md, turns.json (each turn's prompt and answer, what grading reads) and
the per-turn figures in metrics.json and timing.json. Pure functions over the TrialResult; the
writing is execute_trial's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from skillassay.executors import TrialResult, TurnRecord
from skillassay.executors.pricing import trial_cost
from skillassay.grade.turns import turns_json
from skillassay.models.runfiles import TurnFigures


def check_turns(result: TrialResult, prompts: Sequence[str]) -> TrialResult:
    """An executor that says it carries a conversation must report every turn it ran, in
    order, and all of them unless one failed; anything else is no measurement of the eval, so
    the trial is an error (resumable) instead of grading a conversation that never happened."""
    if result.status != "ok":
        return result
    ran = [t.index for t in result.turns]
    if ran != list(range(1, len(prompts) + 1)):
        result.status = "error"
        result.error = (f"the executor reported turns {ran or 'none'} of a {len(prompts)}-turn conversation: "
                        "not every turn was run")
    elif (bad := next((t for t in result.turns if t.status != "ok"), None)) is not None:
        result.status = bad.status
        result.error = f"turn {bad.index}: {bad.error or bad.status}"
    return result


def tag_transcript(result: TrialResult) -> list[dict[str, Any]]:
    """The transcript with `"turn": k` on every event of turn k (events before turn 1's, such as
    a retry marker, carry none)."""
    starts = sorted((t.transcript_start, t.index) for t in result.turns)
    out: list[dict[str, Any]] = []
    for i, event in enumerate(result.transcript):
        turn = None
        for start, k in starts:
            if start <= i:
                turn = k
        out.append(event if turn is None or not isinstance(event, dict) else {**event, "turn": turn})
    return out


def turns_markdown(events: list[dict[str, Any]], turns: Sequence[TurnRecord],
                   pretty: Callable[[dict[str, Any]], str]) -> str:
    """transcript.md for a conversation: a "Turn k" heading (with the user's message) before
    each turn's events."""
    prompts = {t.index: t.prompt for t in turns}
    parts, current = ["# Transcript\n"], None
    for i, event in enumerate(events, 1):
        turn = event.get("turn")
        if turn is not None and turn != current:
            current = turn
            parts.append(f"\n# Turn {turn}\n\n> {quote_lines(prompts.get(turn, ''))}\n")
        parts.append(f"\n## {i}. {event.get('type', 'event')}\n\n```json\n{pretty(event)}\n```\n")
    return "".join(parts)


def quote_lines(text: str) -> str:
    return "\n> ".join(text.splitlines() or [""])


def answers_of(result: TrialResult) -> tuple[tuple[str, str], ...]:
    """(prompt, answer) per turn, for grading (empty for a single-turn trial)."""
    return tuple((t.prompt, t.final_text) for t in result.turns)


def redact_turns(result: TrialResult, redactor: Callable[[str], str]) -> None:
    """Answers and errors as they will be on disk: grading sees what is written."""
    for t in result.turns:
        t.final_text = redactor(t.final_text)
        t.error = redactor(t.error) if t.error else t.error


def turns_file_text(result: TrialResult) -> str:
    return turns_json([(t.index, t.prompt, t.final_text, t.status, t.error) for t in result.turns])


def turn_figures(result: TrialResult, executor: str, model: str | None,
                 prices: Any) -> list[TurnFigures]:
    """Each turn's tokens, cost and duration, priced as the trial is (executors/pricing.py)."""
    out = []
    for t in result.turns:
        u = t.usage
        cost, _ = trial_cost(executor, model, u.cost_usd, u.input_tokens, u.output_tokens,
                             u.cached_input_tokens, u.raw, prices, u.cost_source)
        out.append(TurnFigures(turn=t.index, status=t.status, error=t.error, input_tokens=u.input_tokens,
                               output_tokens=u.output_tokens, total_tokens=u.total_tokens, cost_usd=cost,
                               duration_ms=t.agent_duration_ms))
    return out


def timing_turns(figures: Sequence[TurnFigures]) -> list[TurnFigures]:
    """timing.json's part of the figures: tokens and duration."""
    return [TurnFigures(turn=f.turn, total_tokens=f.total_tokens, duration_ms=f.duration_ms) for f in figures]
