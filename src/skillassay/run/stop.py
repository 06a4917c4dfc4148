"""Stopping a run whose provider is dead, before it spends hours failing.

A trial against an API that answers 529, or with a key that is refused, fails only after the
agent's own retries and ours: minutes each. When the first trials of a run all fail the same
way and none has succeeded, the rest would fail the same way too, so the run stops there. One
success proves the setup works, after which failures are measurements and the run goes on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skillassay.errors import InputError
from skillassay.executors.give_up import GiveUp, failures_of

DEFAULT_LIMIT = 5
# Counts, durations, ports and request ids differ between two trials failing for one reason.
_VARYING = re.compile(r"\b(?=\w*\d)\w{12,}\b|\d+(?:\.\d+)?")


class Finished(Protocol):
    """A finished trial or trigger run, as far as the stop rule reads it."""

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


def error_signature(record: Finished) -> str:
    """What two failures for the same reason have in common: status and error, numbers out."""
    return f"{record.status}: " + _VARYING.sub("#", (record.error or "no detail").strip())[:500]


@dataclass
class SameErrorStreak:
    """Trips when the first `limit` failures of the run had one error signature and no trial
    succeeded (limit 0: never). A trial counts for as many failures as its error states (an
    agent CLI's own retries, cut short by `give_up`: see executors/give_up.py), so the first
    trial against a dead provider can trip it alone, in seconds rather than minutes."""

    limit: int = DEFAULT_LIMIT
    count: int = 0
    signature: str | None = None
    error: str | None = None  # the last failure's own text, for the message
    succeeded: bool = False
    tripped: bool = False  # once set it stays: trials still running when it tripped change nothing

    @property
    def unproven(self) -> bool:
        """Trials have failed and none has succeeded yet: the setup itself is in doubt, so a
        trial is not worth retrying (the agent CLIs already retry inside, for minutes)."""
        return self.limit > 0 and not self.succeeded and self.count > 0

    def give_up(self) -> GiveUp | None:
        """What a trial may spend on a provider that has not answered in this run (None: the
        setup is proven, or the rule is off)."""
        return GiveUp(self.limit) if self.limit > 0 and not self.succeeded else None

    def add(self, record: Finished) -> bool:
        """Count one finished trial; True when the run should stop."""
        if self.tripped or self.succeeded:
            return self.tripped
        if record.status == "ok":
            self.succeeded = True
            return False
        sig = error_signature(record)
        weight = failures_of(record.error, self.limit)
        self.count = self.count + weight if sig == self.signature else weight
        detail = record.error or "no detail"
        self.signature, self.error = sig, detail if record.status == "error" else f"{record.status}: {detail}"
        self.tripped = 0 < self.limit <= self.count
        return self.tripped


def stopped_early(it_dir: Path, executor: str, streak: SameErrorStreak, executed: int) -> InputError:
    """A dead provider or a broken setup: say what failed and how to carry on (exit 2)."""
    return InputError.one(it_dir, f"--executor {executor}", f"run stopped: {stop_reason(streak)}; no further trials "
                          f"were started ({executed} ran). The error: {streak.error}. Fix the cause and run the same "
                          "command again to resume: finished trials are kept and the failed ones are run again "
                          "(--fail-fast 0 never stops).")


def stop_reason(streak: SameErrorStreak) -> str:
    """Why the rest would fail too, in words (shared by `run` and `triggers`)."""
    return (f"the first {streak.count} failures (failed trials, and an agent's own retries of its provider) all had "
            "the same error and nothing succeeded, so the rest would fail too")


__all__ = ["DEFAULT_LIMIT", "Finished", "SameErrorStreak", "error_signature", "stop_reason", "stopped_early"]
