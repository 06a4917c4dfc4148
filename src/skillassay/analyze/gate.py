"""The gate: thresholds -> verdict and exit code (0 pass, 1 fail, 3 inconclusive).

With statistics present, each threshold is PASS (whole interval on the good side), FAIL
(whole interval on the bad side) or INCONCLUSIVE; `point_estimate` gates on the spec's plain
comparison alone (a value exactly at the threshold passes); `strict` turns inconclusive
into fail."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillassay.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_PASS
from skillassay.models import Benchmark, Thresholds

LABELS = {
    "min_pass_rate": ("with-skill pass rate", ">="),
    "max_avg_tokens": ("avg tokens (with skill)", "<="),
    "max_avg_duration_seconds": ("avg duration s (with skill)", "<="),
    "min_improvement_ratio": ("improvement ratio", ">="),
}
# Not a threshold of the config: the comparison with the previous iteration (compare.py).
REGRESSION_KEY = "no_regressions"
_LINE_LABELS = {**LABELS, REGRESSION_KEY: ("evals called regressed vs the previous iteration:", "<=")}
# The regression check fails the gate only at this family-wise level: BH at 0.025 keeps a false
# FAIL under 2.5% when nothing changed, which with the one-sided 2.5% of each interval gate keeps
# the whole gate's false FAIL under 5% (at the FDR q = 0.10 of the calls it reached 9% at K = 10).
# An eval called at q but not at this level leaves the check INCONCLUSIVE, never PASS.
REGRESSION_GATE_LEVEL = 0.025


@dataclass
class ThresholdResult:
    key: str
    threshold: float
    value: float | None
    status: str  # PASS | FAIL | INCONCLUSIVE
    interval: list[float | None] | None = None
    evals: list[str] = field(default_factory=list)
    advice: str = ""

    def line(self) -> str:
        label, op = _LINE_LABELS[self.key]
        value = "n/a" if self.value is None else f"{self.value:.4g}"
        ci = ""
        if self.interval and any(b is not None for b in self.interval):
            # an unbounded side (e.g. a ratio whose baseline can resample to 0) is shown as such
            lo, hi = (("-∞" if b is None and i == 0 else "∞" if b is None else f"{b:.3g}")
                      for i, b in enumerate(self.interval))
            ci = f" (95% CI {lo}..{hi})"
        text = f"{self.status}: {self.key}: {label} {value}{ci}, needs {op} {self.threshold:g}"
        if self.evals:
            text += f"; evals responsible: {', '.join(self.evals)}"
        if self.advice:
            text += f". {self.advice}"
        return text


@dataclass
class GateResult:
    status: str  # PASS | FAIL | INCONCLUSIVE
    exit_code: int
    thresholds: list[ThresholdResult]

    def to_dict(self) -> dict:
        return {"status": self.status, "exit_code": self.exit_code,
                "thresholds": [t.__dict__ for t in self.thresholds]}


def _value(bench: Benchmark, key: str) -> float | None:
    s = bench.summary
    if s is None:
        return None
    return {"min_pass_rate": s.with_skill.pass_rate, "max_avg_tokens": s.with_skill.avg_tokens,
            "max_avg_duration_seconds": s.with_skill.avg_duration_seconds,
            "min_improvement_ratio": s.improvement_ratio}[key]


def _responsible(bench: Benchmark, key: str, limit: float) -> list[str]:
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


def not_computable_reason(bench: Benchmark, key: str) -> str:
    s = bench.summary
    if key == "min_improvement_ratio" and s is not None:
        if s.baseline.pass_rate is None:
            return "not computable: no baseline trial completed"
        if s.baseline.pass_rate == 0:
            return "undefined: the baseline pass rate is 0, so no ratio exists (see the pass-rate difference)"
    return "not computable: the figure was not recorded"


def regression_result(comparison: dict, point_estimate: bool) -> ThresholdResult:
    """Fails on evals the comparison *called* regressed (exact test, FDR-controlled). A raw
    PASS->FAIL flip alone is one unlucky trial as often as not at K = 3, so it fails only
    under --point-estimate, which by definition ignores uncertainty."""
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
                  f"{REGRESSION_GATE_LEVEL:g} family-wise level: " + "; ".join(
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
    return ThresholdResult(REGRESSION_KEY, 0.0, float(len(bad)), "FAIL" if bad else "PASS", None,
                           [name(r) for r in bad], advice)


def evaluate(bench: Benchmark, thresholds: Thresholds, *, strict: bool = False,
             point_estimate: bool = False, comparison: dict | None = None) -> GateResult:
    stats_gates = ((bench.statistics or {}).get("gates") or {}) if not point_estimate else {}
    results = []
    for key in LABELS:
        limit = getattr(thresholds, key)
        if limit is None:
            continue
        value = _value(bench, key)
        plain = (bench.thresholds_met or {}).get(key)
        sg = stats_gates.get(key) or {}
        if key == "min_improvement_ratio" and sg.get("value") is not None:
            # The summary's ratio divides means over each arm's own evals; the interval is over
            # the evals both arms completed. The verdict uses one set: the paired one.
            value = sg["value"]
        if value is None:
            status, advice = "INCONCLUSIVE", not_computable_reason(bench, key)
        elif sg.get("decision") in {"PASS", "FAIL", "INCONCLUSIVE"}:
            status, advice = sg["decision"], ""
            if status == "INCONCLUSIVE" and sg.get("trials_to_decide"):
                advice = f"add trials to decide (about {sg['trials_to_decide']} per arm)"
        else:
            status, advice = ("PASS" if plain else "FAIL"), ""
        if status == "FAIL":
            advice = advice or "improve the skill on the evals listed, then re-run"
        results.append(ThresholdResult(key, float(limit), value, status, sg.get("interval"),
                                       _responsible(bench, key, float(limit)) if status != "PASS" else [],
                                       advice))
    if comparison:
        results.append(regression_result(comparison, point_estimate))
    statuses = {r.status for r in results}
    if "FAIL" in statuses or (strict and "INCONCLUSIVE" in statuses):
        return GateResult("FAIL", EXIT_FAIL, results)
    if "INCONCLUSIVE" in statuses:
        return GateResult("INCONCLUSIVE", EXIT_INCONCLUSIVE, results)
    return GateResult("PASS", EXIT_PASS, results)
