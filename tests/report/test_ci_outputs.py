"""CI outputs: JUnit XML validated against a JUnit schema (tests/fixtures/junit/junit.xsd) and
the GitHub job summary as written, from real `skillassay run --executor echo` workspaces."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import repo_paths
import xmlschema
from cli_runner import invoke

from skillassay.analyze.gate import GateResult, ThresholdResult
from skillassay.report.ci_outputs import append_step_summary, github_step_summary, junit_xml, md_cell, write_junit
from skillassay.workflows.gate_iteration import check_iteration

EXAMPLE = repo_paths.REPO / "examples" / "acme-vpn"
SCHEMA = xmlschema.XMLSchema(repo_paths.FIXTURES / "junit" / "junit.xsd")


def cli(*args: str, env: dict[str, str] | None = None) -> int:
    result = invoke(*args, env=env)
    assert not result.crashed, result.output
    return result.exit_code


@pytest.fixture(scope="module")
def iteration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ci")
    skill = root / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    config = skill / "evals" / "benchmark_config.json"  # a threshold the echo answers leave undecided
    config.write_text(config.read_text().replace('"min_pass_rate": 0.3', '"min_pass_rate": 0.5'))
    junit = root / "run.xml"
    code = cli("run", str(skill), "--executor", "echo", "--workspace", str(root / "ws"), "--trials", "2",
               "--junit", str(junit))
    assert code == 3  # 75% with skill at 2 trials: min_pass_rate's interval straddles 0.5
    assert junit.is_file()
    return root / "ws" / "iteration-1"


def cases(xml: str) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in ET.fromstring(xml.encode()).iter("testcase")}


def test_junit_from_run_is_valid_and_complete(iteration: Path) -> None:
    text = (iteration.parents[1] / "run.xml").read_text()
    SCHEMA.validate(text)
    found = cases(text)
    assert {f"eval-{i}" for i in range(1, 9)} <= {n.split(" ")[0] for n in found}
    assert {"min_pass_rate", "max_avg_tokens", "max_avg_duration_seconds", "min_improvement_ratio"} <= set(found)
    out = found["eval-1 (server-port)"].findtext("system-out") or ""
    assert "with skill 2/2 trials passed (100%, 95% CI" in out and "baseline 0/2" in out
    gate = check_iteration(iteration).result
    inconclusive = {r.key for r in gate.thresholds if r.status == "INCONCLUSIVE"}
    assert inconclusive == {"min_pass_rate"}
    # a 0% baseline makes the ratio unbounded, not undecidable: its lower bound clears 1.5
    assert {r.key: r.status for r in gate.thresholds}["min_improvement_ratio"] == "PASS"
    for r in gate.thresholds:  # inconclusive is skipped, not failed; the message is the gate's line
        assert (found[r.key].find("skipped") is not None) == (r.key in inconclusive)
        assert found[r.key].find("failure") is None
        assert found[r.key].findtext("system-out") == r.line()
    root = ET.fromstring(text.encode())
    assert root.get("tests") == str(len(found)) and root.get("skipped") == str(len(inconclusive))
    assert root.get("failures") == "0"


def test_failed_threshold_fails_its_testcase_and_the_evals_it_names(tmp_path: Path) -> None:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    config = tmp_path / "tight.json"
    config.write_text(json.dumps({"trials_per_eval": 2, "thresholds": {"max_avg_tokens": 50}}))
    junit = tmp_path / "run.xml"
    assert cli("run", str(skill), "--executor", "echo", "--workspace", str(tmp_path / "ws"), "--config", str(config),
               "--junit", str(junit)) == 1  # ~180 tokens per answer, every trial: decisively over 50
    text = junit.read_text()
    SCHEMA.validate(text)
    found = cases(text)
    failure = found["max_avg_tokens"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("FAIL: max_avg_tokens")
    eval1 = found["eval-1 (server-port)"].find("failure")
    assert eval1 is not None
    assert eval1.get("message", "").startswith("named by fail threshold max_avg_tokens")
    assert "with skill 2/2 trials passed (100%, 95% CI 34%..100%)" in eval1.get("message", "")
    assert ET.fromstring(text.encode()).get("failures") == str(sum(c.find("failure") is not None for c in found.values()))


def test_regression_status_and_gate(iteration: Path) -> None:
    loaded = check_iteration(iteration)
    comparison = {"per_eval": [{"eval_id": 1, "eval_name": "server-port", "counts": "2/2 -> 0/2", "label": "regressed",
                                "raw_flip": "PASS->FAIL"},
                               {"eval_id": 2, "eval_name": "protocol", "counts": "2/2 -> 1/2", "label": "possible regression"}],
                  "regressed": [1], "possible_regressions": [2]}
    from skillassay.analyze.gate import evaluate
    from skillassay.models import Thresholds

    gate = evaluate(loaded.benchmark, Thresholds(min_pass_rate=0.5), comparison=comparison)
    assert gate.status == "FAIL"
    text = junit_xml(loaded.benchmark, gate, comparison)
    SCHEMA.validate(text)
    found = cases(text)
    msg = found["eval-1 (server-port)"].find("failure").get("message", "")  # type: ignore[union-attr]
    assert msg.startswith("regressed against the previous iteration") and "vs previous iteration: regressed" in msg
    assert found["eval-2 (protocol)"].find("failure") is None
    assert "possible regression" in (found["eval-2 (protocol)"].findtext("system-out") or "")
    assert found["no_regressions"].find("failure") is not None
    summary = github_step_summary(loaded.benchmark, gate, comparison)
    assert "| eval-1 (server-port) |" in summary and "❌ regressed against the previous iteration" in summary
    assert "⚠️ possible regression" in summary


def test_hostile_names_stay_well_formed() -> None:
    from skillassay.models import Benchmark

    evil = "x\x00\x1b[31m]]><!-- </testcase><failure> & \"'\ud800"
    bench = Benchmark.model_validate({
        "skill_name": evil, "iteration": 1,
        "summary": {"total_evals": 1, "with_skill": {"pass_rate": 0.5}, "baseline": {"pass_rate": 0.0}},
        "per_eval": [{"eval_id": 1, "eval_name": evil, "with_skill": {"pass_rate": 0.5, "trials_completed": 2},
                      "baseline": {"pass_rate": 0.0, "trials_completed": 2}, "trials": 2}],
    })
    gate = GateResult("FAIL", 1, [ThresholdResult("min_pass_rate", 0.9, 0.5, "FAIL", None, [f"eval-1 ({evil})"], evil)])
    text = junit_xml(bench, gate)
    SCHEMA.validate(text)
    found = cases(text)
    assert len(found) == 2 and all("</testcase>" in n for n in found if n.startswith("eval-1"))
    assert found[next(n for n in found if n.startswith("eval-1"))].find("failure") is not None
    summary = github_step_summary(bench, gate)
    assert "<!--" not in summary and "</testcase>" not in summary and "\\<\\!--" in summary


def test_md_cell_keeps_tables_intact() -> None:
    assert md_cell("a | b\nc <b>") == "a \\| b c \\<b\\>"


def test_step_summary_appended_only_when_set(iteration: Path, tmp_path: Path) -> None:
    loaded = check_iteration(iteration)
    assert append_step_summary("x", env={}) is None
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(target)}
    assert cli("gate", str(iteration), env=env) == 3
    written = target.read_text()
    assert written.startswith("earlier step\n")  # appended, never overwritten
    assert written[len("earlier step\n"):] == github_step_summary(loaded.benchmark, loaded.result, loaded.comparison)
    assert "## ⚠️ skillassay: acme-vpn, iteration 1: INCONCLUSIVE" in written
    assert "| Pass rate | 75% | 0% |" in written
    undecided = next(t for t in loaded.result.thresholds if t.status == "INCONCLUSIVE")
    assert f"- ⚠️ {md_cell(undecided.line())}" in written
    assert "| eval-1 (server-port) | 2/2 trials passed (100%, 95% CI 34%..100%) | 0/2 trials passed (0%, 95% CI 0%..66%) | - | ✅ |" in written


def test_gate_command_exit_codes_and_junit(iteration: Path, tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    assert cli("gate", str(iteration), "--junit", str(junit)) == 3
    SCHEMA.validate(junit.read_text())
    assert cli("gate", str(iteration), "--strict") == 1
    lenient = tmp_path / "lenient.json"
    lenient.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.2}}))
    assert cli("gate", str(iteration), "--config", str(lenient)) == 0  # whole interval above 0.2
    assert cli("gate", str(tmp_path / "missing")) == 2


def test_write_junit_is_atomic_and_returns_path(iteration: Path, tmp_path: Path) -> None:
    loaded = check_iteration(iteration)
    path = write_junit(tmp_path / "out.xml", loaded.benchmark, loaded.result)
    assert path.read_text().startswith("<?xml") and not list(tmp_path.glob(".out.xml.*"))


def test_documented_workflow_is_valid_yaml_and_gates_on_every_exit_code() -> None:
    import yaml

    doc = (repo_paths.REPO / "docs" / "ci.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    workflow = yaml.safe_load(block)
    steps = workflow["jobs"]["benchmark"]["steps"]
    run_step = next(s for s in steps if s.get("id") == "bench")
    assert "skillassay run" in run_step["run"] and "--junit" in run_step["run"]
    gate = next(s for s in steps if s.get("name") == "Gate")["run"]
    for code in ("0)", "1)", "2)", "3)"):
        assert code in gate
    assert "pull_request" in workflow[True]  # PyYAML reads the bare key `on` as True


def test_invalid_or_ungated_measurement_is_never_green(tmp_path: Path) -> None:
    from iteration_factory import write_iteration

    broken = write_iteration(tmp_path / "a", 1, {1: ("EEE", "FFF"), 2: ("EEE", "FFF")})
    check = check_iteration(broken)
    text = junit_xml(check.benchmark, check.result)
    SCHEMA.validate(text)
    failure = cases(text)["measurement"].find("failure")
    assert failure is not None and "all with_skill trials errored" in failure.get("message", "")
    summary = github_step_summary(check.benchmark, check.result)
    assert summary.startswith("## ⛔ skillassay: synthetic, iteration 1: INVALID") and "✅" not in summary.split("###")[0]

    ungated = write_iteration(tmp_path / "b", 1, {1: ("FFF", "FFF"), 2: ("FFF", "FFF")})
    check = check_iteration(ungated)
    text = junit_xml(check.benchmark, check.result)
    SCHEMA.validate(text)
    skipped = cases(text)["gate"].find("skipped")
    assert skipped is not None and "nothing was gated" in skipped.get("message", "")
    summary = github_step_summary(check.benchmark, check.result)
    assert summary.startswith("## ➖ skillassay: synthetic, iteration 1: NOT_GATED") and "nothing was gated" in summary
