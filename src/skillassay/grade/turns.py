"""Grading a multi-turn trial (issue 39): each turn's expectations on that turn's answer, the
eval's own on the last answer; the files are those at the end of the conversation for every
expectation (a turn's file check sees what the agent left, since the work dir is one folder the
agent keeps changing and no earlier state of it is kept). The turns' answers are on disk in the
run folder's turns.json, so `skillassay grade` re-grades exactly what `run` graded."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from skillassay.assertions import RunView
from skillassay.models import ExpectationResult

TURNS_FILE = "turns.json"


class _Placed(Protocol):
    @property
    def turn(self) -> int | None: ...

    @property
    def in_conversation(self) -> bool: ...


def view_for(exp: _Placed, view: RunView) -> RunView:
    """The view an expectation is checked on: its turn's prompt and answer, or the whole run's
    (the last answer) for the conversation's own expectations and a single-prompt eval's."""
    if exp.turn is None or not 1 <= exp.turn <= len(view.turn_answers):
        return view
    prompt, answer = view.turn_answers[exp.turn - 1]
    return dataclasses.replace(view, final_text=answer, prompt=prompt)


def by_turn(compiled: Sequence[_Placed], indices: Sequence[int]) -> list[list[int]]:
    """`indices` grouped by the turn of their expectation, in first-seen order."""
    groups: dict[int | None, list[int]] = {}
    for i in indices:
        groups.setdefault(compiled[i].turn, []).append(i)
    return list(groups.values())


def name_turns(compiled: Sequence[_Placed], results: Sequence[ExpectationResult]) -> None:
    """Each result of a multi-turn eval names its turn (`"turn": k`, null for the whole
    conversation): an extra field, so existing readers of grading.json read it unchanged."""
    for exp, result in zip(compiled, results, strict=True):
        if exp.in_conversation:
            result.turn = exp.turn  # type: ignore[attr-defined]  # an extra field (the model allows extras)


def turns_json(records: Sequence[tuple[int, str, str, str, str | None]]) -> str:
    """turns.json's text: per turn its index, prompt, answer, status and error."""
    rows = [{"turn": k, "prompt": prompt, "answer": answer, "status": status, "error": error}
            for k, prompt, answer, status, error in records]
    return json.dumps({"turns": rows}, ensure_ascii=False, indent=2) + "\n"


def read_turn_answers(run_dir: Path) -> tuple[tuple[str, str], ...]:
    """(prompt, answer) per turn from the run folder's turns.json; empty when there is none or
    it cannot be read (a single-prompt trial)."""
    rows = read_turns(run_dir)
    return tuple((str(r.get("prompt") or ""), str(r.get("answer") or "")) for r in rows)


def read_turns(run_dir: Path) -> list[dict[str, Any]]:
    """turns.json's rows, or none when the file is absent or damaged."""
    try:
        data = json.loads((run_dir / TURNS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = data.get("turns") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
