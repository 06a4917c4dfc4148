"""A budget in USD the run never passes (`run --max-cost`, config `max_cost_usd`; issue 36).

A trial starts only if the iteration's spend so far plus the worst case of every trial in flight,
its own included, stays within the budget. A trial's worst case is its token ceiling x the
dearest of its model's prices where there is a ceiling (the API executors' `token_budget`),
and the most expensive trial so far where that is more (the ceiling is checked after each
turn, so a trial can overrun it by one turn) or where there is no ceiling. Before any trial
has a cost and without a ceiling, one trial runs alone to learn what a trial costs.

The budget covers the whole iteration, trials graded by earlier runs included, so `run` again
with the same budget starts nothing and with a higher one resumes. A trial whose cost is
unknown stops the starting: nothing can be promised about a budget the run cannot measure."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from skillassay.analyze.gate import INVALID, GateResult, ThresholdResult
from skillassay.errors import EXIT_INCONCLUSIVE, InputError
from skillassay.executors.base import Executor, ExecutorSettings
from skillassay.executors.pricing import FREE_EXECUTORS, price_for, worst_case_usd
from skillassay.store.records import TrialRecord

Decision = Literal["start", "wait", "stop"]


@dataclass
class Budget:
    limit: float
    spent: float = 0.0
    ceiling_worst: float | None = None  # USD of one trial at its token ceiling (None: no ceiling)
    most_expensive: float | None = None
    in_flight: int = 0
    reserved: float = 0.0
    unknown_cost: bool = False
    stopped: bool = False  # a trial was held back by the budget
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def for_run(cls, limit: float, executor: str, settings: ExecutorSettings,
                done: Iterable[TrialRecord]) -> Budget:
        done = list(done)
        budget = cls(limit, spent=sum(r.cost_usd for r in done if r.cost_usd is not None))
        if executor in FREE_EXECUTORS:
            budget.ceiling_worst = 0.0
        else:
            ceiling = settings.options.get("token_budget")
            price = price_for(settings.model, settings.prices or {})
            budget.ceiling_worst = worst_case_usd(price, int(ceiling) if isinstance(ceiling, int | float) else None)
        budget.most_expensive = max((r.cost_usd for r in done if r.cost_usd is not None), default=None)
        return budget

    def worst_case(self) -> float | None:
        """One trial's worst case, None while nothing says what a trial costs."""
        known = [x for x in (self.ceiling_worst, self.most_expensive) if x is not None]
        return max(known) if known else None

    def decide(self) -> tuple[Decision, float]:
        """Whether the next trial may start now, and the worst case reserved for it if so
        (given back to settle() when it is over)."""
        with self._lock:
            if self.unknown_cost:
                self.stopped = True
                return "stop", 0.0
            worst = self.worst_case()
            if worst is None:  # nothing known yet: one trial alone, with whatever money is left
                if self.in_flight:
                    return "wait", 0.0
                worst = self.limit - self.spent if self.spent < self.limit else float("inf")
            if self.spent + self.reserved + worst <= self.limit:
                self.in_flight += 1
                self.reserved += worst
                return "start", worst
            if self.in_flight:  # a trial in flight may cost less than its worst case
                return "wait", 0.0
            self.stopped = True
            return "stop", 0.0

    def settle(self, record: TrialRecord | None, reserved: float) -> None:
        """A started trial is over (None: stopped, nothing recorded)."""
        with self._lock:
            self.in_flight -= 1
            self.reserved = max(self.reserved - reserved, 0.0)
            if record is None:
                return
            if record.cost_usd is None:
                self.unknown_cost = True
                return
            self.spent += record.cost_usd
            self.most_expensive = max(self.most_expensive or 0.0, record.cost_usd)


def budget_note(budget: Budget, remaining: int, per_trial: float | None) -> str:
    """What the gate says when the budget stopped the run: spent, and what would finish it."""
    more = "" if per_trial is None else f"; about ${per_trial * remaining:.4g} more would finish the plan"
    why = ("a trial's cost was unknown, so the budget could not be kept: trials stopped"
           if budget.unknown_cost else "the budget was reached")
    return (f"budget: {why} (${budget.spent:.4g} of ${budget.limit:.4g} spent); {remaining} planned trials "
            f"not run{more}. Run again with a higher --max-cost to resume this iteration")




BUDGET_KEY = "max_cost_usd"


def open_budget(limit: float | None, executor: Executor, done: Iterable[TrialRecord]) -> Budget | None:
    """The run's budget (None: no limit set)."""
    if limit is not None and limit <= 0:
        raise InputError.one("--max-cost", str(limit), "must be more than 0 USD")
    return None if limit is None else Budget.for_run(limit, executor.name, executor.settings, done)


def budget_stop(budget: Budget | None, records: list[TrialRecord], planned: int) -> str | None:
    """The note when the budget held back planned trials (None: it did not)."""
    unrun = planned - len(records)
    if budget is None or not budget.stopped or unrun <= 0:
        return None
    known = [r.cost_usd for r in records if r.cost_usd is not None]
    return budget_note(budget, unrun, sum(known) / len(known) if known else None)


def budget_gate(result: GateResult, budget: Budget | None, note: str | None) -> GateResult:
    """The gate once the budget stopped the run: the plan is unfinished, so no PASS (INCONCLUSIVE,
    exit 3, saying what would finish it); a FAIL on the trials that ran stays a FAIL."""
    if budget is None or note is None:
        return result
    line = ThresholdResult(BUDGET_KEY, budget.limit, round(budget.spent, 6), "INCONCLUSIVE", advice=note)
    status, code = (result.status, result.exit_code) if result.status in ("FAIL", INVALID) \
        else ("INCONCLUSIVE", EXIT_INCONCLUSIVE)
    return replace(result, status=status, exit_code=code, thresholds=[*result.thresholds, line])


__all__ = ["BUDGET_KEY", "Budget", "budget_gate", "budget_note", "budget_stop", "open_budget"]
