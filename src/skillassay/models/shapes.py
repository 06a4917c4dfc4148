"""The shapes of the files skillassay writes for itself and reads back untyped
(comparison_previous.json, benchmark.json's `statistics`): a hand-edited or damaged value of
the wrong kind is named where it is read ("$.metrics.pass_rate.delta: expected a number"),
instead of failing deep inside the report as `'str' object has no attribute 'get'`.

A shape is a nested literal: N a number (or null), S a string (or null), B a boolean (or null),
IV an interval (null, or a list of numbers or nulls), L any list, D any object, a dict of
shapes for an object's known keys (others unchecked; "*" for every value), [shape] for a list's
items. Only the parts that readers walk are spelled out."""

from __future__ import annotations

from typing import Any

N, S, B, IV, L, D = "number", "string", "boolean", "interval", "array", "object"

_DIFF = {"mean": N, "se": N, "interval": IV, "n_evals": N, "n_nonzero": N, "p_value": N, "p_value_method": S,
         "significance_reachable": B, "explanation": S}
_RATIO = {"ratio": N, "interval": IV, "n_evals_used": N, "n_evals_skipped": N, "reason": S}
_SPREAD = {"mean": N, "se": N, "interval": IV, "intervals": {"*": IV}, "n_evals": N, "median": N}
_ARM = {"passes": N, "completed": N, "requested": N, "errored": N, "timed_out": N, "ungraded": N, "missing": N,
        "pass_rate": N, "wilson": IV, "expectation_pass_rate": N, "pass_at_k": {"*": N}, "pass_hat_k": {"*": N},
        "variance": N, "reliability": S, "tokens": D, "duration_seconds": D, "skill_triggered_rate": N}
_BEFORE_AFTER = {"passes": N, "completed": N, "pass_rate": N}

STATISTICS: dict[str, Any] = {
    "schema_version": N, "skill_configuration": S, "baseline_configuration": S, "trials_requested": N, "n_evals": N,
    "per_eval": [{"eval_name": S, "configurations": {"*": _ARM}, "difference": N}],
    "interval_reading": S,
    "configurations": {"*": {"pass_rate": N, "pass_rate_se": N, "pass_rate_interval": IV, "n_evals": N,
                             "interval_reading": S, "pass_rate_intervals": {"*": IV},
                             "trials_completed": N, "trials_errored": N, "trials_ungraded": N, "trials_requested": N,
                             "pass_at_k": {"*": N}, "pass_hat_k": {"*": N}, "avg_tokens": _SPREAD,
                             "avg_duration_seconds": _SPREAD, "evals_without_completed_trials": L}},
    "paired": {"n_evals": N, "pass_rate_difference": _DIFF,
               "improvement_ratio": {"value": N, "interval": IV, "n_evals": N, "undefined_reason": S, "se": N},
               "token_ratio": _RATIO, "token_ratio_of_medians": _RATIO, "duration_ratio": _RATIO,
               "duration_ratio_of_medians": _RATIO, "excluded_evals": L},
    "validity": L,
    "power": {"alpha": N, "power": N, "observed_difference": N, "detectable_difference": N, "planned_power": N},
    "gates": {"*": {"decision": S, "interval": IV, "value": N, "fail_p_value": N, "trials_to_decide": N,
                    "reading": S}},
}

COMPARISON: dict[str, Any] = {
    "schema_version": N, "kind": S, "current": {"path": S, "iteration": N},
    "previous": {"path": S, "iteration": N, "found": S}, "changed": L, "configuration": S,
    "baseline_configuration": S, "q": N, "seed": N,
    "per_eval": [{"eval_name": S, "before": _BEFORE_AFTER, "after": _BEFORE_AFTER, "counts": S, "raw_flip": S,
                  "p_regression": N, "p_improvement": N, "p_regression_adjusted": N, "p_improvement_adjusted": N,
                  "label": S, "trials_per_arm_to_settle": N, "additional_trials_per_arm": N,
                  "trials_per_arm_to_call": N, "additional_trials_per_arm_to_call": N, "explanation": S}],
    "raw_regressions": L, "raw_improvements": L, "regressed": L, "possible_regressions": L, "improved": L,
    "possible_improvements": L, "unmatched_evals": L, "changed_evals": L,
    "suite": {"n_evals": N, "pass_rate_delta": _DIFF, "token_ratio": _RATIO, "duration_ratio": _RATIO},
    "baseline_drift": {"configuration": S, "changed": L, "level": N, "possible": L},
    "detection_limit": {"trials": N, "n_evals": N, "q": N, "smallest_p": N, "detectable": B, "max_evals": N,
                        "trials_needed": N, "gate_trials_needed": N, "text": S},
    "metrics": {"*": {"current": N, "previous": N, "delta": N, "relative_delta": N, "ratio": N, "interval": IV,
                      "ratio_interval": IV, "relative_interval": IV, "n_evals": N, "p_value": N,
                      "undefined_reason": S, "method": S, "explanation": S}},
    "notes": [S],
}

_NAMES = {N: "a number", S: "a string", B: "true or false", IV: "an interval (two numbers)", L: "an array",
          D: "an object"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _leaf_ok(value: Any, kind: str) -> bool:
    if value is None:
        return True
    if kind == N:
        return _is_number(value)
    if kind == S:
        return isinstance(value, str)
    if kind == B:
        return isinstance(value, bool)
    if kind == IV:
        return isinstance(value, list) and len(value) <= 2 and all(v is None or _is_number(v) for v in value)
    return isinstance(value, list if kind == L else dict)


def _where(loc: tuple[str | int, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def shape_problem(value: Any, shape: Any, loc: tuple[str | int, ...] = ()) -> tuple[str, str] | None:
    """(where, what was expected) for the first value of the wrong kind, or None. Iterative
    enough for our depths (shapes are at most five levels deep)."""
    if isinstance(shape, str):
        return None if _leaf_ok(value, shape) else (_where(loc), f"expected {_NAMES[shape]}")
    if value is None:
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _where(loc), "expected an array"
        for i, item in enumerate(value):
            if isinstance(shape[0], dict) and not isinstance(item, dict):  # rows are walked with .get
                return _where((*loc, i)), "expected an object"
            if (found := shape_problem(item, shape[0], (*loc, i))) is not None:
                return found
        return None
    if not isinstance(value, dict):
        return _where(loc), "expected an object"
    for key, item in value.items():
        sub = shape.get(key, shape.get("*"))
        if sub is not None and (found := shape_problem(item, sub, (*loc, key))) is not None:
            return found
    return None
