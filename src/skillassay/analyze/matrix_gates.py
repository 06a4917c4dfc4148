"""The agents' gates held together (issue 37): every FAIL call of every required agent in one
family, as the gate holds one benchmark's checks together (gate.py). Thresholds: Holm's
step-down over all (agent, threshold) pairs. The regression check (an agent's comparison with
its previous iteration), where there is one: the gate's REGRESSION_GATE_LEVEL shared equally
between the agents compared (Bonferroni), beside the thresholds' share, exactly as one
benchmark's gate splits its 5%. Then each agent's verdict, with its reasons in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillassay.analyze.gate import (
    GATE_FAIL_ALPHA,
    ONE_SIDED_ALPHA,
    REGRESSION_GATE_LEVEL,
    REGRESSION_KEY,
    holm_fail_levels,
    holm_level,
    regression_p,
    regression_result,
)
from skillassay.models.matrix import AgentSummary, AgentThreshold, FamilyAdjustment

FAMILY_METHOD = "Holm (1979) step-down over every required agent's thresholds"
NOT_MEASURED = "NOT MEASURED"


def regression_row(comparison: Mapping[str, Any]) -> AgentThreshold:
    """An agent's regression check as its own gate reads it (gate.regression_result: FAIL on an
    eval called regressed with a BH-adjusted p at or below REGRESSION_GATE_LEVEL), its p-value
    the smallest such adjusted p (Simes), to be held to the matrix's level below."""
    result = regression_result(dict(comparison), False)
    p = regression_p(dict(comparison))
    return AgentThreshold(key=REGRESSION_KEY, threshold=0.0, value=result.value, recorded_decision=result.status,
                          decision=result.status, fail_p_value=p if result.status == "FAIL" else None,
                          evals=result.evals)


def _members(agents: list[AgentSummary]) -> dict[str, AgentThreshold]:
    # As the gate: a threshold with no figure (a ratio over no baseline) is no member; an unbounded ratio is.
    return {f"{a.name}/{t.key}": t for a in agents if a.required for t in a.thresholds
            if t.key != REGRESSION_KEY and t.decision != NOT_MEASURED and (t.value is not None or t.unbounded)}


def hold_family(agents: list[AgentSummary], alpha: float = GATE_FAIL_ALPHA) -> FamilyAdjustment | None:
    """Holm over every (required agent, measured threshold) FAIL call: with 3 agents gated on 2
    thresholds each, six checks at their own 2.5% would FAIL a skill that meets every threshold
    far more often than 5%. A FAIL that the family does not confirm becomes INCONCLUSIVE."""
    members = _members(agents)
    compared = [t for a in agents if a.required for t in a.thresholds if t.key == REGRESSION_KEY]
    if not members and not compared:
        return None
    regression_total = REGRESSION_GATE_LEVEL * alpha / GATE_FAIL_ALPHA if compared else 0.0
    thresholds_alpha = alpha - regression_total
    ps = {k: (t.fail_p_value if t.decision == "FAIL" and t.fail_p_value is not None else 1.0)
          for k, t in members.items()}
    confirmed = holm_fail_levels(ps, thresholds_alpha)
    missed = holm_level(len(ps), len(confirmed), thresholds_alpha)  # the first unconfirmed FAIL's level
    for k, t in members.items():
        if t.decision == "FAIL":
            t.holm_level = confirmed.get(k, missed)
            if k not in confirmed:
                t.decision = "INCONCLUSIVE"
    per_agent = regression_total / len(compared) if compared else None
    for t in compared:
        if t.decision == "FAIL":
            t.holm_level = per_agent
            if t.fail_p_value is None or per_agent is None or t.fail_p_value > per_agent:
                t.decision = "INCONCLUSIVE"
    regression_ps = {f"{a.name}/{t.key}": t.fail_p_value if t.fail_p_value is not None else 1.0
                     for a in agents if a.required for t in a.thresholds if t.key == REGRESSION_KEY}
    return FamilyAdjustment(
        method=FAMILY_METHOD, family_alpha=alpha, thresholds_alpha=round(thresholds_alpha, 10),
        regression_level=None if per_agent is None else round(per_agent, 10), per_check_cap=ONE_SIDED_ALPHA,
        checks=len(ps) + len(compared), fail_p_values={k: round(v, 8) for k, v in {**ps, **regression_ps}.items()},
        confirmed_levels={**{k: round(v, 8) for k, v in confirmed.items()},
                          **{k: round(per_agent, 8) for k, t in zip(regression_ps, compared, strict=True)
                             if per_agent is not None and t.decision == "FAIL"}},
        pass_calls="not adjusted: the matrix passes only when every check of every required agent passes "
                   "(an intersection-union test)")


def _label(t: AgentThreshold) -> str:
    if t.key == REGRESSION_KEY:
        return f"{REGRESSION_KEY}: evals called regressed vs the previous iteration: {', '.join(t.evals) or 'none'}"
    iv = "" if not t.interval else f", 95% CI {t.interval[0]:.3g}..{'unbounded' if t.interval[1] is None else f'{t.interval[1]:.3g}'}"
    value = "unbounded" if t.unbounded else "n/a" if t.value is None else f"{t.value:.3g}"
    return f"{t.key} {value}{iv} vs {t.threshold:g}" if t.threshold is not None else t.key


def _held(t: AgentThreshold, n_checks: int) -> str:
    if t.key == REGRESSION_KEY:
        return (f"INCONCLUSIVE: {_label(t)}: fails at the gate's {REGRESSION_GATE_LEVEL:g} but not at "
                f"{t.holm_level:.3g}, its share of the regression checks' level across the compared agents")
    return (f"INCONCLUSIVE: {_label(t)} fails at its own 2.5% but not at the Holm level {t.holm_level:.3g} "
            f"across {n_checks} checks of the required agents")


def decide_agent(a: AgentSummary, n_checks: int) -> None:
    """The agent's verdict after the family (gate.verdict's order: FAIL wins, then an invalid
    measurement, then undecided checks; nothing gated is NOT GATED, never PASS)."""
    statuses = {t.decision for t in a.thresholds} - {NOT_MEASURED}
    if not a.required:
        a.verdict = "NOT GATED"
        a.reasons = ["reported, not gated (required: false)"]
        return
    fails = [t for t in a.thresholds if t.decision == "FAIL"]
    unsure = [t for t in a.thresholds if t.decision == "INCONCLUSIVE"]
    held = [t for t in unsure if t.recorded_decision == "FAIL" and t.holm_level is not None]
    a.reasons = [f"FAIL: {_label(t)} (" + (f"confirmed at {t.holm_level:.3g}, its share of the regression checks' "
                                           f"{REGRESSION_GATE_LEVEL:g} across the compared agents"
                                           if t.key == REGRESSION_KEY else
                                           f"confirmed at the Holm level {t.holm_level:.3g} across {n_checks} checks "
                                           "of the required agents") + ")" for t in fails]
    a.reasons += [_held(t, n_checks) for t in held]
    a.reasons += [f"INCONCLUSIVE: {_label(t)} (" + ("called regressed at the comparison's false-discovery rate only"
                                                   if t.key == REGRESSION_KEY else "the interval holds the threshold")
                  + ")" for t in unsure if t not in held]
    a.reasons += [f"invalid measurement: {p}" for p in a.problems]
    if fails:
        a.verdict = "FAIL"
    elif a.problems:
        a.verdict = "INVALID"
    elif unsure:
        a.verdict = "INCONCLUSIVE"
    elif not statuses:
        a.verdict = "NOT GATED"
        a.reasons.append("no threshold this agent measures is configured")
    else:
        a.verdict = "PASS"
