"""`skillassay gate ITERATION_DIR`: exit codes for each state, --strict, --point-estimate,
--json, where thresholds come from, and what a failure message tells the reader."""

from __future__ import annotations

import json
from pathlib import Path

import repo_paths
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze.compare import FILENAME

HALF = {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("FFF", "FFF"), 4: ("FFF", "FFF")}  # exactly 0.5


def gate(*args: str) -> tuple[int, str]:
    result = cli(["gate", *args])
    return result.exit_code, result.output


def test_value_at_threshold_passes_the_plain_comparison(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, HALF, thresholds={"min_pass_rate": 0.5})
    assert json.loads((it / "benchmark.json").read_text())["estimate_meets"]["min_pass_rate"] is True
    assert gate(str(it), "--point-estimate")[0] == 0
    code, out = gate(str(it))
    assert code == 3 and "INCONCLUSIVE: min_pass_rate" in out  # the interval straddles 0.5
    assert gate(str(it), "--strict")[0] == 1


def test_clear_failure_names_threshold_figure_interval_evals_and_next_step(tmp_path: Path) -> None:
    evals = {1: ("PPP", "FFF"), **{i: ("FFF", "FFF") for i in range(2, 7)}}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_pass_rate": 0.9})
    code, out = gate(str(it))
    assert code == 1
    assert "FAIL: min_pass_rate" in out and "0.1667" in out and "95% CI" in out and ">= 0.9" in out
    assert "eval-2 (e2)" in out and "eval-1 (e1)" not in out.split("evals responsible:")[1].split("\n")[0]
    assert "next: min_pass_rate failed" in out and "improve the skill on eval-2 (e2)" in out


def test_inconclusive_pass_rate_states_trials_only_if_the_evals_are_alike(tmp_path: Path) -> None:
    # 20 evals at 5/10 against 0.44: every eval alike and the interval within the trial noise, so
    # more trials would decide it if the evals do share one rate, which no pilot can show: the
    # step gives the evals that would decide it, and the trials only with that condition and
    # their own planned power. (Below 10 evals not even that: MIN_EVALS_FOR_TRIALS_ADVICE.)
    evals = {i: ("PPPPPFFFFF", "FFFFFFFFFF") for i in range(1, 21)}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_pass_rate": 0.44})
    code, out = gate(str(it))
    assert code == 3
    g = json.loads((it / "benchmark.json").read_text())["statistics"]["gates"]["min_pass_rate"]
    assert g["trials_to_decide"] is None and g["trials_if_alike"] > 10, g
    flat = " ".join(out.split())
    assert "--trials" not in flat and "if the evals share one pass rate" in flat, out
    # One short sentence, no figure of power in it (issue 34: planned_power keeps it for scripts).
    assert f"(or about {g['trials_if_alike']} trials per eval, if the evals share one pass rate)" in flat, out
    assert "% power" not in flat and g["trials_planned_power"] > 0.8, out


def test_json_prints_only_json(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, HALF, thresholds={"min_pass_rate": 0.5})
    result = cli(["gate", str(it), "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 3 and data["status"] == "INCONCLUSIVE" and data["exit_code"] == 3
    assert data["config_path"].endswith("benchmark_config.json") and data["next_steps"]


def test_config_option_overrides_and_bad_input_exits_2(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, HALF, thresholds={"min_pass_rate": 0.5})
    strict_cfg = tmp_path / "cfg.json"
    strict_cfg.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.0}}))
    assert gate(str(it), "--config", str(strict_cfg))[0] == 0
    code, out = gate(str(it), "--config", str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"thresholds": {"min_pass_rate": 3}}))
    code, out = gate(str(it), "--config", str(bad))
    assert code == 2 and "$.thresholds.min_pass_rate" in out
    code, out = gate(str(tmp_path / "nowhere"))
    assert code == 2 and "benchmark.json" in out


