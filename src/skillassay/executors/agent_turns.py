"""A multi-turn eval on the API agent loops (issue 39): one provider conversation carries every
turn. Turn 1 is the trial's opening (system prompt, tools, first message); each later turn
appends the user's next message to the same history, which already holds every earlier message,
answer, tool call and tool result, and runs the loop again until the model answers without
tools. All turns share the trial's one deadline."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, Protocol

from skillassay.executors.base import TrialRequest, TrialResult
from skillassay.executors.conversation import request_prompts, run_turns


class CarriesTurns(Protocol):
    """What a provider conversation needs for this (agent_loop.Conversation plus these)."""

    transcript: list[dict[str, Any]]

    def add_user_message(self, text: str) -> None: ...


# (the request for this turn, its transcript events so far) -> what the loop did on it.
Loop = Callable[[TrialRequest, list[dict[str, Any]]], TrialResult]


def converse(conversation: CarriesTurns, request: TrialRequest, opening: list[dict[str, Any]],
             loop: Loop) -> TrialResult:
    deadline = time.monotonic() + request.settings.timeout_seconds

    def step(k: int, prompt: str) -> TrialResult:
        events = opening if k == 1 else [{"type": "user", "text": prompt}]
        conversation.transcript = events  # retry markers of this turn's requests land in it
        if k > 1:
            conversation.add_user_message(prompt)
        left = deadline - time.monotonic()
        if left <= 0:
            return TrialResult(status="timeout", transcript=events,
                               error=f"timed out after {request.settings.timeout_seconds:g}s before this turn")
        return loop(dataclasses.replace(request, settings=dataclasses.replace(request.settings,
                                                                              timeout_seconds=left)), events)

    return run_turns(request_prompts(request), step)
