"""`skillassay grade`: re-grading a finished iteration after an expectation edit, without
executing a trial, with the judge's cache sparing unchanged pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.run.engine import RunRequest, run_benchmark
from skillassay.run.execute import RetryPolicy
from tests.fake_openai_api import FakeOpenAI, grading_reply, schema_of

PLAIN = "The answer names the VPN port"
ECHOED = "Acme VPN server"  # in both arms' echo answers, so the judge's quote is found in each


def write_evals(path: Path, port_value: str, plains: list[str]) -> None:
    path.write_text(json.dumps({"skill_name": "acme-vpn", "evals": [
        {"id": 1, "name": "server-port", "prompt": "What port does the Acme VPN server use?",
         "expectations": [{"type": "contains", "value": port_value}, *plains]},
        {"id": 2, "name": "protocol", "prompt": "Which protocol does the Acme VPN use?",
         "expectations": [{"type": "icontains", "value": "wireguard"}]},
    ]}), encoding="utf-8")


@pytest.fixture
def finished(example_skill: Path, tmp_path: Path) -> tuple[Path, Path]:
    """An iteration run with the echo executor (no judge, typed assertions only), then a plain
    expectation added to the eval set: `grade` has something new for the judge."""
    evals = example_skill / "evals" / "evals.json"
    write_evals(evals, "4433", [])
    ws = tmp_path / "ws"
    run_benchmark(RunRequest(skill_dir=example_skill, evals_path=evals, executor="echo", workspace=ws,
                             trials=1, retry=RetryPolicy(attempts=1)))
    write_evals(evals, "4433", [PLAIN])
    return ws, evals


def run_dirs(ws: Path) -> list[Path]:
    return sorted(ws.glob("iteration-1/eval-*/*/run-*"))


def executor_files_state(ws: Path) -> dict[str, int]:
    """mtimes of what only an executor writes: a re-grade must leave them alone."""
    out = {}
    for run in run_dirs(ws):
        for f in ("transcript.md", "transcript.jsonl", "outputs/answer.md", "outputs/metrics.json"):
            out[str(run / f)] = (run / f).stat().st_mtime_ns
    return out


def grading(ws: Path, eval_slug: str, config: str = "with_skill") -> dict:
    return json.loads((ws / "iteration-1" / eval_slug / config / "run-1" / "grading.json").read_text())


@pytest.fixture
def openai_env(monkeypatch):
    fakes = []

    def start(script):
        fake = FakeOpenAI(script).start()
        fakes.append(fake)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        return fake

    yield start
    for fake in fakes:
        fake.stop()


def grade_cli(*args: str) -> str:
    result = cli(["grade", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_regrade_after_edit_without_executing_and_with_cache(finished, openai_env):
    ws, evals = finished
    before = executor_files_state(ws)
    assert len(grading(ws, "eval-1-server-port")["expectations"]) == 1  # before the edit
    bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())

    # 1. Judge switched on: the two runs of eval 1 (with/without skill) are judged once each.
    fake = openai_env([grading_reply(True, quote=ECHOED), grading_reply(True, quote=ECHOED)])
    out = grade_cli(str(ws), "--judge", "openai", "--judge-model", "judge-test",
                   "--allow-weak-judge")
    fake.assert_clean()
    assert "re-graded 4 runs (2 expectations judged, 0 from cache)" in out
    g = grading(ws, "eval-1-server-port")
    assert [e["passed"] for e in g["expectations"]] == [True, True]
    assert g["judge"]["model"] == "judge-test" and g["claims"][0]["claim"] == "The port is 4433"
    assert g["timing"]["grader_duration_seconds"] is not None
    timing = json.loads((ws / "iteration-1/eval-1-server-port/with_skill/run-1/timing.json").read_text())
    assert {"grader_start", "grader_end", "grader_duration_seconds", "executor_start"} <= set(timing)

    # 2. Nothing changed: everything comes from the cache, no request reaches the API.
    fake = openai_env([])
    out = grade_cli(str(ws / "iteration-1"), "--judge", "openai", "--judge-model", "judge-test",
                   "--allow-weak-judge")
    fake.assert_clean()
    assert "(0 expectations judged, 2 from cache)" in out
    assert grading(ws, "eval-1-server-port")["expectations"][1]["judge_cached"] is True

    # 3. Edit: the typed value changes and a second plain expectation is added. Only the new
    #    plain one is judged; the typed one is re-checked against the unchanged outputs.
    write_evals(evals, "9999", [PLAIN, "The answer is polite"])
    fake = openai_env([grading_reply(False, "No courtesy words", quote=""), grading_reply(False, "No courtesy words", quote="")])
    out = grade_cli(str(ws), "--judge", "openai", "--judge-model", "judge-test",
                   "--allow-weak-judge")
    fake.assert_clean()
    assert "(2 expectations judged, 2 from cache)" in out
    for body in fake.requests:
        assert list(schema_of(body)["properties"]["expectations"]["properties"]) == ["E1"]
        user = body["messages"][1]["content"]
        assert "E1: The answer is polite" in user and PLAIN not in user
    g = grading(ws, "eval-1-server-port")
    assert [e["text"] for e in g["expectations"]] == ["The output contains '9999'", PLAIN, "The answer is polite"]
    assert [e["passed"] for e in g["expectations"]] == [False, True, False]
    assert g["summary"] == {"passed": 1, "failed": 2, "total": 3, "pass_rate": 0.3333}
    meta = json.loads((ws / "iteration-1/eval-1-server-port/eval_metadata.json").read_text())
    assert meta["expectations"][0]["value"] == "9999"

    # benchmark.json was rebuilt from the new gradings; no trial was executed.
    new_bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert new_bench["runs"] != bench["runs"]
    port_run = next(r for r in new_bench["runs"] if r["eval_id"] == 1 and r["configuration"] == "with_skill")
    assert port_run["result"]["passed"] == 1 and port_run["result"]["total"] == 3
    assert executor_files_state(ws) == before
    cache = json.loads((ws / "iteration-1/eval-1-server-port/with_skill/run-1/grading_cache.json").read_text())
    assert len(cache["entries"]) == 2  # stale keys are dropped


def test_judge_failure_is_not_cached(finished, openai_env):
    ws, _ = finished
    fake = openai_env(["{bad"] * 6)
    grade_cli(str(ws), "--judge", "openai", "--judge-model", "judge-test",
                   "--allow-weak-judge")
    fake.assert_clean()
    assert grading(ws, "eval-1-server-port")["expectations"][1]["passed"] is None
    fake = openai_env([grading_reply(True, quote=ECHOED), grading_reply(True, quote=ECHOED)])
    out = grade_cli(str(ws), "--judge", "openai", "--judge-model", "judge-test",
                   "--allow-weak-judge")
    fake.assert_clean()
    assert "(2 expectations judged, 0 from cache)" in out


def test_bad_target_and_bad_evals_exit_2(tmp_path, finished):
    ws, evals = finished
    result = cli(["grade", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "iteration" in result.output
    evals.write_text(json.dumps({"skill_name": "acme-vpn", "evals": [
        {"id": 1, "prompt": "p", "expectations": [{"type": "regex", "pattern": "("}]},
        {"id": 2, "prompt": "q", "expectations": []}]}), encoding="utf-8")
    result = cli(["grade", str(ws)])
    assert result.exit_code == 2 and "$.evals[?(@.id==1)].expectations[0]" in result.output and "'regex'" in result.output


def test_run_wires_the_judge(example_skill, tmp_path, openai_env):
    evals = example_skill / "evals" / "evals.json"
    write_evals(evals, "4433", [PLAIN])
    fake = openai_env([grading_reply(True, quote=ECHOED), grading_reply(True, quote=ECHOED)])
    result = cli(["run", str(example_skill), "--evals", str(evals), "--executor", "echo",
                  "--workspace", str(tmp_path / "ws"), "--trials", "1", "--judge", "openai",
                  "--allow-weak-judge"])
    fake.assert_clean()
    assert result.exit_code in (0, 1, 3), result.output
    g = grading(tmp_path / "ws", "eval-1-server-port")
    assert g["expectations"][1]["passed"] is True and g["judge"]["judge"] == "openai"


def test_regrade_gates_with_the_config_the_run_used(example_skill: Path, tmp_path: Path):
    """`run --config FILE` records FILE in iteration.json and `gate`/`report` read it; `grade`
    used to rebuild benchmark.json's gates from the config beside the eval set instead, so the
    file said one verdict and `skillassay gate` another."""
    evals = example_skill / "evals" / "evals.json"
    write_evals(evals, "4433", [])
    (example_skill / "evals" / "benchmark_config.json").write_text(
        json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.99}}), encoding="utf-8")
    chosen = tmp_path / "loose.json"
    chosen.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"max_avg_duration_seconds": 3600}}),
                      encoding="utf-8")
    ws = tmp_path / "ws"
    run_benchmark(RunRequest(skill_dir=example_skill, evals_path=evals, executor="echo", workspace=ws,
                             trials=1, config_path=chosen, retry=RetryPolicy(attempts=1)))
    before = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    result = cli(["grade", str(ws / "iteration-1")])
    assert result.exit_code == 0, result.output
    after = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert before["estimate_meets"] == {"max_avg_duration_seconds": True}
    assert set(before["thresholds_met"]) == {"max_avg_duration_seconds"}
    assert after["thresholds_met"] == before["thresholds_met"] and after["estimate_meets"] == before["estimate_meets"]
