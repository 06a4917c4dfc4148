"""The sample-size advice in one short sentence a non-statistician can act on (issue 34): "about
140 evals would likely decide it if ...", the count rounded up to two significant figures,
"likely" standing for the planned power (80% or more, which the JSON keeps as a number), never
beside a statement that no size decides it. Shared by the paired advice (the difference, the
ratio gate); the per-configuration gates' advice says the same (advice._gap_advice)."""

from __future__ import annotations

NO_SIZE_DECIDES = "the estimate sits on the threshold: no sample size decides it"


def about(n: int) -> int:
    """A size rounded up to two significant figures (127 -> 130, 37 -> 37), so advice reads as
    the estimate it is and never asks for less than was planned."""
    step = 10 ** max(0, len(str(n)) - 2)
    return -(-n // step) * step


def would_decide(n: int, condition: str) -> str:
    return f"about {about(n):,} evals would likely decide it if {condition}"


def too_many(limit: int, condition: str) -> str:
    return f"more than {limit:,} evals would be needed to decide it if {condition}"
