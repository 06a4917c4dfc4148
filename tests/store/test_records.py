"""A trial's verdict (store.records): a trial passes when every expectation passes, so one that
FAILED decides it, whatever else is left without a verdict (issue 34: a failed typed check beside
an expectation the judge abstained on made the trial "ungraded" and the gate INVALID)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.store.jsonio import write_json
from skillassay.store.read import read_trial
from skillassay.store.records import Outcome, TrialRecord, trial_verdict

FAILED_CHECK = Outcome("contains 'restart'", False, "not found in the output")
ABSTAINED = Outcome("explains the cause", None, "judge abstained: no evidence quoted")
PASSED = Outcome("names the service", True, "quoted: 'Zephyr Cache'")


def test_a_failed_expectation_fails_the_trial_even_beside_an_ungraded_one() -> None:
    assert trial_verdict("ok", 0, 2, [FAILED_CHECK, ABSTAINED]) is False
    assert trial_verdict("ok", 1, 2, [PASSED, ABSTAINED]) is None  # could still go either way
    assert trial_verdict("ok", 1, 1, [PASSED]) is True
    assert trial_verdict("error", 0, 2, [FAILED_CHECK, ABSTAINED]) is None  # never completed
    failed = TrialRecord(1, "e1", "with_skill", 1, "ok", False, 0, 2, expectations=(FAILED_CHECK, ABSTAINED))
    undecided = TrialRecord(1, "e1", "with_skill", 2, "ok", None, 1, 2, expectations=(PASSED, ABSTAINED))
    assert not failed.ungraded and undecided.ungraded
    assert failed.ungraded_expectations == 1  # the abstention itself is still counted and shown


def _grade(run: Path, expectations: list[Outcome]) -> None:
    passed = sum(e.passed is True for e in expectations)
    write_json(run / "grading.json", {
        "expectations": [e._asdict() for e in expectations],
        "summary": {"passed": passed, "failed": sum(e.passed is False for e in expectations),
                    "total": len(expectations), "pass_rate": passed / len(expectations)}})


def test_read_back_from_grading_json(tmp_path: Path) -> None:
    run = tmp_path / "run-1"
    _grade(run, [FAILED_CHECK, ABSTAINED])
    write_json(run / "outputs" / "metrics.json", {"status": "ok"})
    rec, _ = read_trial(str(run), 1, "e1", "with_skill", 1)
    assert rec is not None and rec.passed is False and not rec.ungraded


def test_the_gate_counts_it_as_a_failure_not_an_invalid_measurement(tmp_path: Path) -> None:
    evals = {i: ("PPP", "FFF") for i in range(1, 7)}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_pass_rate": 0.5})
    # Every baseline trial: its typed check failed, the judge abstained on its other expectation.
    for run in it.glob("eval-*/without_skill/run-*"):
        _grade(run, [FAILED_CHECK, ABSTAINED])
    assert cli(["aggregate", str(it)]).exit_code == 0
    bench = json.loads((it / "benchmark.json").read_text())
    assert bench["summary"]["baseline"]["pass_rate"] == 0.0
    assert bench["summary"]["baseline"]["ungraded_trials"] == 0
    gate = cli(["gate", str(it), "--json"])
    assert json.loads(gate.output)["status"] != "INVALID", gate.output
