"""A figure's interval against its threshold: the gate's three-state decision, and the
plain comparison --point-estimate uses. Equal passes (within a relative 1e-9)."""

from __future__ import annotations

import math

from skillassay.stats.types import Decision, Direction, Interval

# Equality tolerance for threshold comparisons: the spec says "equal passes", and a mean
# computed as 0.7999999999999999 is equal to 0.8 for every purpose a user cares about.
REL_TOL = 1e-9


ABS_TOL = 1e-12


def _at(value: float, threshold: float) -> bool:
    return math.isclose(value, threshold, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def plain_comparison(value: float | None, threshold: float, direction: Direction) -> bool | None:
    """The spec's comparison: min -> value >= threshold, max -> value <= threshold.

    Equality (within float noise) passes, as the spec requires. None when there is no value.
    """
    if direction not in ("min", "max"):
        raise ValueError(f"direction must be 'min' or 'max', got {direction!r}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if _at(value, threshold):
        return True
    if direction == "min":
        return value >= threshold
    return value <= threshold


def decide(interval: Interval | None, threshold: float, direction: Direction) -> Decision:
    """Three-state gate: PASS if the whole interval is on the good side, FAIL if wholly bad.

    A bound exactly at the threshold counts as the good side (consistent with the spec's
    "equal passes"). No interval (e.g. a single eval) cannot decide anything.
    """
    if direction not in ("min", "max"):
        raise ValueError(f"direction must be 'min' or 'max', got {direction!r}")
    if interval is None:
        return "INCONCLUSIVE"
    lo, hi = interval
    if direction == "min":
        if lo >= threshold or _at(lo, threshold):
            return "PASS"
        if hi < threshold and not _at(hi, threshold):
            return "FAIL"
        return "INCONCLUSIVE"
    if hi <= threshold or _at(hi, threshold):
        return "PASS"
    if lo > threshold and not _at(lo, threshold):
        return "FAIL"
    return "INCONCLUSIVE"
