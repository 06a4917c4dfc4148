"""benchmark.json's `thresholds_met` says what the gate decided (issue 34): true only when the
gate passes that threshold. It said `min_pass_rate: true` beside a gate INCONCLUSIVE, so a
script reading it got the wrong answer; the plain comparison now sits in `estimate_meets`."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.models import Benchmark

HALF = {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("FFF", "FFF"), 4: ("FFF", "FFF")}  # exactly 0.5
CLEAR = {i: ("PPPPP", "FFFFF") for i in range(1, 13)}  # 12 evals, all pass with the skill


def bench_of(it: Path) -> dict:
    return json.loads((it / "benchmark.json").read_text())


def gate_json(*args: str) -> dict:
    result = cli(["gate", *args, "--json"])
    return json.loads(result.output)


def statuses(*args: str) -> dict[str, str]:
    return {t["key"]: t["status"] for t in gate_json(*args)["thresholds"]}


def test_an_undecided_threshold_is_not_met_though_its_estimate_is(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, HALF, thresholds={"min_pass_rate": 0.5})
    bench = bench_of(it)
    assert statuses(str(it)) == {"min_pass_rate": "INCONCLUSIVE"}
    assert bench["thresholds_met"] == {"min_pass_rate": False}
    assert bench["estimate_meets"] == {"min_pass_rate": True}  # 0.5 >= 0.5: the plain comparison
    assert cli(["gate", str(it), "--point-estimate"]).exit_code == 0  # still gates on it


def test_a_passed_threshold_is_met_and_a_failed_one_is_not(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, CLEAR, thresholds={"min_pass_rate": 0.5, "max_avg_tokens": 50})
    assert statuses(str(it)) == {"min_pass_rate": "PASS", "max_avg_tokens": "FAIL"}
    assert bench_of(it)["thresholds_met"] == {"min_pass_rate": True, "max_avg_tokens": False}
    assert bench_of(it)["estimate_meets"] == {"min_pass_rate": True, "max_avg_tokens": False}


def test_an_unbounded_ratio_that_passes_the_gate_is_met(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, CLEAR, thresholds={"min_improvement_ratio": 1.5})
    assert statuses(str(it)) == {"min_improvement_ratio": "PASS"}  # baseline 0 of 60: ratio unbounded
    assert bench_of(it)["thresholds_met"] == {"min_improvement_ratio": True}


def test_an_invalid_measurement_meets_no_threshold(tmp_path: Path) -> None:
    evals = {i: ("PPPPP", "EEEEE") for i in range(1, 13)}  # every baseline trial errored
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_pass_rate": 0.5})
    assert gate_json(str(it))["status"] == "INVALID"
    assert bench_of(it)["thresholds_met"] == {"min_pass_rate": False}
    assert bench_of(it)["estimate_meets"] == {"min_pass_rate": True}


def test_a_file_without_estimate_meets_keeps_its_plain_comparison_for_point_estimate(tmp_path: Path) -> None:
    """benchmark.json from before estimate_meets: its thresholds_met was the plain comparison."""
    it = write_iteration(tmp_path, 1, HALF, thresholds={"min_pass_rate": 0.9})
    data = bench_of(it)
    del data["estimate_meets"]
    data["thresholds_met"] = {"min_pass_rate": True}
    (it / "benchmark.json").write_text(json.dumps(data))
    assert Benchmark.model_validate(data).estimate_meets is None
    assert cli(["gate", str(it), "--point-estimate"]).exit_code == 0


def test_gating_against_other_thresholds_recomputes_both(tmp_path: Path) -> None:
    from skillassay.models import Thresholds
    from skillassay.workflows.gate_iteration import for_thresholds

    it = write_iteration(tmp_path, 1, CLEAR, thresholds={"min_pass_rate": 0.5})
    bench = Benchmark.model_validate(bench_of(it))
    again = for_thresholds(bench, Thresholds(min_pass_rate=1.0), it)
    assert again.estimate_meets == {"min_pass_rate": True} and again.thresholds_met == {"min_pass_rate": False}


def test_a_fail_without_spread_is_gated_not_crashed(tmp_path: Path) -> None:
    """Every trial used 100 tokens against a ceiling of 50: the statistics call it FAIL with no
    p-value (no spread), and the gate's Holm step crashed on that (exit 70)."""
    it = write_iteration(tmp_path, 1, CLEAR, thresholds={"max_avg_tokens": 50})
    result = cli(["gate", str(it)])
    assert result.exit_code == 1 and "FAIL: max_avg_tokens" in result.output, result.output
