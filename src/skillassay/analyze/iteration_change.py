"""Per eval, this iteration against the previous one: exact one-sided tests with
Benjamini-Hochberg labels (regressed, possible regression, ...), and the suite's paired change."""

from __future__ import annotations

import math
from typing import Any

from skillassay.analyze import paired_intervals
from skillassay.analyze.advice import ALPHA, POWER
from skillassay.analyze.cells import (
    SCHEMA_VERSION,
    Arm,
    _arm_center,
    _f,
    _geo_dict,
    _paired_diff_dict,
    group_records,
    rates_of,
)
from skillassay.stats.multiplicity import bh_adjust, one_sided_exact_p
from skillassay.stats.ratio import geometric_mean_ratio
from skillassay.stats.sizing import trials_per_arm
from skillassay.store.records import TrialRecord


def _majority(arm: Arm) -> str | None:
    """The spec's per-eval PASS/FAIL from K trials: more than half passed (a tie is FAIL)."""
    if not arm.completed:
        return None
    return "PASS" if 2 * arm.passes > arm.completed else "FAIL"


def _change_label(p_reg_adj: float | None, p_imp_adj: float | None, before: Arm, after: Arm,
                  q: float) -> str:
    if p_reg_adj is not None and p_reg_adj <= q:
        return "regressed"
    if p_imp_adj is not None and p_imp_adj <= q:
        return "improved"
    rb, ra = before.pass_rate, after.pass_rate
    if rb is None or ra is None or math.isclose(rb, ra):
        return "unchanged"
    return "possible regression" if ra < rb else "possible improvement"


def compare_iterations(
    current: list[TrialRecord],
    previous: list[TrialRecord],
    config: str,
    q: float = 0.10,
    seed: int = 0,
) -> dict[str, Any]:
    """Iteration N vs N-1 for one configuration: the spec's raw flips, kept and shown, and the
    statistical call per eval (one-sided Boschloo, BH across evals at FDR q), so a one-trial
    wobble at K = 3 is reported as "possible", with the trials that would settle it."""
    cur = {c.eval_id: c for c in group_records(current, (config,))}
    prev = {c.eval_id: c for c in group_records(previous, (config,))}
    common = [e for e in prev if e in cur]
    unmatched = ([{"eval_id": e, "in": "previous only"} for e in prev if e not in cur]
                 + [{"eval_id": e, "in": "current only"} for e in cur if e not in prev])

    rows, p_reg, p_imp = [], [], []
    for e in common:
        b, a = prev[e].arms[config], cur[e].arms[config]
        pr, pi = one_sided_exact_p(b.passes, b.completed, a.passes, a.completed,
                                         only_observed_direction=True)
        p_reg.append(pr)
        p_imp.append(pi)
        rows.append((e, b, a))
    adj_reg, adj_imp = bh_adjust(p_reg), bh_adjust(p_imp)

    per_eval: list[dict[str, Any]] = []
    for i, (e, b, a) in enumerate(rows):
        mb, ma = _majority(b), _majority(a)
        label = _change_label(adj_reg[i], adj_imp[i], b, a, q)
        n_settle = None
        if b.pass_rate is not None and a.pass_rate is not None:
            n_settle = trials_per_arm(b.pass_rate, a.pass_rate, ALPHA, POWER)
        per_eval.append({
            "eval_id": e, "eval_name": cur[e].eval_name,
            "before": {"passes": b.passes, "completed": b.completed, "pass_rate": _f(b.pass_rate)},
            "after": {"passes": a.passes, "completed": a.completed, "pass_rate": _f(a.pass_rate)},
            "counts": f"{b.passes}/{b.completed} -> {a.passes}/{a.completed}",
            "raw_flip": f"{mb}->{ma}" if mb and ma else None,
            "p_regression": _f(p_reg[i]), "p_improvement": _f(p_imp[i]),
            "p_regression_adjusted": _f(adj_reg[i]), "p_improvement_adjusted": _f(adj_imp[i]),
            "label": label,
            "trials_per_arm_to_settle": n_settle,
            "additional_trials_per_arm": None if n_settle is None
            else max(0, n_settle - min(a.completed, b.completed)),
        })

    used = [e for e in common if prev[e].arms[config].completed and cur[e].arms[config].completed]
    pa, pb = rates_of((cur[e] for e in used), config), rates_of((prev[e] for e in used), config)

    def geo(attr: str) -> dict[str, Any]:
        return _geo_dict(geometric_mean_ratio(
            [_arm_center(cur[e].arms[config], attr, "mean") for e in used],
            [_arm_center(prev[e].arms[config], attr, "mean") for e in used]))

    def ids(label: str) -> list[int | str]:
        return [r["eval_id"] for r in per_eval if r["label"] == label]

    return {
        "schema_version": SCHEMA_VERSION,
        "configuration": config,
        "q": q,
        "per_eval": per_eval,
        "raw_regressions": [r["eval_id"] for r in per_eval if r["raw_flip"] == "PASS->FAIL"],
        "raw_improvements": [r["eval_id"] for r in per_eval if r["raw_flip"] == "FAIL->PASS"],
        "regressed": ids("regressed"),
        "possible_regressions": ids("possible regression"),
        "improved": ids("improved"),
        "possible_improvements": ids("possible improvement"),
        "unmatched_evals": unmatched,
        "suite": {
            "n_evals": len(used),
            "pass_rate_delta": _paired_diff_dict(paired_intervals.inverted_difference(pa, pb, seed)),
            "token_ratio": geo("tokens"),
            "duration_ratio": geo("durations"),
        },
    }
