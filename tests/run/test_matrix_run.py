"""A matrix run (issue 37, run/matrix.py) with real executors: `echo` (the skill's text is in
its answer, so the skill helps) and a `command` agent (a real process that never reads the
skill, so the skill does nothing). One iteration, each agent a skill-creator iteration of its
own, all trials in one queue, resumed and reused per agent; matrix.json and report.md find the
agent where the skill does not help."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke

from skillassay.models.matrix import MatrixSummary

EVALS = 6  # the fewest where the heterogeneity test can reach 0.05 with two agents (2 / 2^6)
COMMAND_AGENT = {"name": "deaf", "executor": "command", "options": {"argv": ["echo", "no idea"]}}


def make_skill(root: Path, agents: list[dict[str, Any]], evals: int = EVALS) -> Path:
    skill = root / "magic"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: magic\ndescription: Says the word. Use when asked anything.\n---\n"
                                    "Always answer MAGICWORD.\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "magic", "evals": [
        {"id": i, "prompt": f"question {i}", "expectations": [{"type": "contains", "value": "MAGICWORD"}]}
        for i in range(1, evals + 1)]}), encoding="utf-8")
    (skill / "evals" / "benchmark_config.json").write_text(json.dumps({
        "trials_per_eval": 1, "sandbox": "none", "thresholds": {"min_pass_rate": 0.5}, "agents": agents}),
        encoding="utf-8")
    return skill


def read_like_skill_creator(iteration: Path) -> dict[str, list[dict[str, Any]]]:
    """What skill-creator's aggregate_benchmark.py takes from an iteration folder (its own
    globbing, written here from its documented layout): eval-* folders, eval_id from their
    eval_metadata.json, every sub-folder with run-N folders a configuration, N an integer,
    and each run's grading.json summary and expectations (text, passed, evidence)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    eval_dirs = sorted(iteration.glob("eval-*"))
    assert eval_dirs, f"no eval-* folder in {iteration}"
    for eval_dir in eval_dirs:
        eval_id = json.loads((eval_dir / "eval_metadata.json").read_text())["eval_id"]
        for config in sorted(d for d in eval_dir.iterdir() if d.is_dir()):
            for run in sorted(config.glob("run-*")):
                grading = json.loads((run / "grading.json").read_text())
                summary = grading["summary"]
                assert all({"text", "passed", "evidence"} <= set(e) for e in grading["expectations"])
                runs.setdefault(config.name, []).append({
                    "eval_id": eval_id, "run": int(run.name.split("-")[1]), "pass_rate": summary["pass_rate"],
                    "total": summary["total"]})
    return runs


def grading_stamps(iteration: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in iteration.glob("agents/*/eval-*/*/run-*/grading.json")}