def test_damaged_comparison_file_is_bad_input(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, HALF)
    (it / FILENAME).write_text(json.dumps({"schema_version": 1, "per_eval": [{"eval_id": 1}]}))
    code, out = gate(str(it))
    assert code == 2 and FILENAME in out and "$.per_eval" in out


def test_all_errored_baseline_is_invalid_not_zero(tmp_path: Path) -> None:
    evals = {i: ("PPP", "TTT") for i in range(1, 5)}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_improvement_ratio": 1.0})
    bench = json.loads((it / "benchmark.json").read_text())
    assert "measurement invalid: all baseline trials errored" in bench["statistics"]["validity"]
    assert bench["summary"]["improvement_ratio"] is None
    code, out = gate(str(it))
    assert code == 3 and "no baseline trial completed" in out
    assert gate(str(it), "--strict")[0] == 1


def test_regression_fails_gate_only_when_called(tmp_path: Path) -> None:
    # Five trials per arm: the gate's one regression level is 0.01 family-wise (issue 34), which
    # six of eight evals at 3/3 -> 0/3 (BH-adjusted p 0.021) no longer reach.
    same = {i: ("PPPPP", "FFFFF") for i in range(7, 9)}
    write_iteration(tmp_path, 1, {**{i: ("PPPPP", "FFFFF") for i in range(1, 7)}, **same})
    write_iteration(tmp_path, 2, {**{i: ("FFFFF", "FFFFF") for i in range(1, 7)}, **same})
    it = tmp_path / "iteration-2"
    assert gate(str(it))[0] == 0, "no comparison file yet: thresholds only (none set)"
    assert cli(["compare", str(it)]).exit_code == 0
    code, out = gate(str(it))
    assert code == 1, out  # six of eight evals 5/5 -> 0/5: BH-adjusted p <= 0.01
    assert "FAIL: no_regressions" in out and "eval-3 (e3) 5/5 -> 0/5" in out
    assert "next: Improve the skill on eval-1 (e1), eval-2 (e2), eval-3 (e3)" in out


def test_every_trial_errored_without_thresholds_is_invalid_never_exit_0(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {i: ("EEE", "TTT") for i in range(1, 4)})
    code, out = gate(str(it))
    assert code == 3, out
    assert "gate: PASS" not in out and "gate: INVALID" in out
    assert "all with_skill trials errored" in out and "all baseline trials errored" in out
    assert "next: Fix the measurement first" in out
    assert gate(str(it), "--strict")[0] == 1
    data = json.loads(cli(["gate", str(it), "--json"]).stdout)
    assert data["status"] == "INVALID" and data["exit_code"] == 3 and data["problems"]


def test_no_thresholds_says_nothing_was_gated(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {i: ("FFF", "FFF") for i in range(1, 4)})  # 0%: valid, but bad
    code, out = gate(str(it))
    assert code == 0
    assert "gate: PASS" not in out and "NOT_GATED" in out and "nothing was gated" in out


def test_ungraded_expectations_make_the_measurement_invalid() -> None:
    from skillassay.analyze.gate import evaluate, measurement_problems
    from skillassay.models import Benchmark, Thresholds

    arm = {"pass_rate": 1.0, "avg_tokens": 10.0, "avg_duration_seconds": 1.0}
    bench = Benchmark.model_validate({"skill_name": "s", "summary": {
        "total_evals": 2, "with_skill": {**arm, "ungraded_trials": 2}, "baseline": arm},
        "thresholds_met": {"min_pass_rate": True}})
    assert measurement_problems(bench) == [
        "2 with_skill trial(s) have ungraded expectations (no judge verdict): grade them with --judge, "
        "or make them typed assertions"]
    result = evaluate(bench, Thresholds(min_pass_rate=0.5), point_estimate=True)
    assert result.status == "INVALID" and result.exit_code == 3
    clean = Benchmark.model_validate({"skill_name": "s", "summary": {
        "total_evals": 2, "with_skill": arm, "baseline": arm}})
    assert measurement_problems(clean) == []


