"""Number and text formatting shared by report.md's sections (figures as the reader sees them:
percentages, intervals, signed deltas, markdown-safe cells)."""

from __future__ import annotations

import math
from typing import Any

from skillassay.analyze.cost import usd
from skillassay.analyze.rate_intervals import reading_phrase
from skillassay.wording import UNBOUNDED, UNBOUNDED_BELOW, pct, points_text, whole_percent


def cell(value: Any) -> str:
    """Text safe inside a markdown table cell (eval names come from users)."""
    return " ".join(str(value).split()).replace("|", "\\|")


def of(part: Any, whole: Any) -> str:
    """'3/4', with '?' for a count a damaged benchmark.json left out (each is optional there)."""
    return f"{'?' if part is None else part}/{'?' if whole is None else whole}"


def fmt(x: float | None, kind: str) -> str:
    if isinstance(x, float) and math.isinf(x) and x > 0 and kind == "ratio":
        return UNBOUNDED  # over a baseline that passed nothing (gate_stats.gate_stats: "unbounded")
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    if kind == "pct":
        return pct(x)
    if kind == "int":
        return f"{x:,.0f}"
    if kind == "sec":
        return f"{x:.1f}s" if x >= 1 else f"{x:.3g}s"
    if kind == "ratio":
        return f"{x:.2f}x"
    if kind == "usd":
        return usd(x)
    return f"{x:.3g}"


def _bounds(iv: object) -> tuple[float | None, float | None] | None:
    """(lower, upper) of an interval as benchmark.json holds it, or None when it is not two
    numbers-or-nulls (a damaged file: no interval is shown rather than a crash)."""
    if not isinstance(iv, (list, tuple)) or len(iv) != 2:
        return None
    if not all(b is None or (isinstance(b, (int, float)) and not isinstance(b, bool)) for b in iv):
        return None
    return iv[0], iv[1]


def fmt_interval(iv: list | None, kind: str) -> str:
    """A missing bound is an unbounded side (a ratio's bootstrap can reach infinity)."""
    bounds = _bounds(iv)
    if bounds is None or bounds == (None, None):
        return ""
    lo = UNBOUNDED_BELOW if bounds[0] is None else fmt(bounds[0], kind)
    hi = UNBOUNDED if bounds[1] is None else fmt(bounds[1], kind)
    return f" (95% CI {lo} to {hi})"


def signed(x: float | None, kind: str) -> str:
    if x is None or not math.isfinite(x):  # a damaged benchmark.json's inf or nan
        return "n/a"
    if kind == "pts":
        return points_text(x)
    if kind == "rel":
        return f"{whole_percent(x):+d}%"
    return f"{x:+.2f}x"


def signed_interval(iv: list | None, kind: str) -> str:
    bounds = _bounds(iv)
    if bounds is None or None in bounds:
        return ""
    return f" (95% CI {signed(bounds[0], kind)} to {signed(bounds[1], kind)})"


def p_text(p: float | None) -> str:
    return "n/a" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3g}")


def named_interval(interval_text: str, figure: dict[str, Any]) -> str:
    """" (95% CI a to b, evals like these)": an interval with the reading it is about (the
    figure's `interval_reading`; a file from before readings: the population's)."""
    if not interval_text.endswith(")"):
        return interval_text
    return f"{interval_text[:-1]}, {reading_phrase(figure.get('interval_reading'))})"
