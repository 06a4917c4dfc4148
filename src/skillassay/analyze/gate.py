"""The gate: thresholds -> verdict and exit code (0 pass, 1 fail, 3 inconclusive or invalid).

With statistics present, each threshold is PASS (whole interval on the good side), FAIL
(whole interval on the bad side) or INCONCLUSIVE; `point_estimate` gates on the spec's plain
comparison alone (a value exactly at the threshold passes); `strict` turns inconclusive
into fail. The FAIL calls are held together to a family-wise 5%: the regression check at its
one level, REGRESSION_GATE_LEVEL (0.01), the thresholds by Holm's step-down over the rest, each at
most its own one-sided 2.5% (`hold_fails_to_family`), so a FAIL at one check's own level that
Holm does not confirm is INCONCLUSIVE. A measurement that cannot carry a verdict (`measurement_problems`) is INVALID and
never exits 0, thresholds or not; with nothing to gate the verdict says so (NOT_GATED)
instead of claiming a PASS. A threshold the executor cannot measure (a token ceiling with an
executor that reports no tokens) is NOT MEASURED: shown, and left out of the verdict, since no
number of trials would ever decide it."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from skillassay.analyze.cost import skill_mean_cost
from skillassay.analyze.rate_intervals import reading_phrase
from skillassay.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_PASS
from skillassay.models import Benchmark, Thresholds
from skillassay.wording import bound, fdr_level, ratio_value

INVALID = "INVALID"
NOT_GATED = "NOT_GATED"
INVALID_PREFIX = "measurement invalid: "

LABELS = {
    "min_pass_rate": ("with-skill pass rate", ">="),
    "max_avg_tokens": ("avg tokens (with skill)", "<="),
    "max_avg_duration_seconds": ("avg duration s (with skill)", "<="),
    "min_improvement_ratio": ("improvement ratio", ">="),
    "max_avg_cost_usd": ("avg cost USD per trial (with skill)", "<="),
    # Not a threshold: the budget (`run --max-cost`), shown as a line when it stopped the run.
    "max_cost_usd": ("USD spent (the budget, run --max-cost)", "<="),
}
# Not a threshold of the config: the comparison with the previous iteration (compare.py).
REGRESSION_KEY = "no_regressions"
NOT_MEASURED = "NOT MEASURED"
# The trigger gate's thresholds (`skillassay triggers`), gated by the same three-state rule.
TRIGGER_LABELS = {
    "min_trigger_recall": ("trigger recall", ">="),
    "max_false_trigger_rate": ("false-trigger rate", "<="),
}
BOUND_FORMAT = ".3g"  # a gate line's estimate and its interval's bounds alike
_LINE_LABELS = {**LABELS, **TRIGGER_LABELS,
                REGRESSION_KEY: ("evals called regressed vs the previous iteration:", "<=")}
# The regression check fails the gate at one level, the same in every output (issue 34: the design
# line said 0.025 and the gate's message 0.01): an eval called regressed with a BH-adjusted p at
# or below REGRESSION_GATE_LEVEL, which holds the chance that any regression call fails the gate
# when nothing changed to that level (Simes' test, valid where BH is). The gate's other FAIL calls
# share the rest of its family-wise 5% (Holm below), so the whole gate's false FAIL stays <= 5%
# (Bonferroni between the two parts): the regression check is not a Holm member, its level
# never moves with the number of thresholds. An eval called at the comparison's FDR q but not at
# this level leaves the check INCONCLUSIVE, never PASS.
REGRESSION_GATE_LEVEL = 0.01
# The gate's FAIL calls as one family (issue 16). Each check alone FAILs at a one-sided 2.5%, but
# a gate checking three thresholds and the regressions, all at the truth, then FAILs falsely far
# more often than any one of them (measured: 8.0% at K = 10, 50 evals). Holm's step-down (Holm,
# "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979) holds the
# family-wise error of the thresholds' FAIL calls to their share of GATE_FAIL_ALPHA under any
# dependence between the checks: the smallest one-sided FAIL p-value against alpha/m, the next
# against alpha/(m-1), and so on, each capped at the 2.5% a check promises alone (capping only
# makes a test stricter). PASS calls are not adjusted: a gate PASSES only when every check passes,
# an intersection-union test (Berger, Technometrics 24, 1982), whose false PASS is at most the
# largest of its checks' own 2.5%, never their sum.
GATE_FAIL_ALPHA = 0.05
ONE_SIDED_ALPHA = 0.025
HOLM = "Holm (1979) step-down over the gate's thresholds"


def regression_level_words() -> str:
    """The regression check's level, in the one phrase every output uses (gate line, compare's
    design line, report.md, benchmark.md)."""
    return fdr_level(REGRESSION_GATE_LEVEL)


def thresholds_alpha(compared: bool) -> float:
    """The thresholds' share of the gate's family-wise 5%: all of it, or what the regression
    check leaves when there is one."""
    return GATE_FAIL_ALPHA - REGRESSION_GATE_LEVEL if compared else GATE_FAIL_ALPHA


def holm_level(m: int, step: int, alpha: float = GATE_FAIL_ALPHA) -> float:
    """The level of Holm's step `step` (0-based) among m checks, capped at one check's 2.5%."""
    return min(ONE_SIDED_ALPHA, alpha / max(1, m - step))


def holm_fail_levels(p_values: dict[str, float], alpha: float = GATE_FAIL_ALPHA) -> dict[str, float]:
    """check -> the Holm level its FAIL is confirmed at; a check left out is not confirmed."""
    m, out = len(p_values), {}
    for step, (key, p) in enumerate(sorted(p_values.items(), key=lambda kv: kv[1])):
        level = holm_level(m, step, alpha)
        if p > level:
            break
        out[key] = level
    return out


@dataclass
class ThresholdResult:
    key: str
    threshold: float
    value: float | None
    status: str  # PASS | FAIL | INCONCLUSIVE | NOT MEASURED
    interval: list[float | None] | None = None
    evals: list[str] = field(default_factory=list)
    advice: str = ""
    fail_p_value: float | None = None  # the FAIL call's one-sided p (None: not a FAIL at 2.5%)
    fail_level: float | None = None  # the Holm level it was held to (None: not part of the family)
    reading: str | None = None  # what a per-configuration interval is about (rate_intervals.READING_PHRASE)

    def line(self) -> str:
        label, op = _LINE_LABELS[self.key]
        # the estimate to the significant figures of its bounds: rounding is monotone, so an
        # estimate inside its interval is printed inside it (0.9674 beside ..0.967 was not)
        value = "n/a" if self.value is None else ratio_value(self.value, BOUND_FORMAT, "")
        ci = ""
        if self.interval and any(b is not None for b in self.interval):
            # an unbounded side (e.g. a ratio over a baseline that passed nothing) is said so
            about = f", {reading_phrase(self.reading)}" if self.reading else ""
            ci = (f" (95% CI {bound(self.interval[0], True, BOUND_FORMAT)}.."
                  f"{bound(self.interval[1], False, BOUND_FORMAT)}{about})")
        text = f"{self.status}: {self.key}: {label} {value}{ci}, needs {op} {self.threshold:g}"
        if self.evals:
            noun = "queries" if self.key in TRIGGER_LABELS else "evals"
            text += f"; {noun} responsible: {', '.join(self.evals)}"
        if self.advice:
            text += f". {self.advice}"
        return text


@dataclass
class GateResult:
    status: str  # PASS | FAIL | INCONCLUSIVE | INVALID | NOT_GATED
    exit_code: int
    thresholds: list[ThresholdResult]
    problems: list[str] = field(default_factory=list)  # measurement_problems: why no verdict holds
    fail_adjustment: dict[str, Any] | None = None  # how the FAIL calls were held to a family level

    def headline(self) -> str:
        """The verdict in words: what INVALID and NOT_GATED mean is said where they are shown,
        so a reader never takes either for a PASS."""
        if self.status == INVALID:
            return f"{INVALID}: the measurement is invalid ({'; '.join(self.problems)}), so nothing is decided"
        unmeasured = [t.key for t in self.thresholds if t.status == NOT_MEASURED]
        if self.status == NOT_GATED and unmeasured:
            return (f"{NOT_GATED}: every configured threshold ({', '.join(unmeasured)}) is {NOT_MEASURED} with "
                    "this executor and no previous iteration was compared, so nothing was gated (set a threshold "
                    "this executor measures, e.g. `min_pass_rate`)")
        if self.status == NOT_GATED:
            return (f"{NOT_GATED}: no thresholds configured and no previous iteration compared, so nothing "
                    "was gated (set `thresholds` in the benchmark config)")
        if self.problems:
            return f"{self.status} (and the measurement is invalid: {'; '.join(self.problems)})"
        return self.status

    def to_dict(self) -> dict:
        # The family fields appear only where a family was formed (gate, run, report), so the
        # trigger gate's triggers.json and older readers see what they always did.
        extra = {"fail_adjustment": self.fail_adjustment} if self.fail_adjustment else {}
        return {"status": self.status, "exit_code": self.exit_code, "headline": self.headline(),
                "problems": list(self.problems), **extra,
                "thresholds": [{**{k: v for k, v in t.__dict__.items()
                                   if v is not None or k not in ("fail_p_value", "fail_level")},
                                "value": _finite(t.value)} for t in self.thresholds]}


def _finite(x: float | None) -> float | None:
    """JSON has no infinity: an unbounded ratio is written as null (its line says unbounded)."""
    return None if x is None or not math.isfinite(x) else x


def measurement_problems(bench: Benchmark) -> list[str]:
    """Why these figures cannot carry a verdict, one reason each: an arm with no trial
    recorded or none completed (everything errored), trials whose expectations nobody graded,
    nothing recorded at all. One function, so run, gate, aggregate, report and the CI outputs
    can never disagree on whether a measurement is valid. Empty when it is valid."""
    flags = [f.removeprefix(INVALID_PREFIX) for f in (bench.statistics or {}).get("validity") or []
             if f.startswith(INVALID_PREFIX)]
    problems = list(flags)
    s = bench.summary
    if s is None:
        if not bench.runs and not problems:
            problems.append("no trials recorded")
        return problems
    for role, arm in (("with_skill", s.with_skill), ("baseline", s.baseline)):
        if arm.pass_rate is None and not any(f" {role} " in f" {f} " for f in flags):
            problems.append(f"no completed {role} trials")
        # ArmSummary.ungraded_trials may not exist yet in every version of the model
        ungraded = getattr(arm, "ungraded_trials", 0) or 0
        if ungraded and not any(f" {role} " in f" {f} " and "ungraded" in f for f in flags):
            problems.append(f"{ungraded} {role} trial(s) have ungraded expectations (no judge verdict): "
                            "grade them with --judge, or make them typed assertions")
    return problems


def _value(bench: Benchmark, key: str) -> float | None:
    s = bench.summary
    if key == "max_avg_cost_usd":
        return skill_mean_cost(bench.cost)
    if s is None:
        return None
    return {"min_pass_rate": s.with_skill.pass_rate, "max_avg_tokens": s.with_skill.avg_tokens,
            "max_avg_duration_seconds": s.with_skill.avg_duration_seconds,
            "min_improvement_ratio": s.improvement_ratio}[key]


def _responsible(bench: Benchmark, key: str, limit: float) -> list[str]:
    if key == "max_avg_cost_usd":
        return [f"eval-{pe['eval_id']} ({pe['eval_name']})" for pe in (bench.cost or {}).get("per_eval", [])
                if (m := skill_mean_cost(bench.cost, pe)) is not None and m > limit]
    out = []
    for pe in bench.per_eval or []:
        name = f"eval-{pe.eval_id} ({pe.eval_name})" if pe.eval_name else f"eval-{pe.eval_id}"
        ws, bs = pe.with_skill, pe.baseline
        bad = {
            "min_pass_rate": ws.pass_rate is not None and ws.pass_rate < limit,
            "max_avg_tokens": ws.avg_tokens is not None and ws.avg_tokens > limit,
            "max_avg_duration_seconds": ws.avg_duration_seconds is not None and ws.avg_duration_seconds > limit,
            "min_improvement_ratio": ws.pass_rate is not None and bs.pass_rate is not None
            and ws.pass_rate <= bs.pass_rate,
        }[key]
        if bad:
            out.append(name)
    return out


def _skill_passed_over_zero(bench: Benchmark) -> bool:
    """The plain comparison's unbounded ratio (--point-estimate): the baseline passed nothing, the
    skill something."""
    s = bench.summary
    return s is not None and s.baseline.pass_rate == 0 and bool(s.with_skill.pass_rate)


def not_computable_reason(bench: Benchmark, key: str) -> str:
    s = bench.summary
    if key == "min_improvement_ratio" and s is not None:
        if s.baseline.pass_rate is None:
            return "not computable: no baseline trial completed"
        if s.baseline.pass_rate == 0:
            return "undefined: the baseline pass rate is 0, so no ratio exists (see the pass-rate difference)"
    return "not computable: the figure was not recorded"


def regression_p(comparison: dict) -> float:
    """The regression check's p-value: the smallest BH-adjusted p of the evals it calls
    regressed (Simes' test that none regressed); 1 with none."""
    ps = [r.get("p_regression_adjusted") for r in comparison.get("per_eval") or [] if r.get("label") == "regressed"]
    return min([float(p) for p in ps if p is not None], default=1.0)


def regression_result(comparison: dict, point_estimate: bool) -> ThresholdResult:
    """Fails on evals the comparison *called* regressed (exact test, FDR-controlled) with a
    BH-adjusted p at or below REGRESSION_GATE_LEVEL. A raw PASS->FAIL
    flip alone is one unlucky trial as often as not at K = 3, so it fails only under
    --point-estimate, which by definition ignores uncertainty."""
    rows = comparison.get("per_eval") or []

    def name(r: dict) -> str:
        return f"eval-{r['eval_id']} ({r['eval_name']})" if r.get("eval_name") else f"eval-{r['eval_id']}"

    unsure: list[dict] = []
    if point_estimate:
        bad = [r for r in rows if r.get("raw_flip") == "PASS->FAIL"]
        maybe: list[dict] = []
    else:
        called = [r for r in rows if r.get("label") == "regressed"]
        bad = [r for r in called if (r.get("p_regression_adjusted") or 0.0) <= REGRESSION_GATE_LEVEL]
        unsure = [r for r in called if r not in bad]
        maybe = [r for r in rows if r.get("label") == "possible regression"]
    advice = ""
    if bad:
        advice = ("; ".join(f"{name(r)} {r.get('counts', '')}" for r in bad)
                  + ": these passed before; improve the skill on them, then re-run")
    elif unsure:
        advice = ("called regressed at the comparison's false-discovery rate but not at the gate's "
                  f"{regression_level_words()}: " + "; ".join(
                      f"{name(r)} {r.get('counts', '')}" for r in unsure)
                  + "; re-run with more trials to confirm or clear them")
        return ThresholdResult(REGRESSION_KEY, 0.0, float(len(unsure)), "INCONCLUSIVE", None,
                               [name(r) for r in unsure], advice)
    elif maybe:
        advice = "possible regressions, not called: " + "; ".join(
            f"{name(r)} {r.get('counts', '')}" + (f" (about {r['additional_trials_per_arm_to_call']} more trials "
                                                 "per arm would settle it)"
                                                 if r.get("additional_trials_per_arm_to_call") else "")
            for r in maybe)
    if bad:
        advice += f" (failed at the gate's {regression_level_words()})"
    return ThresholdResult(REGRESSION_KEY, 0.0, float(len(bad)), "FAIL" if bad else "PASS", None,
                           [name(r) for r in bad], advice)


def two_bounds(value: Any) -> list[float | None] | None:
    """A recorded gate interval as [low, high] (None: unbounded on that side); anything else a
    damaged benchmark.json holds there (one bound, three) is no interval, not an IndexError."""
    if isinstance(value, list) and len(value) == 2 and all(b is None or isinstance(b, int | float) for b in value):
        return [None if b is None else float(b) for b in value]
    return None


def evaluate(bench: Benchmark, thresholds: Thresholds, *, strict: bool = False,
             point_estimate: bool = False, comparison: dict | None = None,
             not_measured: Collection[str] = (), executor: str | None = None) -> GateResult:
    """`not_measured`: threshold keys the executor (named by `executor`) reports no figure for."""
    stats_gates = ((bench.statistics or {}).get("gates") or {}) if not point_estimate else {}
    results = []
    for key in LABELS:
        limit = getattr(thresholds, key, None)  # max_cost_usd is the run's budget, not a threshold
        if limit is None:
            continue
        value = _value(bench, key)
        if key in not_measured and value is None:
            results.append(ThresholdResult(key, float(limit), None, NOT_MEASURED, advice=(
                f"the {executor or 'this'} executor reports no token counts, so it is not part of the verdict")))
            continue
        # The plain comparison: estimate_meets, or thresholds_met in a file from before it existed
        plain = (bench.estimate_meets if bench.estimate_meets is not None else bench.thresholds_met or {}).get(key)
        sg = stats_gates.get(key) or {}
        # Over a baseline that passed nothing the ratio is unbounded; its interval and decision
        # come from the same paired test as any other ratio's (gate_stats.gate_stats).
        unbounded = key == "min_improvement_ratio" and bool(sg.get("unbounded"))
        if unbounded:
            value = math.inf
        elif key == "min_improvement_ratio" and point_estimate and value is None and _skill_passed_over_zero(bench):
            value, sg = math.inf, {"decision": "PASS"}
        elif sg.get("value") is not None:
            # The figure the interval belongs to. The summary's ratio divides means over each arm's
            # own evals, the interval is over the evals both arms completed: the verdict uses the
            # paired one. The summary's other figures are rounded (a duration to 3 decimals, so 0
            # beside an interval of 1.8e-05..3.1e-05); the statistics' are not.
            value = sg["value"]
        if value is None:
            status, advice = "INCONCLUSIVE", not_computable_reason(bench, key)
        elif sg.get("decision") in {"PASS", "FAIL", "INCONCLUSIVE"}:
            status, advice = sg["decision"], ""
            if status == "INCONCLUSIVE" and sg.get("trials_to_decide"):
                advice = f"add trials to decide (about {sg['trials_to_decide']} per arm)"
            if unbounded:
                test = ("z test over these evals' trials" if sg.get("reading") == "these_evals"
                        else "paired sign-flip test")
                advice = ("the baseline passed none of its completed trials, so the ratio is unbounded; its interval "
                          f"holds every ratio the {test} does not reject"
                          + ("" if status == "PASS" else ": more evals would decide it"))
        else:
            status, advice = ("PASS" if plain else "FAIL"), ""
        if status == "FAIL":
            advice = advice or "improve the skill on the evals listed, then re-run"
        interval = two_bounds(sg.get("interval"))
        results.append(ThresholdResult(key, float(limit), value, status, interval,
                                       _responsible(bench, key, float(limit)) if status != "PASS" else [],
                                       advice, reading=sg.get("reading") if interval else None))
        if status == "FAIL" and not point_estimate and sg:
            # A benchmark.json written before the p-values were recorded: its FAIL stands as it was.
            # So does a FAIL recorded with a null p: the statistics give none where the figure has
            # no spread (every eval's tokens the same: a zero-width interval past the threshold),
            # and the Holm step then crashed formatting it (exit 70 on `gate`).
            fail_p = sg.get("fail_p_value")
            results[-1].fail_p_value = 0.0 if fail_p is None else fail_p
    adjustment = None
    if not point_estimate:
        results, adjustment = hold_fails_to_family(results, comparison)
    elif comparison:
        results.append(regression_result(comparison, point_estimate))
    out = verdict(results, measurement_problems(bench), strict=strict)
    out.fail_adjustment = adjustment
    return out


def hold_fails_to_family(results: list[ThresholdResult], comparison: dict | None
                         ) -> tuple[list[ThresholdResult], dict[str, Any] | None]:
    """Holm over the gated thresholds (see GATE_FAIL_ALPHA) at their share of the family-wise
    5% (thresholds_alpha): every gated threshold with a figure is a member (one not FAILing at
    its own 2.5% has p > every Holm level, so only counts in m). The regression check, when a
    comparison exists, is held to its own REGRESSION_GATE_LEVEL beside them. A FAIL Holm does
    not confirm becomes INCONCLUSIVE, saying the level it missed; a confirmed one names it."""
    members = [r for r in results if r.status != NOT_MEASURED and r.value is not None]
    ps = {r.key: (r.fail_p_value if r.status == "FAIL" and r.fail_p_value is not None else 1.0) for r in members}
    if not ps and not comparison:
        return results, None
    alpha = thresholds_alpha(bool(comparison))
    m = len(ps)
    confirmed = holm_fail_levels(ps, alpha)
    missed = holm_level(m, len(confirmed), alpha)  # the level the first unconfirmed check was held to
    for r in members:
        if r.status != "FAIL":
            continue
        r.fail_level = confirmed.get(r.key, missed)
        if r.key in confirmed:
            if m > 1 or comparison:
                r.advice += (f" (FAIL at the Holm-adjusted one-sided level {r.fail_level:.3g}, "
                             f"{m} threshold(s) at a family-wise {alpha:g})")
        else:
            r.status = "INCONCLUSIVE"
            p = "" if r.fail_p_value is None else f" (p {r.fail_p_value:.3g})"
            r.advice = (f"its interval misses the threshold at the one-sided 2.5%{p} but not at "
                        f"the Holm-adjusted level {r.fail_level:.3g} that {m} threshold(s) at a family-wise "
                        f"{alpha:g} require ({HOLM}): add trials or evals to decide")
    fail_ps = {k: round(v, 6) for k, v in ps.items()}
    if comparison:
        results = [*results, regression_result(comparison, False)]
        p_reg = regression_p(comparison)
        results[-1].fail_p_value = p_reg if p_reg <= REGRESSION_GATE_LEVEL else None
        results[-1].fail_level = REGRESSION_GATE_LEVEL
        fail_ps[REGRESSION_KEY] = round(p_reg, 6)
    adjustment = {"method": HOLM, "family_alpha": GATE_FAIL_ALPHA, "thresholds_alpha": alpha,
                  "regression_level": REGRESSION_GATE_LEVEL if comparison else None,
                  "per_check_cap": ONE_SIDED_ALPHA, "checks": m + bool(comparison), "fail_p_values": fail_ps,
                  "confirmed_levels": {k: round(v, 6) for k, v in confirmed.items()},
                  "pass_calls": "not adjusted: a PASS needs every check to pass (an intersection-union test)"}
    return results, adjustment


def verdict(results: list[ThresholdResult], problems: list[str], *, strict: bool = False) -> GateResult:
    """FAIL wins (a figure that clearly misses is a fail whatever else is wrong); an invalid
    measurement is never a PASS, even with no thresholds (exit 3, or 1 under --strict, like
    INCONCLUSIVE); with nothing gated the verdict is NOT_GATED, exit 0, never a PASS."""
    statuses = {r.status for r in results} - {NOT_MEASURED}
    if "FAIL" in statuses or (strict and ("INCONCLUSIVE" in statuses or problems)):
        return GateResult("FAIL", EXIT_FAIL, results, problems)
    if problems:
        return GateResult(INVALID, EXIT_INCONCLUSIVE, results, problems)
    if "INCONCLUSIVE" in statuses:
        return GateResult("INCONCLUSIVE", EXIT_INCONCLUSIVE, results, problems)
    if not statuses:  # nothing gated, or only thresholds nobody can measure here
        return GateResult(NOT_GATED, EXIT_PASS, results, problems)
    return GateResult("PASS", EXIT_PASS, results, problems)
