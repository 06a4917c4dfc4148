"""Iteration vs iteration: every per-eval label, the deltas, where PREVIOUS comes from, the
file written, the CLI, and reusing a previous baseline with --baseline-from."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_runner import cli
from cli_runner import invoke as run_cli
from echo_runs import drop_facts, run_echo
from iteration_factory import write_iteration

from skillassay.analyze.compare import FILENAME, ratio_difference, trials_to_call
from skillassay.errors import InputError
from skillassay.workflows.compare_on_disk import compare, load_iteration_records

SAME = ("PPP", "FFF")




def labels(result: dict) -> dict:
    return {r["eval_id"]: r["label"] for r in result["per_eval"]}


# --- labels on real echo runs --------------------------------------------------------------------


def test_real_regression_is_called_in_run_and_gate_names_it(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws)
    assert not (ws / "iteration-1" / FILENAME).exists(), "nothing to compare with on the first iteration"
    drop_facts(example_skill, "port 4433", "WireGuard", "netops@")
    code, out = run_echo(example_skill, ws)
    # Called at FDR 0.10 (adjusted p 0.042) but not at the gate's 0.01 family-wise level,
    # which keeps the whole gate's false FAIL under 5% when nothing changed (issue 16 item 4).
    assert code == 3, out
    comp = json.loads((ws / "iteration-2" / FILENAME).read_text())
    assert comp["schema_version"] == 1 and comp["previous"]["iteration"] == 1
    assert comp["regressed"] == [1, 2, 3] and comp["raw_regressions"] == [1, 2, 3]
    assert labels(comp)[4] == "unchanged" and comp["baseline_drift"]["changed"] == []
    assert comp["changed"] == ["skill"]
    assert comp["metrics"]["pass_rate"]["delta"] == pytest.approx(-3 / 8)
    assert "INCONCLUSIVE: no_regressions" in out and "eval-1 (server-port)" in out
    code, out = run_cli("gate", str(ws / "iteration-2"))
    assert code == 3
    assert "eval-2 (protocol)" in out and "with more trials" in out.lower()


def test_one_eval_3_of_3_to_0_of_3_is_only_possible_and_says_what_would_settle_it(
        example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws)
    drop_facts(example_skill, "port 4433")
    code, out = run_echo(example_skill, ws)
    comp = json.loads((ws / "iteration-2" / FILENAME).read_text())
    row = comp["per_eval"][0]
    assert row["label"] == "possible regression" and row["raw_flip"] == "PASS->FAIL"
    assert comp["regressed"] == [] and comp["possible_regressions"] == [1]
    assert row["additional_trials_per_arm_to_call"] == 1
    assert "3/3 before vs 0/3 now on one eval is not enough to call it; about 1 more trial per arm would be" \
        in row["explanation"]
    assert "FAIL: no_regressions" not in out


def test_the_promised_extra_trial_does_settle_it(tmp_path: Path) -> None:
    """The 'N more trials' advice is checked against the call it predicts."""
    others = {i: SAME for i in range(2, 9)}
    write_iteration(tmp_path, 1, {1: ("PPPP", "FFFF"), **others})
    write_iteration(tmp_path, 2, {1: ("FFFF", "FFFF"), **others})
    assert labels(compare(tmp_path / "iteration-2"))[1] == "regressed"


def test_one_trial_flip_at_k3_is_not_called(tmp_path: Path) -> None:
    others = {i: SAME for i in range(2, 6)}
    write_iteration(tmp_path, 1, {1: ("PPF", "FFF"), **others})
    write_iteration(tmp_path, 2, {1: ("PFF", "FFF"), **others})
    comp = compare(tmp_path / "iteration-2")
    row = comp["per_eval"][0]
    assert row["raw_flip"] == "PASS->FAIL" and row["label"] == "possible regression"
    assert comp["raw_regressions"] == [1] and comp["regressed"] == []
    code, out = run_cli("gate", str(tmp_path / "iteration-2"))
    assert code == 0, out
    assert "possible regressions, not called" in out
    # the plain comparison ignores uncertainty: the raw flip fails it
    assert run_cli("gate", str(tmp_path / "iteration-2"), "--point-estimate")[0] == 1


def test_improvement_labels(tmp_path: Path) -> None:
    base = {i: SAME for i in range(4, 9)}
    write_iteration(tmp_path, 1, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), **base})
    write_iteration(tmp_path, 2, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PPP", "FFF"), **base})
    comp = compare(tmp_path / "iteration-2")
    assert comp["improved"] == [1, 2, 3] and comp["raw_improvements"] == [1, 2, 3]
    assert comp["regressed"] == [] and labels(comp)[4] == "unchanged"
    write_iteration(tmp_path, 3, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("FPP", "FFF"), **base})
    comp = compare(tmp_path / "iteration-3")
    assert labels(comp)[3] == "possible regression" and labels(comp)[1] == "unchanged"


def test_baseline_drift_and_changed_settings_are_flagged(tmp_path: Path) -> None:
    evals = {i: SAME for i in range(1, 5)}
    write_iteration(tmp_path, 1, evals)
    drifted = {i: ("PPP", "PPP") for i in range(1, 5)}
    write_iteration(tmp_path, 2, drifted, fingerprint={"skill": "s2", "evals": "e1", "settings": "x2"})
    comp = compare(tmp_path / "iteration-2")
    assert comp["baseline_drift"]["changed"] == [1, 2, 3, 4]
    assert comp["changed"] == ["settings", "skill"]
    text = " ".join(comp["notes"])
    assert "settings" in text and "The baseline arm (without the skill) also changed on eval(s) 1, 2, 3, 4" in text
    assert "probably" not in text  # a called change says what to check, not what happened


def test_cost_deltas_and_intervals(tmp_path: Path) -> None:
    evals = {i: SAME for i in range(1, 5)}
    write_iteration(tmp_path, 1, evals, tokens=200)
    write_iteration(tmp_path, 2, evals, tokens=100)
    m = compare(tmp_path / "iteration-2")["metrics"]
    assert m["avg_tokens"]["relative_delta"] == pytest.approx(-0.5)
    assert m["avg_tokens"]["ratio"] == pytest.approx(0.5)
    assert m["pass_rate"]["delta"] == 0


def test_ratio_difference_matches_delta_method_by_hand() -> None:
    a1, b1 = [1, 1, 0.5, 1], [0.5, 0.5, 0.5, 1]
    a2, b2 = [1, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]
    out = ratio_difference(a1, b1, a2, b2)
    r1, r2 = np.mean(a1) / np.mean(b1), np.mean(a2) / np.mean(b2)
    z = (np.array(a1) - r1 * np.array(b1)) / np.mean(b1) - (np.array(a2) - r2 * np.array(b2)) / np.mean(b2)
    se = z.std(ddof=1) / 2
    assert out["delta"] == pytest.approx(r1 - r2, abs=1e-6)
    assert out["interval"][1] - out["delta"] == pytest.approx(3.182446 * se, rel=1e-4)
    assert ratio_difference([1], [0], [1], [1])["undefined_reason"].startswith("the current baseline")


def test_trials_to_call_edge_cases() -> None:
    assert trials_to_call((3, 3), (3, 3), [1.0], 0, 0.1, regression=True) is None
    assert trials_to_call((0, 3), (3, 3), [1.0], 0, 0.1, regression=True) is None  # it improved
    assert trials_to_call((2, 3), (1, 3), [1.0] * 8, 0, 0.1, regression=True) > 10


# --- where PREVIOUS comes from -------------------------------------------------------------------


def test_previous_benchmark_from_config_without_run_folders(tmp_path: Path) -> None:
    evals = {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PPP", "FFF"), 4: SAME}
    old = write_iteration(tmp_path / "old", 1, evals)
    for folder in old.glob("eval-*"):
        shutil.rmtree(folder)  # only benchmark.json is left
    cur = write_iteration(tmp_path / "new", 1, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), 4: SAME})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"previous_benchmark": "old/iteration-1/benchmark.json"}))
    comp = compare(cur, None, config)
    assert comp["previous"]["found"].startswith("previous_benchmark")
    assert comp["regressed"] == [1, 2, 3]


def test_missing_previous_benchmark_is_bad_input(tmp_path: Path) -> None:
    cur = write_iteration(tmp_path, 1, {1: SAME})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"previous_benchmark": "nope/benchmark.json"}))
    with pytest.raises(InputError) as exc:
        compare(cur, None, config)
    assert "previous_benchmark" in str(exc.value)


def test_compare_cli(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: SAME})
    code, out = run_cli("compare", str(tmp_path / "iteration-1"))
    assert code == 2 and "nothing to compare with" in out
    write_iteration(tmp_path, 2, {1: ("FFF", "FFF"), 2: SAME})
    result = cli(["compare", str(tmp_path / "iteration-2"), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)  # stdout is JSON only
    assert data["per_eval"][0]["raw_flip"] == "PASS->FAIL"
    assert (tmp_path / "iteration-2" / FILENAME).is_file()
    code, out = run_cli("compare", str(tmp_path / "iteration-2"), str(tmp_path / "iteration-1"))
    assert code == 0 and "eval-1 (e1): regressed (raw PASS->FAIL)" in out


def test_load_iteration_records_reads_ids_from_metadata(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {7: ("PPF", "FFT")})
    recs = load_iteration_records(it)
    assert {r.eval_id for r in recs} == {7} and len(recs) == 6
    assert sum(1 for r in recs if r.status == "timeout") == 1
    assert math.isclose(sum(bool(r.passed) for r in recs if r.configuration == "with_skill"), 2)


# --- --baseline-from -----------------------------------------------------------------------------


def test_baseline_from_reuses_runs_and_tops_up(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "2")
    drop_facts(example_skill, "port 4433")
    code, out = run_echo(example_skill, ws, "--trials", "3", "--baseline-from", "1")
    # with_skill 8 x 3 and one top-up baseline trial per eval were executed; 16 were reused
    assert "iteration 2: 32 trials run (0 errored), 16 reused" in out, out
    src = ws / "iteration-1/eval-2-protocol/without_skill/run-1/timing.json"
    dst = ws / "iteration-2/eval-2-protocol/without_skill/run-1/timing.json"
    assert dst.read_bytes() == src.read_bytes(), "copied, not re-run"
    assert (ws / "iteration-2/eval-2-protocol/without_skill/run-3/grading.json").is_file()
    prov = json.loads((ws / "iteration-2/baseline_reuse.json").read_text())
    assert len(prov["runs"]) == 16


def test_baseline_from_refuses_other_settings(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    drop_facts(example_skill, "port 4433")
    code, out = run_echo(example_skill, ws, "--trials", "1", "--seed", "7", "--baseline-from", "1")
    assert code == 2 and "settings" in out and "cannot reuse" in out
    code, out = run_echo(example_skill, ws, "--trials", "1", "-o", "delay_seconds=0",
                         "--baseline-from", str(ws / "iteration-1"))
    assert code == 2 and "cannot reuse" in out
    code, out = run_echo(example_skill, ws, "--trials", "1", "--baseline-from", "9")
    assert code == 2 and "--baseline-from" in out
