"""No figure overflows or underflows into a crash at any trial count (issue 34): `run --trials
537` ran every trial, then died in compare.detection_limit (4^-K underflows, floor(inf), then a
division by zero) before writing a report or a gate. The analysis stages are driven here on
records (537, 10,000 trials per arm) and on per-eval counts (a million), not by a real run."""

from __future__ import annotations

import json
import math
from array import array
from pathlib import Path

import pytest

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark, summarize
from skillassay.analyze.cells import Arm, EvalCell
from skillassay.analyze.compare import design_limit, detection_limit
from skillassay.analyze.gate import evaluate
from skillassay.models import Thresholds
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.store.records import ExpectationTally, Outcome, TrialRecord

THRESHOLDS = Thresholds(min_pass_rate=0.5, min_improvement_ratio=1.5, max_avg_tokens=200)
ARMS = Arms("with_skill", "without_skill")
# (with-skill rates, baseline rates) per eval: mixed, all-or-nothing (a zero baseline), alike
SCENARIOS = [([0.9, 0.8, 0.7], [0.1, 0.0, 0.2]), ([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]),
             ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])]


@pytest.mark.parametrize("k", [537, 538, 1_000, 10_000, 10**6, 10**9])
@pytest.mark.parametrize("n_evals", [1, 5, 10**6])
def test_detection_limit_is_finite_at_any_trial_count(k: int, n_evals: int) -> None:
    limit = detection_limit(n_evals, k)
    assert limit["detectable"] and limit["max_evals"] == 10**12
    assert "more than a million evals" in limit["text"]
    json.dumps(limit, allow_nan=False)  # every figure a JSON number


def test_detection_limit_keeps_its_figures_below_the_underflow() -> None:
    """The log-space count agrees with the direct one where 4^-K is representable."""
    for k in range(1, 30):
        for n in (1, 5, 6, 7, 25, 26, 102, 103, 10**6):
            assert detection_limit(n, k)["detectable"] == (n * 0.25**k <= 0.10)
            assert detection_limit(n, k)["max_evals"] == min(math.floor(0.10 / 0.25**k + 1e-12), 10**12)


def _records(k: int, skill: list[float], base: list[float]) -> list[TrialRecord]:
    out = []
    for e, rates in enumerate(zip(skill, base, strict=True)):
        for cfg, rate in zip(("with_skill", "without_skill"), rates, strict=True):
            wins = round(rate * k)
            out += [TrialRecord(e, f"e{e}", cfg, i + 1, "ok", i < wins, int(i < wins), 1, tokens=100,
                                duration_seconds=2.0, expectations=(Outcome("right", i < wins),))
                    for i in range(k)]
    return out


def _check_outputs(bench, k: int) -> None:
    gate = evaluate(bench, THRESHOLDS)
    assert gate.status in {"PASS", "FAIL", "INCONCLUSIVE"}
    json.dumps(gate.to_dict(), allow_nan=False)
    json.loads(bench.model_dump_json())
    assert render_benchmark_md(bench, gate)
    text = design_limit(bench.statistics, None)  # the line `run` prints after the last trial
    assert f"At {k} trial(s) per arm" in text


@pytest.mark.parametrize("k", [537, 10_000])
@pytest.mark.parametrize("skill,base", SCENARIOS)
def test_benchmark_gate_and_console_lines_at_many_trials(k: int, skill: list[float], base: list[float]) -> None:
    bench = build_benchmark(_records(k, skill, base), skill_name="s", skill_path=None, iteration=1,
                            timestamp="2026-01-01T00:00:00Z", trials_requested=k, thresholds=THRESHOLDS, arms=ARMS)
    _check_outputs(bench, k)


def _arm(k: int, rate: float) -> Arm:
    wins = round(rate * k)
    return Arm(passes=wins, completed=k, recorded=k, tokens=array("d", [100.0]) * k,
               durations=array("d", [2.0]) * k, rates=array("d", [1.0]) * wins + array("d", [0.0]) * (k - wins))


@pytest.mark.sim  # ~10 CPU-s each: the per-trial spreads of 6 million trials
@pytest.mark.parametrize("skill,base", SCENARIOS)
def test_statistics_and_gate_at_a_million_trials(skill: list[float], base: list[float]) -> None:
    k = 10**6
    cells = [EvalCell(e, f"e{e}", {"with_skill": _arm(k, s), "without_skill": _arm(k, b)})
             for e, (s, b) in enumerate(zip(skill, base, strict=True))]
    bench = summarize(cells, ["with_skill", "without_skill"], ExpectationTally(), skill_name="s", skill_path=None,
                      iteration=1, timestamp="2026-01-01T00:00:00Z", trials_requested=k, thresholds=THRESHOLDS,
                      arms=ARMS)
    _check_outputs(bench, k)


@pytest.mark.sim  # writes 4,296 run folders and runs a Boschloo test at 537 per arm
def test_report_of_an_iteration_of_537_trials(tmp_path: Path) -> None:
    """The whole report (report.md) of a written iteration, with a comparison to the one before."""
    from iteration_factory import write_iteration

    from skillassay.workflows.report_iteration import report_iteration

    k = 537
    write_iteration(tmp_path, 1, {1: ("P" * k, "F" * k), 2: ("P" * k, "P" * 500 + "F" * 37)},
                    thresholds={"min_pass_rate": 0.5, "min_improvement_ratio": 1.5})
    write_iteration(tmp_path, 2, {1: ("P" * 400 + "F" * 137, "F" * k), 2: ("P" * k, "P" * 500 + "F" * 37)},
                    thresholds={"min_pass_rate": 0.5, "min_improvement_ratio": 1.5})
    report = report_iteration(tmp_path / "iteration-2").read_text()
    assert f"At {k} trial(s) per arm" in report
