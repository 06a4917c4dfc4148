"""`compare`'s few lines for the terminal, from comparison_previous.json's plain data. Each
figure says what it is over: the pass rates and ratios are the whole suites', the changes are
measured on the evals in both iterations, which after a changed or removed eval are fewer (issue
34: "pass rate 25% -> 75%: +67 pts" read as arithmetic gone wrong)."""

from __future__ import annotations

from typing import Any

from skillassay.analyze.compare import eval_label
from skillassay.wording import UNBOUNDED, pct, ratio_value, signed_points


def _num(x: float | None) -> str:
    """A figure as a person reads it: n/a when not recorded, never None."""
    return "n/a" if x is None else ratio_value(float(x), ".4g", "")


def _ratio(x: float | None, unbounded: bool | None) -> str:
    """A ratio as the rest of the tool names it: unbounded over a baseline that passed nothing."""
    return UNBOUNDED if unbounded else "n/a" if x is None else ratio_value(float(x))


def _ci(v: list | None, unit: str = " pts") -> str:
    return "" if not v or None in v else f" (95% CI {signed_points(v[0])}{unit} to {signed_points(v[1])}{unit})"


def evals_scope(result: dict[str, Any], compared: int | None) -> tuple[str, str]:
    """What a change is over, said when it is not the whole suite: (" (all 8 evals)", "on the 7
    evals in both"); two empty strings when every eval is compared."""
    suite = len(result["per_eval"]) + len(result.get("changed_evals") or []) + len(result.get("unmatched_evals") or [])
    if not compared or compared >= suite:
        return "", ""
    return f" (all {suite} evals)", f"on the {compared} eval{'s' if compared != 1 else ''} in both"


def _lead(over: str) -> str:
    return f"; {over}: " if over else ": "


def summary_lines(result: dict[str, Any]) -> list[str]:
    """The comparison as a few lines of text for the terminal."""
    m = result["metrics"]
    prev = result["previous"]
    pr = m["pass_rate"]
    suite, over = evals_scope(result, pr.get("n_evals"))
    lines = [f"iteration {result['current']['iteration']} vs {prev.get('iteration')} ({prev.get('found', prev['path'])})",
             f"pass rate {pct(pr['previous'])} -> {pct(pr['current'])}{suite}{_lead(over)}"
             + ("n/a" if pr["delta"] is None else f"{signed_points(pr['delta'])} pts") + _ci(pr["interval"])]
    for key, name in (("avg_tokens", "avg tokens"), ("avg_duration_seconds", "avg seconds")):
        c = m[key]
        if c["previous"] is None and c["current"] is None:
            lines.append(f"{name}: not recorded in either iteration")  # never "None -> None"
            continue
        rel = "n/a" if c["relative_delta"] is None else f"{signed_points(c['relative_delta'])}%"
        lines.append(f"{name} {_num(c['previous'])} -> {_num(c['current'])}: {rel}"
                     f"{_ci(c['relative_interval'], unit='%')}")
    ir = m["improvement_ratio"]
    suite, over = evals_scope(result, ir.get("n_evals"))
    head = (f"improvement ratio {_ratio(ir['previous'], ir.get('previous_unbounded'))} -> "
            f"{_ratio(ir['current'], ir.get('current_unbounded'))}{suite}{_lead(over)}")
    if ir["delta"] is not None:
        lines.append(f"{head}{ir['delta']:+.2f}x")
    else:
        lines.append(f"{head}change n/a ({ir['undefined_reason'] or 'not computable'})")
    for row in result["per_eval"]:
        if row["label"] != "unchanged" or row["raw_flip"] in ("PASS->FAIL", "FAIL->PASS"):
            lines.append(f"{eval_label(row)}: {row['label']} (raw {row['raw_flip']}): {row['explanation']}")
    limit = result.get("detection_limit") or {}
    return lines + result["notes"] + ([limit["text"]] if limit else [])


__all__ = ["evals_scope", "summary_lines"]