def test_zero_baseline_can_pass_min_improvement_ratio(tmp_path: Path) -> None:
    # Six evals, so the paired sign-flip test can reject (five never can: issue 34, and
    # tests/analyze/test_paired_intervals.py for the five-eval case that no longer passes).
    evals = {i: ("PPP", "FFF") for i in range(1, 7)}
    evals[5] = ("PPF", "FFF")  # 17/18 = 94% against 0/18
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_improvement_ratio": 1.5})
    code, out = gate(str(it))
    assert code == 0, out
    assert "PASS: min_improvement_ratio: improvement ratio unbounded (95% CI" in out
    lower = float(out.split("improvement ratio unbounded (95% CI ")[1].split("..")[0])
    assert 1.5 < lower < 20  # Fieller's bound at the noise floors (0 of 18 is not a ratio of infinity)
    # a bar the bound cannot clear stays undecided, with the way out
    code, out = gate(str(it), "--config", str(_cfg(tmp_path, {"min_improvement_ratio": 50})))
    assert code == 3 and "more evals would decide it" in out
    data = json.loads(cli(["gate", str(it), "--json"]).stdout)
    assert data["thresholds"][0]["value"] is None and data["status"] == "PASS"  # JSON has no infinity


def _cfg(tmp_path: Path, thresholds: dict) -> Path:
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"thresholds": thresholds}))
    return path
def test_regression_called_but_not_at_the_gate_level_is_inconclusive(tmp_path: Path) -> None:
    """Three of eight evals 3/3 -> 0/3 are called at FDR 0.10 (adjusted p 0.042) but not at the
    gate's 0.01 family-wise level, which keeps the whole gate's false FAIL under 5% when
    nothing changed (issue 16 item 4): not a PASS, not a FAIL."""
    same = {i: ("PPP", "FFF") for i in range(4, 9)}
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PPP", "FFF"), **same})
    write_iteration(tmp_path, 2, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), **same})
    it = tmp_path / "iteration-2"
    assert cli(["compare", str(it)]).exit_code == 0
    code, out = gate(str(it))
    assert code == 3, out
    assert "INCONCLUSIVE: no_regressions" in out and "eval-3 (e3) 3/3 -> 0/3" in out
    assert "next: Re-run eval-1 (e1), eval-2 (e2), eval-3 (e3) with more trials" in out


def test_only_not_measured_thresholds_are_not_gated_and_say_why(tmp_path: Path) -> None:
    """A token ceiling with the `command` executor (no token counts) is NOT MEASURED; when it is
    the only threshold nothing is gated: NOT_GATED, exit 0, never a PASS, and the headline names
    the unmeasured threshold instead of claiming that none was configured."""
    import shutil
    import sys

    skill = tmp_path / "acme-vpn"
    shutil.copytree(repo_paths.REPO / "examples" / "acme-vpn", skill)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"max_avg_tokens": 1000}}))
    argv = json.dumps([sys.executable, "-c", "print('Port 4433')"])
    result = cli(["run", str(skill), "--executor", "command", "-o", f"argv={argv}", "--config",
                                 str(config), "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert "NOT_GATED" in result.output and "gate: PASS" not in result.output
    code, out = gate(str(tmp_path / "ws" / "iteration-1"), "--config", str(config))
    assert code == 0, out
    assert "NOT_GATED" in out and "NOT MEASURED: max_avg_tokens" in out
    assert "no thresholds configured" not in out and "max_avg_tokens" in out.split("NOT_GATED")[1].split("\n")[0]
    data = json.loads(cli(["gate", str(tmp_path / "ws" / "iteration-1"), "--config", str(config),
                                          "--json"]).stdout)
    assert data["status"] == "NOT_GATED" and data["exit_code"] == 0
    assert [t["status"] for t in data["thresholds"]] == ["NOT MEASURED"]
