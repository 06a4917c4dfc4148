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


def has_ungraded(expectations: Iterable[ExpectationResult | Outcome]) -> bool:
    """An expectation without a verdict (passed null: no judge, the judge abstained or
    failed, a check crashed) makes the trial neither a pass nor a fail, unless another
    expectation failed (undecided)."""
    return any(e.passed is None for e in expectations)


def undecided(expectations: Iterable[ExpectationResult | Outcome]) -> bool:
    """No verdict for the trial: an expectation has none and none failed. A trial passes only
    when every expectation passes, so one that failed decides it whatever the others say; a
    failed typed check beside a judge's abstention is a failed trial, not an ungraded one."""
    verdicts = {e.passed for e in expectations}
    return None in verdicts and False not in verdicts


def trial_verdict(status: str, passed: int, total: int,
                  expectations: Iterable[ExpectationResult | Outcome]) -> bool | None:
    """TrialRecord.passed: None unless the trial completed and is decided (see undecided)."""
    if status != "ok":
        return None
    expectations = tuple(expectations)
    if any(e.passed is False for e in expectations):
        return False
    if has_ungraded(expectations):
        return None
    return total > 0 and passed == total


def compact(expectations: Iterable[ExpectationResult | Outcome]) -> tuple[Any, ...]:
    """Outcomes for plain results; a result with extra fields (judge votes, ...) is kept whole
    so benchmark.json's runs[] still carries them."""
    return tuple(e if isinstance(e, Outcome) or e.__pydantic_extra__ else Outcome(e.text, e.passed, e.evidence)
                 for e in expectations)


@dataclass(frozen=True, slots=True)
class TrialRecord:
    eval_id: int | str
    eval_name: str
    configuration: str  # with_skill, without_skill, old_skill, new_skill, ...
    run_number: int
    status: str  # "ok" | "error" | "timeout" — error/timeout trials are excluded from rates
    passed: bool | None  # all expectations passed (None when not completed, or ungraded)
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
    def ungraded(self) -> bool:
        """Completed, but undecided (an expectation has no verdict and none failed): excluded
        from pass rates and counted, like an errored trial, never taken as a failure."""
        return self.status == "ok" and undecided(self.expectations)

    @property
    def ungraded_expectations(self) -> int:
        return sum(1 for e in self.expectations if e.passed is None) if self.status == "ok" else 0

    @property
    def expectation_pass_rate(self) -> float | None:
        return self.passed_count / self.total_count if self.total_count else None


def record_order(eval_id: int | str, configuration: str, run_number: int) -> tuple[str, str, int]:
    """The engine's record order (numeric ids sort numerically), so all commands agree."""
    return str(eval_id).zfill(12), configuration, run_number


def sort_records(records: Iterable[TrialRecord]) -> list[TrialRecord]:
    """Records in record_order: the order of benchmark.json's runs[] whichever command wrote it."""
    return sorted(records, key=lambda r: record_order(r.eval_id, r.configuration, r.run_number))


VerdictCounts = dict[str, dict[str, tuple[int, int]]]  # text -> configuration -> (passes, fails)


class ExpectationTally:
    """What the analyst notes need from light records' expectations: per assertion text and
    configuration, the graded verdicts of completed runs counted (passes, fails), and where the
    text is first met in record order. O(evals x expectations) memory, not O(runs)."""

    __slots__ = ("_cells",)

    def __init__(self) -> None:
        # (text, configuration) -> [passes, fails, first record order, first index in it]
        self._cells: dict[tuple[str, str], list[Any]] = {}

    def add(self, eval_id: int | str, configuration: str, run_number: int,
            expectations: Iterable[ExpectationResult | Outcome]) -> None:
        """A completed run's expectations (ungraded ones, passed None, are left out)."""
        order = None
        for i, e in enumerate(expectations):
            if e.passed is None:
                continue
            if order is None:
                order = record_order(eval_id, configuration, run_number)
            cell = self._cells.get((e.text, configuration))
            if cell is None:
                self._cells[(e.text, configuration)] = [0, 0, order, i]
                cell = self._cells[(e.text, configuration)]
            elif order < cell[2] or (order == cell[2] and i < cell[3]):
                cell[2], cell[3] = order, i
            cell[0 if e.passed else 1] += 1

    @classmethod
    def of(cls, records: Iterable[TrialRecord], configs: tuple[str, ...] | None = None) -> ExpectationTally:
        """The tally of records held in memory (completed ones; only `configs` when given)."""
        tally = cls()
        for r in records:
            if r.completed and (configs is None or r.configuration in configs):
                tally.add(r.eval_id, r.configuration, r.run_number, r.expectations)
        return tally

    def merge(self, other: ExpectationTally) -> None:
        """Add another tally's counts (runs read elsewhere, e.g. by a worker process)."""
        for key, (p, f, order, i) in other._cells.items():
            cell = self._cells.get(key)
            if cell is None:
                self._cells[key] = [p, f, order, i]
                continue
            cell[0] += p
            cell[1] += f
            if (order, i) < (cell[2], cell[3]):
                cell[2], cell[3] = order, i

    def counts(self, configs: tuple[str, ...]) -> VerdictCounts:
        """Assertion text -> configuration -> (passes, fails), texts in the order records sorted
        by record_order first show them (in these configurations)."""
        first: dict[str, tuple] = {}
        for (text, config), (_, _, order, i) in self._cells.items():
            if config in configs and (text not in first or (order, i) < first[text]):
                first[text] = (order, i)
        out: VerdictCounts = {}
        for text in sorted(first, key=first.__getitem__):
            out[text] = {c: (cell[0], cell[1]) for c in configs if (cell := self._cells.get((text, c)))}
        return out
