"""Stopping a run whose provider is dead, before it spends hours failing.

A trial against an API that answers 529, or with a key that is refused, fails only after the
agent's own retries and ours: minutes each. When the first trials of a run all fail the same
way and none has succeeded, the rest would fail the same way too, so the run stops there. One
success proves the setup works, after which failures are measurements and the run goes on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from skillassay.errors import InputError
from skillassay.store.records import TrialRecord

DEFAULT_LIMIT = 5
# Counts, durations, ports and request ids differ between two trials failing for one reason.
_VARYING = re.compile(r"\b(?=\w*\d)\w{12,}\b|\d+(?:\.\d+)?")


def error_signature(record: TrialRecord) -> str:
    """What two failures for the same reason have in common: status and error, numbers out."""
    return f"{record.status}: " + _VARYING.sub("#", (record.error or "no detail").strip())[:500]


@dataclass
class SameErrorStreak:
    """Trips when the first `limit` finished trials failed with one error signature and none
    succeeded (limit 0: never)."""

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

    def add(self, record: TrialRecord) -> bool:
        """Count one finished trial; True when the run should stop."""
        if self.tripped or self.succeeded:
            return self.tripped
        if record.completed:
            self.succeeded = True
            return False
        sig = error_signature(record)
        self.count = self.count + 1 if sig == self.signature else 1
        detail = record.error or "no detail"
        self.signature, self.error = sig, detail if record.status == "error" else f"{record.status}: {detail}"
        self.tripped = 0 < self.limit <= self.count
        return self.tripped


def stopped_early(it_dir: Path, executor: str, streak: SameErrorStreak, executed: int) -> InputError:
    """A dead provider or a broken setup: say what failed and how to carry on (exit 2)."""
    return InputError.one(it_dir, f"--executor {executor}",
                          f"run stopped: the first {streak.count} trials all failed with the same error and none "
                          f"succeeded, so the rest would fail too; no further trials were started "
                          f"({executed} ran). The error: {streak.error}. Fix the cause and run the same command "
                          "again to resume: finished trials are kept and the failed ones are run again (--fail-fast 0 never stops).")


__all__ = ["DEFAULT_LIMIT", "SameErrorStreak", "error_signature", "stopped_early"]
