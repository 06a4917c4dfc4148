"""`skillassay gate ITERATION_DIR`: the gate re-evaluated from an iteration's files alone
(benchmark.json, comparison_previous.json when present, the thresholds of its config), with
the next step spelled out, so CI can gate on a benchmark made elsewhere or earlier."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.analyze.advice import MIN_DETECTABLE_EFFECT
from skillassay.analyze.benchmark import estimate_meets, gated_thresholds_met
from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import LABELS, NOT_MEASURED, REGRESSION_KEY, GateResult, evaluate
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading
from skillassay.analyze.statistics import build_statistics
from skillassay.errors import InputError
from skillassay.executors import load_executor_class, unmeasurable_thresholds
from skillassay.models import Benchmark, Thresholds
from skillassay.store.iteration_files import find_config, load_comparison, load_config
from skillassay.store.jsonio import parse_model, read_json
from skillassay.workflows.compare_on_disk import load_iteration_records


@dataclass
class GateCheck:
    benchmark: Benchmark
    result: GateResult
    config_path: Path | None
    comparison: dict[str, Any] | None
    next_steps: list[str]

    def to_dict(self) -> dict[str, Any]:
        out = self.result.to_dict()
        out.update({"config_path": str(self.config_path) if self.config_path else None,
                    "compared_with": (self.comparison or {}).get("previous"),
                    "next_steps": self.next_steps})
        return out


def next_steps(result: GateResult, gates: dict[str, Any]) -> list[str]:
    """One actionable sentence per threshold that did not pass: improve the skill on the named
    evals when it failed; add the trials (or evals) that would decide it when inconclusive;
    an invalid measurement first, since no threshold means anything until it is fixed."""
    steps = []
    if result.problems:
        steps.append(f"Fix the measurement first ({'; '.join(result.problems)}): read the trials' errors in "
                     "report.md or their grading.json, fix the cause (executor, judge, evals), then re-run.")
    for t in result.thresholds:
        if t.status in ("PASS", NOT_MEASURED):
            continue
        evals = ", ".join(t.evals)
        if t.key == REGRESSION_KEY and t.status == "INCONCLUSIVE":
            steps.append(f"Re-run {evals} with more trials: the comparison calls them regressed, but not firmly "
                         "enough to fail the gate; more trials will confirm or clear them.")
            continue
        if t.key == REGRESSION_KEY:
            steps.append(f"Improve the skill on {evals}: they passed in the previous iteration and fail now "
                         "(run the skill's evolve step on them), then re-run.")
            continue
        label, op = LABELS[t.key]
        g = gates.get(t.key) or {}
        if t.status == "FAIL":
            steps.append(f"{t.key} failed ({label} {t.value:.4g}, needs {op} {t.threshold:g}): improve the skill on "
                         f"{evals or 'the suite as a whole'} (evolve step), then re-run; do not publish until it passes.")
        elif g.get("trials_to_decide"):
            steps.append(f"{t.key} is undecided: add trials, e.g. `skillassay run ... --trials {g['trials_to_decide']}` "
                         f"({g.get('decide_note') or 'about that many completed trials per eval per arm'}).")
        else:
            steps.append(f"{t.key} is undecided: {g.get('decide_note') or t.advice or 'no sample size decides it'}.")
    return steps


def for_thresholds(bench: Benchmark, thresholds: Thresholds, iteration_dir: Path) -> Benchmark:
    """benchmark.json's verdicts were computed for the thresholds of its aggregation; gating it
    against others (--config) needs them recomputed, or the verdicts would be stale. The
    gates are rebuilt from the runs; without run folders only the plain comparison is left."""
    st = dict(bench.statistics or {})
    gates = st.get("gates")
    baked = {k: g.get("threshold") if isinstance(g, dict) else None  # a damaged gate: rebuilt below
             for k, g in (gates.items() if isinstance(gates, dict) else ())}
    known = thresholds.model_dump(include=set(type(thresholds).model_fields))  # extra keys are no threshold
    wanted = {k: float(v) for k, v in known.items() if v is not None}
    if baked == wanted or bench.summary is None:
        return bench
    try:
        records = load_iteration_records(iteration_dir)
        skill = st.get("skill_configuration", "with_skill")
        baseline = st.get("baseline_configuration", "without_skill")
        st["gates"] = build_statistics(group_records(records, (skill, baseline)), skill, baseline,
                                       st.get("trials_requested") or 0, known,
                                       min_detectable_effect=planned_effect(st),
                                       interval_reading=recorded_reading(st))["gates"]
    except InputError:
        st["gates"] = {}
    out = bench.model_copy(update={"statistics": st,
                                   "estimate_meets": estimate_meets(bench.summary.model_dump(), thresholds)})
    out.thresholds_met = gated_thresholds_met(out, thresholds)
    return out


def recorded_reading(st: dict[str, Any]) -> Reading:
    """The reading the benchmark's intervals were computed for, so rebuilt gates keep it."""
    value = st.get("interval_reading")
    return "these_evals" if value == "these_evals" else DEFAULT_READING


def planned_effect(st: dict[str, Any]) -> float:
    """The effect the benchmark's advice was planned for (its power section says), so gates
    rebuilt for other thresholds are advised for the same one."""
    value = (st.get("power") or {}).get("detectable_difference")
    return float(value) if isinstance(value, int | float) and 0 < value <= 1 else MIN_DETECTABLE_EFFECT


def not_measured(iteration_dir: Path, thresholds: Thresholds) -> tuple[str | None, list[str]]:
    """(executor name, thresholds it cannot measure) from the executor iteration.json records,
    so `gate` says NOT MEASURED where `run` did. An executor no longer installed, or no record:
    nothing is assumed unmeasurable (the gate stays as strict as without this)."""
    try:
        name = read_json(iteration_dir / "iteration.json").get("executor", {}).get("executor")
        return name, unmeasurable_thresholds(load_executor_class(str(name)), thresholds.model_dump())
    except (InputError, AttributeError):
        return None, []


def check_iteration(iteration_dir: Path, config: Path | None = None, *, strict: bool = False,
                    point_estimate: bool = False) -> GateCheck:
    """Thresholds from --config, else the config the iteration recorded, its skill snapshot's
    or the one next to its skill; with none at all only the regression check applies."""
    path = iteration_dir / "benchmark.json"
    bench = parse_model(read_json(path), Benchmark, path)
    cfg = find_config(iteration_dir, config)
    comparison = load_comparison(iteration_dir)
    thresholds = load_config(cfg).thresholds
    bench = for_thresholds(bench, thresholds, iteration_dir)
    executor, unmeasurable = not_measured(iteration_dir, thresholds)
    result = evaluate(bench, thresholds, strict=strict, point_estimate=point_estimate,
                      comparison=comparison, not_measured=unmeasurable, executor=executor)
    gates = (bench.statistics or {}).get("gates") or {} if not point_estimate else {}
    return GateCheck(bench, result, cfg, comparison, next_steps(result, gates))
