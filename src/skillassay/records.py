"""One graded trial as plain data: what aggregation, statistics, comparison and the viewer
read, whatever layout or executor produced it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillassay.models import ExpectationResult


@dataclass(frozen=True)
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
    expectations: tuple[ExpectationResult, ...] = ()
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
