"""Giving up on a dead provider inside a trial, while nothing has shown the setup works.

An agent CLI retries a failing API by itself: Claude Code ten times over about five minutes
for a 529, Codex five reconnects of five requests each, and a stalled connection for as long
as the trial's timeout. Until one trial of a run has succeeded, those retries are not worth
waiting for: the stop rule (run/stop.py) stops the run after `limit` failures in a row with
one error, and the CLI's own retries are such failures. So the first trials watch the CLI's
stream and end it once it has failed `failures` times in a row, or has shown no answer from
the model after `first_answer_seconds`; the trial's error then says so in one fixed form,
which the stop rule reads back as that many failures.

A trial killed at its timeout while the CLI was retrying failed for the same reason as the
retries (the 529s, not the clock), so it is recorded with the same error as a trial whose
retries were cut short."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from skillassay.executors.options import positive_int_option

# How long a first trial may wait for the model's first answer (a complete first message):
# a live API answers a first turn in seconds; a dead one never does. Only while no trial has
# succeeded, and `--fail-fast 0` turns it off with the rest of the stop rule.
FIRST_ANSWER_SECONDS = 30.0


def first_answer_option(options: Mapping[str, Any]) -> int | None:
    """`-o first_answer_seconds=N` of an agent-CLI executor: how long a first trial waits for the
    model's first answer (a provider that takes longer to start answering, or a test that need
    not wait the default); checked when the executor is made, before any trial (exit 2)."""
    return positive_int_option(options, "first_answer_seconds")


def with_first_answer(give_up: GiveUp | None, seconds: int | None) -> GiveUp | None:
    """The trial's give-up rule with the executor's first-answer horizon, where it set one."""
    return give_up if give_up is None or seconds is None else replace(give_up, first_answer_seconds=float(seconds))


@dataclass(frozen=True)
class GiveUp:
    """What a trial may spend on a provider that has not answered yet in this run."""

    failures: int  # failed answers in a row (the CLI's own retries counted) before giving up
    first_answer_seconds: float = FIRST_ANSWER_SECONDS


_FAILED = "the provider failed {n} times in a row: {cause}"
_FAILED_RE = re.compile(r"^the provider failed (\d+) times in a row: ")
_NO_ANSWER = "the provider sent no answer within {seconds:g}s"


def failed_in_a_row(failures: int, cause: str) -> str:
    """A trial's error when the provider kept failing (retries cut short, or a timeout mid-retry)."""
    return _FAILED.format(n=failures, cause=cause)


def no_answer(seconds: float) -> str:
    """A trial's error when the model never answered within the first-answer horizon."""
    return _NO_ANSWER.format(seconds=seconds)


def failures_of(error: str | None, limit: int) -> int:
    """How many failures of the stop rule one failed trial stands for: the count its error
    states, `limit` for a provider that never answered (waiting longer shows nothing new), else 1."""
    text = error or ""
    if text.startswith(_NO_ANSWER.split("{", 1)[0]):
        return max(limit, 1)
    found = _FAILED_RE.match(text)
    return max(int(found.group(1)), 1) if found else 1




class ProviderWatch:
    """Reads an agent CLI's stdout lines as they come: counts the provider failures it is
    retrying (`retry_of(event)` gives the cause of a retry event, else None) since the model's
    last answer (`answered(event)`), and decides when the trial should give up. One per trial;
    fed from the CLI's stdout reader thread and polled from the waiting one."""

    def __init__(self, give_up: GiveUp | None, retry_of: Callable[[dict[str, Any]], str | None],
                 answered: Callable[[dict[str, Any]], bool]) -> None:
        self.give_up, self.retry_of, self.answered = give_up, retry_of, answered
        self.failures = 0  # in a row, since the last answer
        self.cause: str | None = None
        self.has_answered = False
        self.verdict: str | None = None  # set when the trial gave up: its error
        self.started = time.monotonic()

    def line(self, line: str) -> bool:
        """One stdout line; True when the trial should end here."""
        event = _event(line)
        if event is None:
            return False
        cause = self.retry_of(event)
        if cause is not None:
            self.failures, self.cause = self.failures + 1, cause
        elif self.answered(event):
            self.failures, self.has_answered = 0, True
        if self.give_up is not None and self.verdict is None and self.failures >= self.give_up.failures:
            self.verdict = failed_in_a_row(self.failures, cause or self.cause or "no detail")
        return self.verdict is not None

    def overdue(self) -> bool:
        """Polled while the CLI runs: True when the model has not answered within the horizon."""
        give_up = self.give_up
        if give_up is not None and self.verdict is None and not self.has_answered \
                and time.monotonic() - self.started >= give_up.first_answer_seconds:
            self.verdict = no_answer(give_up.first_answer_seconds)
        return self.verdict is not None

    def retrying(self) -> str | None:
        """For a trial killed at its timeout: the failure it was retrying, as the same error a
        trial whose retries were cut short gets (None: it was not retrying)."""
        return failed_in_a_row(self.failures, self.cause) if self.failures and self.cause else None


def _event(line: str) -> dict[str, Any] | None:
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        event = json.loads(text)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


__all__ = ["FIRST_ANSWER_SECONDS", "GiveUp", "ProviderWatch", "failed_in_a_row", "failures_of", "no_answer"]
