"""How figures are written wherever a person reads them (console, report.md, benchmark.md, CI
summaries, compare): one rounding rule for percentages and one name for a ratio with no upper
end, so two views of the same figure never disagree (issue 34: 12% in the console and 13% in
the viewer; "∞", "unbounded" and "undefined (division by zero)" for the same ratio). Imports
nothing of the package, so every layer may use it."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

# A ratio over a baseline that passed nothing, or an interval's missing upper end.
UNBOUNDED = "unbounded"
# A ratio's lower end cannot be missing, but a difference's can: written the same way.
UNBOUNDED_BELOW = "-unbounded"


def whole_percent(x: float) -> int:
    """x (a fraction) in whole percent, halves rounded away from zero on the exact value of x *
    100, as JavaScript's toFixed(0) rounds it in the viewer: 0.125 is 13% in both. (Python's
    format rounds halves to even: 12%.)"""
    # to_integral_value, not quantize: quantize refuses a result over 28 digits (a damaged file's 1e29)
    return int(Decimal(x * 100).to_integral_value(rounding=ROUND_HALF_UP))


def pct(x: float | None) -> str:
    """A fraction as a whole percentage; n/a when missing or not finite."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{whole_percent(x)}%"


def ratio_value(x: float | None, fmt: str = ".2f", suffix: str = "x") -> str:
    """A ratio: unbounded when infinite (the baseline passed nothing), n/a when missing."""
    if x is None or math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return UNBOUNDED if x > 0 else UNBOUNDED_BELOW
    return f"{x:{fmt}}{suffix}"


def bound(b: float | None, lower: bool, fmt: str = ".3g") -> str:
    """One end of an interval; a missing (or infinite) end is unbounded."""
    if b is None or math.isinf(b):
        return UNBOUNDED_BELOW if lower else UNBOUNDED
    return f"{b:{fmt}}"


def improvement_text(ratio: float | None, baseline_rate: float | None, skill_rate: float | None) -> str:
    """The improvement ratio (skill / baseline pass rate) as the console and benchmark.md say
    it: unbounded when the baseline passed nothing and the skill something, else n/a."""
    if ratio is not None:
        return ratio_value(ratio)
    if baseline_rate == 0 and skill_rate:
        return f"{UNBOUNDED} (the baseline passed nothing)"
    return "n/a"


def fdr_level(level: float) -> str:
    """A level of calls made on Benjamini-Hochberg-adjusted p-values, in the one phrase every
    output uses: a false discovery rate, which is family-wise only when no eval truly changed."""
    return f"{level:g} false discovery rate (BH-adjusted p over the evals compared)"


def points(x: float) -> str:
    """A difference of two fractions in whole percentage points, unsigned, by the rule of
    whole_percent (1/8 is 13, as 12.5% is 13%); n/a when not finite (a damaged file's value)."""
    return str(abs(whole_percent(x))) if math.isfinite(x) else "n/a"


def signed_points(x: float) -> str:
    """A difference in whole percentage points with its sign, by the rule of whole_percent: an
    integer's sign, so a small negative difference is "+0", never "-0"; n/a when not finite."""
    return f"{whole_percent(x):+d}" if math.isfinite(x) else "n/a"


def points_text(x: float | None) -> str:
    """'+13 pts': a difference as every output prints it; n/a when missing or not finite."""
    return "n/a" if x is None or not math.isfinite(x) else f"{signed_points(x)} pts"
