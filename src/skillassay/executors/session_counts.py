"""A resumed agent CLI session's figures made one turn's (issue 39).

Claude Code and Codex report some counters for the whole session a run resumed, not for the
run that printed them (Claude Code's result event: modelUsage and total_cost_usd; Codex's
turn.completed usage). A conversation's later turn subtracts the turn before it, so each turn
is charged what it spent. Pure, over the plain dicts the CLIs print."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard


def counts_since(now: dict[str, Any], before: dict[str, Any] | None, keys: Sequence[str]) -> dict[str, Any]:
    """`now` with each counter of `keys` reduced by the same counter in `before` (the session's
    figures at the end of the turn before); other fields, and a counter either side lacks, are
    kept as they are. Never below zero: a session's counters only grow."""
    out = dict(now)
    for key in keys:
        value, prior = now.get(key), (before or {}).get(key)
        if _number(value) and _number(prior):
            out[key] = max(value - prior, 0) if isinstance(value, int) and isinstance(prior, int) \
                else max(round(value - prior, 10), 0.0)
    return out


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


__all__ = ["counts_since"]