@pytest.mark.slow
def test_matrix_run_finds_the_agent_the_skill_does_not_help(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, [{"name": "echo", "executor": "echo"}, COMMAND_AGENT])
    ws = tmp_path / "ws"
    result = invoke("run", str(skill), "--workspace", str(ws))
    assert result.exit_code == 1, result.output  # the matrix FAILs: the skill does nothing on `deaf`
    it = ws / "iteration-1"
    assert "echo: with skill 100%, without 0%" in result.flat and ": PASS" in result.flat
    assert "deaf: with skill 0%, without 0%" in result.flat and "matrix: FAIL" in result.flat, result.output
    assert "in one queue" in result.flat

    # one iteration: the matrix on top, each agent a complete skill-creator iteration
    assert not (it / "benchmark.json").exists()
    record = json.loads((it / "iteration.json").read_text())
    assert [(a["name"], a["executor"], a["required"]) for a in record["agents"]] == [
        ("echo", "echo", True), ("deaf", "command", True)]
    assert "argv" not in json.dumps(record["agents"])  # options only as a hash
    for name, with_rate in (("echo", 1.0), ("deaf", 0.0)):
        folder = it / "agents" / name
        for file in ("benchmark.json", "benchmark.md", "iteration.json", "report.md"):
            assert (folder / file).is_file(), folder / file
        runs = read_like_skill_creator(folder)
        assert sorted(runs) == ["with_skill", "without_skill"]
        assert len(runs["with_skill"]) == len(runs["without_skill"]) == EVALS
        assert {r["pass_rate"] for r in runs["with_skill"]} == {with_rate}
        assert {r["pass_rate"] for r in runs["without_skill"]} == {0.0}

    summary = MatrixSummary.model_validate_json((it / "matrix.json").read_text())
    verdicts = {a.name: a.verdict for a in summary.agents}
    assert verdicts == {"echo": "PASS", "deaf": "FAIL"} and summary.verdict == "FAIL"
    assert summary.heterogeneity.called and summary.heterogeneity.p_value is not None
    assert summary.heterogeneity.p_value <= 0.05
    head = "\n".join((it / "report.md").read_text().splitlines()[:5])
    assert "FAIL" in head and "deaf" in head, head

    # the same command again resumes the iteration and runs nothing
    stamps = grading_stamps(it)
    assert len(stamps) == 2 * 2 * EVALS
    again = invoke("run", str(skill), "--workspace", str(ws))
    assert again.exit_code == 1, again.output
    assert f"{len(stamps)} trials already graded, 0 to run" in again.flat, again.output
    assert grading_stamps(it) == stamps

    # from disk: aggregate, report and gate give the same matrix verdict
    assert invoke("gate", str(it)).exit_code == 1
    assert invoke("gate", str(ws)).exit_code == 1  # a workspace: its latest iteration
    gated = invoke("gate", str(it), "--json")
    assert json.loads(gated.stdout)["verdict"] == "FAIL"
    assert invoke("aggregate", str(it)).exit_code == 1
    assert invoke("report", str(it)).exit_code == 0
    assert MatrixSummary.model_validate_json((it / "matrix.json").read_text()).verdict == "FAIL"


@pytest.mark.slow
def test_a_changed_agent_list_reuses_the_unchanged_agents_runs(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, [{"name": "echo", "executor": "echo"}, COMMAND_AGENT], evals=2)
    ws = tmp_path / "ws"
    assert invoke("run", str(skill), "--workspace", str(ws)).exit_code in (1, 3)
    config = tmp_path / "three.json"  # outside the skill folder: the skill is unchanged
    data = json.loads((skill / "evals" / "benchmark_config.json").read_text())
    data["agents"].append({"name": "late", "executor": "echo", "required": False})
    config.write_text(json.dumps(data))
    result = invoke("run", str(skill), "--workspace", str(ws), "--config", str(config))
    assert "agents changed since iteration 1" in result.flat, result.output
    assert "8 trials already graded, 4 to run" in result.flat, result.output  # only `late` runs
    it2 = ws / "iteration-2"
    assert (it2 / "agents" / "echo" / "reused_with_skill_from_agent.json").is_file()
    summary = MatrixSummary.model_validate_json((it2 / "matrix.json").read_text())
    assert [(a.name, a.required) for a in summary.agents] == [("echo", True), ("deaf", True), ("late", False)]


@pytest.mark.slow
def test_one_agent_is_the_run_it_always_was(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, [], evals=1)
    flat = invoke("run", str(skill), "--workspace", str(tmp_path / "a"), "--executor", "echo")
    one = invoke("run", str(skill), "--workspace", str(tmp_path / "b"), "--agent", "echo")
    assert flat.exit_code == one.exit_code
    files = [sorted(str(p.relative_to(root)) for p in root.rglob("*") if "skill-snapshot" not in p.parts)
             for root in (tmp_path / "a", tmp_path / "b")]
    assert files[0] == files[1] and "iteration-1/benchmark.json" in files[0]
    assert not (tmp_path / "b" / "iteration-1" / "agents").exists()
    lines = [[line for line in r.stderr.splitlines() if "pass rate with skill" in line] for r in (flat, one)]
    assert lines[0] == lines[1] and lines[0]


def test_options_a_matrix_run_does_not_take_are_refused_before_it_runs(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, [{"name": "echo", "executor": "echo"}, COMMAND_AGENT], evals=1)
    for extra in (["--adaptive"], ["--max-cost", "1"], ["--dry-run"], ["--shard", "1/2"]):
        result = invoke("run", str(skill), "--workspace", str(tmp_path / "ws"), *extra)
        assert result.exit_code == 2 and not result.crashed, (extra, result.output)
        assert "several agents" in result.flat, result.output
    assert not (tmp_path / "ws" / "iteration-1").exists()
