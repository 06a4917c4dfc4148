"""Backoff that respects what the provider said and the trial's deadline, shared by the
engine's whole-trial retries (run/execute.py) and the API executors' per-request retries.

A provider that answers 429 or 529 often says when to come back (`Retry-After`); retrying
sooner only earns another refusal, so the wait is at least that long. And a trial has one
deadline (settings.timeout_seconds) for all its attempts: a sleep that would end past it is not
taken, because the attempt after it would have no time left and the trial would be recorded
as lasting longer than its own timeout."""

from __future__ import annotations

import email.utils
import time
from datetime import UTC, datetime
from typing import Any

from tenacity import RetryCallState
from tenacity.stop import stop_base
from tenacity.wait import wait_base


def parse_retry_after(value: Any) -> float | None:
    """Seconds from a Retry-After header value: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(seconds, 0.0) if seconds == seconds else None  # NaN is no answer


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """What the failure says about when to retry: a `retry_after` attribute (TransientError),
    else the Retry-After header of the HTTP response an SDK error carries."""
    if exc is None:
        return None
    own = getattr(exc, "retry_after", None)
    if own is not None:
        return parse_retry_after(own)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        return parse_retry_after(headers.get("retry-after"))
    except AttributeError:
        return None


class wait_retry_after(wait_base):  # noqa: N801 - named like tenacity's own wait strategies
    """The fallback strategy's wait, lengthened to the provider's Retry-After when it asks for more."""

    def __init__(self, fallback: wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self.fallback(retry_state)
        outcome = retry_state.outcome
        asked = retry_after_seconds(outcome.exception() if outcome is not None and outcome.failed else None)
        return max(wait, asked) if asked is not None else wait


class stop_before_deadline(stop_base):  # noqa: N801 - named like tenacity's own stop strategies
    """Stop when the coming sleep would end at or past `deadline` (a time.monotonic() value).

    tenacity computes the wait before asking the stop strategy, so upcoming_sleep is known."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return time.monotonic() + retry_state.upcoming_sleep >= self.deadline


__all__ = ["parse_retry_after", "retry_after_seconds", "stop_before_deadline", "wait_retry_after"]
