"""One graded trial as plain data: what aggregation, statistics, comparison and the viewer
read, whatever layout or executor produced it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from skillassay.models import ExpectationResult


class Outcome(NamedTuple):
    """A graded expectation held in memory: a tuple is ~6x smaller than the pydantic model,
    and an iteration can hold hundreds of thousands of them."""

    text: str
    passed: bool | None
    evidence: str = ""


def compact(expectations: Iterable[ExpectationResult | Outcome]) -> tuple[Any, ...]:
    """Outcomes for plain results; a result with extra fields (judge votes, ...) is kept whole
    so benchmark.json's runs[] still carries them."""
    return tuple(e if type(e) is Outcome or e.__pydantic_extra__ else Outcome(e.text, e.passed, e.evidence)
                 for e in expectations)


@dataclass(frozen=True, slots=True)
class TrialRecord:
    eval_id: int | str
    eval_name: str
    configuration: str  # with_skill, without_skill, old_skill, new_skill, ...
    run_number: int
    status: str  # "ok" | "error" | "timeout" — error/timeout trials are excluded from rates
    passed: bool | None  # all expectations passed (None when not completed)
    passed_count: int = 0
    total_count: int = 0
    tokens: int | None = None  # None = not recorded (never replaced by another quantity)
    duration_seconds: float | None = None
    tool_calls: int | None = None
    skill_triggered: bool | None = None
    cost_usd: float | None = None
    expectations: tuple[ExpectationResult | Outcome, ...] = ()
    notes: tuple[str, ...] = ()
    run_dir: Path | None = None
    errors: int = 0
    error: str | None = field(default=None)

    @property
    def completed(self) -> bool:
        return self.status == "ok"

    @property
    def expectation_pass_rate(self) -> float | None:
        return self.passed_count / self.total_count if self.total_count else None
