"""The run pipeline end to end with real files and real subprocesses: layout, what each arm
saw, resume, new iterations, kill-and-resume, timeouts, retries, gate exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from cli_runner import invoke as run_cli

from skillassay.executors import Executor, ExecutorSettings, TransientError, TrialRequest, TrialResult
from skillassay.models import Benchmark, Grading, Metrics, Timing
from skillassay.run.execute import RetryPolicy, call_with_retries


def run_echo(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    return run_cli("run", str(skill), "--executor", "echo", "--workspace", str(ws), *extra)


def run_dirs(iteration: Path) -> list[Path]:
    return sorted(p for p in iteration.glob("eval-*/*/run-*") if p.is_dir())


def test_layout_and_files_valid(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run_echo(example_skill, ws)
    assert code in (0, 1, 3), out
    it = ws / "iteration-1"
    runs = run_dirs(it)
    assert len(runs) == 8 * 2 * 3
    for run in runs:
        Grading.model_validate_json((run / "grading.json").read_text())
        Metrics.model_validate_json((run / "outputs" / "metrics.json").read_text())
        Timing.model_validate_json((run / "timing.json").read_text())
        assert (run / "outputs" / "answer.md").is_file()
        assert (run / "transcript.jsonl").is_file() and (run / "transcript.md").is_file()
        assert not list(run.rglob("*.tmp")), "no temp files left behind"
    bench = Benchmark.model_validate_json((it / "benchmark.json").read_text())
    # both spec shapes
    assert bench.runs and bench.run_summary and bench.metadata
    assert bench.summary and bench.per_eval and bench.thresholds_met is not None
    assert {r.configuration for r in bench.runs} == {"with_skill", "without_skill"}
    assert (it / "benchmark.md").read_text().startswith("# Benchmark: acme-vpn")
    assert (it / "skill-snapshot" / "SKILL.md").is_file()


def test_with_skill_arm_saw_skill_and_baseline_did_not(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    it = ws / "iteration-1"
    with_answer = (it / "eval-1-server-port/with_skill/run-1/outputs/answer.md").read_text()
    base_answer = (it / "eval-1-server-port/without_skill/run-1/outputs/answer.md").read_text()
    assert "Skill: acme-vpn" in with_answer and "port 4433" in with_answer
    assert "acme-vpn" not in base_answer and "4433" not in base_answer
    assert base_answer.strip() == "What port does the Acme VPN server use?"
    # same seed for both arms of the same trial: only the skill differs
    s1 = json.loads((it / "eval-1-server-port/with_skill/run-1/outputs/metrics.json").read_text())["seed"]
    s2 = json.loads((it / "eval-1-server-port/without_skill/run-1/outputs/metrics.json").read_text())["seed"]
    assert s1 == s2


def test_benchmark_figures_match_runs(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "2")
    bench = json.loads((ws / "iteration-1/benchmark.json").read_text())
    # echo answers with the skill text: evals 1-6 pass with the skill, fail without;
    # eval 7 (France) fails with the skill (no 'paris', and '4433' is dragged in); eval 8 fails both.
    per = {e["eval_id"]: e for e in bench["per_eval"]}
    for i in range(1, 7):
        assert per[i]["with_skill"]["pass_rate"] == 1.0, i
        assert per[i]["baseline"]["pass_rate"] == 0.0, i
    assert per[7]["with_skill"]["pass_rate"] == 0.0
    assert bench["summary"]["with_skill"]["pass_rate"] == pytest.approx(6 / 8, abs=1e-4)
    assert bench["summary"]["baseline"]["pass_rate"] == 0.0
    assert bench["summary"]["improvement_ratio"] is None  # baseline 0 -> undefined
    assert bench["run_summary"]["delta"]["pass_rate"].startswith("+")
    assert per[1]["with_skill"]["trials_completed"] == 2 and per[1]["trials"] == 2


def test_second_run_resumes_and_executes_nothing(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "2")
    before = {p: p.stat().st_mtime_ns for p in (ws / "iteration-1").rglob("transcript.jsonl")}
    code, out = run_echo(example_skill, ws, "--trials", "2")
    assert "resuming" in out and "0 to run" in out, out
    after = {p: p.stat().st_mtime_ns for p in (ws / "iteration-1").rglob("transcript.jsonl")}
    assert before == after
    assert not (ws / "iteration-2").exists()
    # more trials requested: a finished iteration is not extended in place (issue 34)
    code, out = run_echo(example_skill, ws, "--trials", "3")
    assert code == 2 and "--iteration 2" in out, out


def test_changed_skill_starts_next_iteration(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    md = example_skill / "SKILL.md"
    md.write_text(md.read_text().replace("port 4433", "port 5544"))
    code, out = run_echo(example_skill, ws, "--trials", "1")
    assert "skill changed since iteration 1" in out, out
    assert (ws / "iteration-2" / "benchmark.json").is_file()
    snap = (ws / "iteration-2" / "skill-snapshot" / "SKILL.md").read_text()
    assert "5544" in snap
    assert "4433" in (ws / "iteration-1" / "skill-snapshot" / "SKILL.md").read_text()


def test_changed_settings_start_next_iteration(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    code, out = run_echo(example_skill, ws, "--trials", "1", "--seed", "7")
    assert "settings changed since iteration 1" in out, out


@pytest.mark.parametrize("write_behind", ["0", "1"])
@pytest.mark.slow
def test_kill_mid_run_then_resume_grades_every_trial_once(example_skill: Path, tmp_path: Path, write_behind: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A real process killed with SIGKILL mid-run loses no finished trial and leaves no
    half-written JSON; the next run completes exactly the missing trials. With the write-behind
    child (store/writebehind.py) the kill takes it too: the trials still in its pipe have no
    grading.json and run again."""
    monkeypatch.setenv("SKILLASSAY_WRITE_BEHIND", write_behind)
    ws = tmp_path / "ws"
    cmd = [sys.executable, "-m", "skillassay", "run", str(example_skill), "--executor", "echo",
           "--workspace", str(ws), "--trials", "2", "-o", "delay_seconds=0.15"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    it = ws / "iteration-1"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(it.glob("eval-*/*/run-*/grading.json"))) < 5:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    graded_before = {p: p.stat().st_mtime_ns for p in it.glob("eval-*/*/run-*/grading.json")}
    assert 5 <= len(graded_before) < 32
    committed = {p.parent for p in graded_before}
    for p in it.rglob("*.json"):
        run = next((a for a in p.parents if a.name.startswith("run-")), None)
        if run is None or run in committed:
            json.loads(p.read_text())  # every committed trial's JSON, and every other file, is whole
    code, out = run_echo(example_skill, ws, "--trials", "2", "-o", "delay_seconds=0.15")
    assert f"{len(graded_before)} trials already graded" in out, out
    graded_after = {p: p.stat().st_mtime_ns for p in it.glob("eval-*/*/run-*/grading.json")}
    assert len(graded_after) == 32
    assert all(graded_after[p] == t for p, t in graded_before.items()), "finished trials were not re-run"
    assert not list(it.rglob("*.tmp"))
    for p in it.rglob("*.json"):
        json.loads(p.read_text())  # the trials the kill interrupted were run again: all whole now


def test_a_trial_without_its_grading_json_is_run_again_over_its_torn_files(example_skill: Path,
                                                                            tmp_path: Path) -> None:
    """A trial's files before grading.json are written in place (store/jsonio.write_before_marker):
    a kill mid-write can leave them torn, and only grading.json, written last and atomically,
    commits the trial. Such a folder must count as not run (never read, never reported) and be
    run again over whatever it left, every file whole afterwards."""
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    run = sorted((ws / "iteration-1").glob("eval-*/with_skill/run-1"))[0]
    (run / "grading.json").unlink()
    for rel in ("outputs/metrics.json", "timing.json", "transcript.jsonl", "transcript.md", "outputs/answer.md"):
        data = (run / rel).read_bytes()
        (run / rel).write_bytes(data[: len(data) // 2])  # what a kill between open and write leaves
    (run / "outputs" / "stray.txt").write_text("left by the killed attempt")
    code, out = run_cli("aggregate", str(ws / "iteration-1"))
    assert code == 0, out  # an uncommitted trial is not a broken file: it is a trial not yet run
    code, out = run_echo(example_skill, ws, "--trials", "1")
    assert code in (0, 1, 3) and "15 trials already graded, 1 to run" in out, out  # a gate verdict, not exit 2
    for rel in ("outputs/metrics.json", "timing.json", "grading.json"):
        json.loads((run / rel).read_text())
    assert [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
    assert not (run / "outputs" / "stray.txt").exists()
    assert Metrics.model_validate_json((run / "outputs" / "metrics.json").read_text()).status == "ok"


def test_user_notes_the_agent_leaves_are_summarised_and_input_copies_are_not(tmp_path: Path) -> None:
    """Grading takes user_notes.md from the listing the trial loop has just made of outputs/
    (no second look on disk): notes the agent wrote are summarised, and an input copy of the
    same name that the agent overwrote counts as the agent's (its bullets, here none)."""
    skill = tmp_path / "notes-skill"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: notes-skill\ndescription: Notes.\n---\nBody.\n")
    (skill / "evals" / "files" / "user_notes.md").write_text("## Uncertainties\n- an input, not a note\n")
    prompt = "Answer.\n\n## Uncertainties\n- the year is a guess\n\n## Needs review\n- the total\n"
    evals = [{"id": 1, "prompt": prompt, "expectations": [{"type": "contains", "value": "Answer"}]},
             {"id": 2, "prompt": "Plain.", "files": ["evals/files/user_notes.md"],
              "expectations": [{"type": "contains", "value": "Plain"}]}]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "notes-skill", "evals": evals}))
    ws = tmp_path / "ws"
    code, out = run_cli("run", str(skill), "--executor", "echo", "--workspace", str(ws), "--trials", "1",
                        "-o", "write_file=user_notes.md")
    assert code != 2, out
    it = ws / "iteration-1"
    [one] = it.glob("eval-1*/with_skill/run-1/grading.json")
    notes = json.loads(one.read_text())["user_notes_summary"]
    assert notes["uncertainties"] == ["the year is a guess"] and notes["needs_review"] == ["the total"], notes
    [two] = it.glob("eval-2*/with_skill/run-1/grading.json")
    # eval 2's agent overwrote the input copy with its answer (no bullets): changed, so kept, no notes
    assert json.loads(two.read_text())["user_notes_summary"] == {"uncertainties": [], "needs_review": [],
                                                                 "workarounds": []}


def test_concurrency_runs_trials_in_parallel(example_skill: Path, tmp_path: Path) -> None:
    """Judged from the trials' own timing.json stamps, not the command's wall time (which also
    counts imports, aggregation and the report, and made this test fail when run alone)."""
    ws = tmp_path / "a"
    run_echo(example_skill, ws, "--trials", "1", "-o", "delay_seconds=0.2", "--concurrency", "8")
    spans = []
    for path in ws.glob("iteration-1/eval-*/*/run-1/timing.json"):
        t = json.loads(path.read_text())
        spans.append((datetime.fromisoformat(t["executor_start"]), datetime.fromisoformat(t["executor_end"])))
    assert len(spans) == 16
    busy = sum((end - start).total_seconds() for start, end in spans)
    wall = (max(end for _, end in spans) - min(start for start, _ in spans)).total_seconds()
    assert busy >= 16 * 0.2 * 0.95, f"trials did not each take their 0.2 s: {busy:.2f}s in all"
    assert wall < busy * 0.5, f"16 trials of 0.2 s with 8 workers spanned {wall:.2f}s ({busy:.2f}s of trial time)"


def test_timeout_records_trial_as_failed(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run_echo(example_skill, ws, "--trials", "1", "-o", "delay_seconds=2", "--timeout", "0.05",
                         "--fail-fast", "0")  # every trial times out: measure them all
    m = json.loads((ws / "iteration-1/eval-1-server-port/with_skill/run-1/outputs/metrics.json").read_text())
    assert m["status"] == "timeout" and "timed out" in m["error"]
    bench = json.loads((ws / "iteration-1/benchmark.json").read_text())
    assert bench["per_eval"][0]["with_skill"]["trials_completed"] == 0
    assert any("unreliable" in n for n in bench["notes"])
    assert bench["summary"]["improvement_ratio"] is None


class Flaky(Executor):
    name = "flaky"
    handles_timeout = True

    def __init__(self, fails: int) -> None:
        super().__init__(ExecutorSettings())
        self.fails, self.calls = fails, 0

    def run(self, request: TrialRequest) -> TrialResult:
        self.calls += 1
        if self.calls <= self.fails:
            raise TransientError("429 rate limited")
        return TrialResult(final_text="ok")


def _request(tmp_path: Path) -> TrialRequest:
    return TrialRequest(prompt="p", workdir=tmp_path, skill=None, seed=1, settings=ExecutorSettings())


def test_transient_errors_are_retried(tmp_path: Path) -> None:
    ex = Flaky(fails=2)
    result, attempts = call_with_retries(ex, _request(tmp_path), RetryPolicy(attempts=3, wait_initial=0, wait_max=0))
    assert result.status == "ok" and attempts == 3


def test_retries_exhausted_is_a_failed_trial_not_a_crash(tmp_path: Path) -> None:
    ex = Flaky(fails=5)
    result, attempts = call_with_retries(ex, _request(tmp_path), RetryPolicy(attempts=2, wait_initial=0, wait_max=0))
    assert result.status == "error" and "after 2 attempts" in result.error and attempts == 2


def test_non_transient_errors_are_not_retried(tmp_path: Path) -> None:
    class Broken(Flaky):
        def run(self, request: TrialRequest) -> TrialResult:
            self.calls += 1
            raise ValueError("bad")

    ex = Broken(fails=0)
    result, attempts = call_with_retries(ex, _request(tmp_path), RetryPolicy(attempts=3, wait_initial=0))
    assert result.status == "error" and ex.calls == 1 and "ValueError" in result.error


def test_gate_fail_exit_code_names_threshold_and_evals(example_skill: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.9}}))
    code, out = run_echo(example_skill, tmp_path / "ws", "--config", str(cfg), "--point-estimate")
    assert code == 1, out
    assert "FAIL: min_pass_rate" in out and "eval-7 (capital-of-france)" in out
    # with the interval (0.75 over 8 evals, 95% CI reaching above 0.9) the honest call is "not yet"
    code, out = run_echo(example_skill, tmp_path / "ws", "--config", str(cfg))
    assert code == 3, out
    assert "INCONCLUSIVE: min_pass_rate" in out and "CI" in out
    code, out = run_echo(example_skill, tmp_path / "ws", "--config", str(cfg), "--strict")
    assert code == 1, out


def test_gate_pass_exit_code_zero(example_skill: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.75}}))
    code, out = run_echo(example_skill, tmp_path / "ws", "--config", str(cfg), "--point-estimate")
    assert code == 0, out
    assert "PASS: min_pass_rate" in out


@pytest.mark.parametrize("breakage, expected", [
    (lambda s: (s / "SKILL.md").unlink(), "SKILL.md: file not found"),
    (lambda s: (s / "evals/evals.json").write_text("{"), "evals.json: line 1 column 2: invalid JSON"),
    (lambda s: (s / "evals/evals.json").write_text('{"skill_name": "x", "evals": [{"id": "a", "prompt": "p"}]}'),
     "$.evals[0].id"),
    (lambda s: (s / "evals/evals.json").write_text(
        '{"skill_name": "x", "evals": [{"id": 1, "prompt": "p", "expectations": [{"type": "regex", "pattern": "("}]}]}'),
     "does not compile"),
    (lambda s: (s / "evals/evals.json").write_text(
        '{"skill_name": "x", "evals": [{"id": 1, "prompt": "p", "files": ["../../etc/passwd"]}]}'),
     "$.evals[0].files[0]"),
])
def test_bad_input_exit_2_names_file_and_field(example_skill: Path, tmp_path: Path, breakage, expected) -> None:
    breakage(example_skill)
    code, out = run_echo(example_skill, tmp_path / "ws")
    assert code == 2, out
    assert expected in " ".join(out.split()), out
    assert "Traceback" not in out


def test_unknown_executor_is_bad_input(example_skill: Path, tmp_path: Path) -> None:
    code, out = run_cli("run", str(example_skill), "--executor", "nope", "--workspace", str(tmp_path / "ws"))
    assert code == 2 and "unknown executor" in out


@pytest.mark.slow
def test_secrets_never_reach_the_workspace(example_skill: Path, tmp_path: Path, monkeypatch) -> None:
    """A real subprocess agent prints a secret from its environment (as a careless agent
    might); answer, transcripts, metrics and benchmark files carry [REDACTED] instead."""
    secret = "s3cr3t-value-0123456789abcdef"
    monkeypatch.setenv("DEMO_API_KEY", secret)
    argv = json.dumps([sys.executable, "-c", "import os; print('key is', os.environ['DEMO_API_KEY'])"])
    ws = tmp_path / "ws"
    code, out = run_cli("run", str(example_skill), "--executor", "command", "-o", f"argv={argv}",
                        "--trials", "1", "--workspace", str(ws), "--sandbox", "none")  # confined, it gets no key
    assert code in (0, 1, 3), out
    files = [p for p in ws.rglob("*") if p.is_file()]
    assert any("[REDACTED]" in p.read_text(errors="replace") for p in files if p.name == "answer.md")
    leaked = [p for p in files if secret in p.read_text(errors="replace")]
    assert not leaked, leaked


def test_changing_the_judge_starts_a_new_iteration(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    code, out = run_echo(example_skill, ws, "--trials", "1", "--judge", "none")
    assert "resuming" in out, out  # "none" is no judge: same fingerprint
    code, out = run_echo(example_skill, ws, "--trials", "1", "--judge", "local")
    assert "settings changed since iteration 1" in out, out


def test_a_hosted_judges_model_is_part_of_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --judge-model` (or SKILLASSAY_JUDGE_MODEL) picks what grades the runs, so another
    model must start another iteration; the embedded judge's identity stays what workspaces
    already recorded. The OpenAI client is built offline (no request is made here)."""
    from skillassay.grade.grader import make_grader
    from skillassay.run.engine import judge_identity

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.delenv("SKILLASSAY_JUDGE_MODEL", raising=False)
    assert judge_identity(make_grader("openai", "judge-a"), 1) == {
        "judge": "openai", "judge_samples": 1, "judge_model": "judge-a"}
    assert judge_identity(make_grader("openai", "judge-b"), 1)["judge_model"] == "judge-b"
    monkeypatch.setenv("SKILLASSAY_JUDGE_MODEL", "judge-from-env")
    assert judge_identity(make_grader("openai", None), 3) == {
        "judge": "openai", "judge_samples": 3, "judge_model": "judge-from-env"}
    assert judge_identity(make_grader("local", None), 1) == {"judge": "local", "judge_samples": 1}
    assert judge_identity(make_grader(None, None), 1) == {}


def test_explicit_iteration_resumes_only_the_same_version(example_skill: Path, tmp_path: Path) -> None:
    """--iteration N on an iteration run with another skill would mix two versions' trials in
    one set of figures: refused (exit 2, saying what changed); the same version resumes."""
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, "--trials", "1")
    code, out = run_echo(example_skill, ws, "--trials", "1", "--iteration", "1")
    assert "iteration 1 requested: resuming it" in out and "0 trials run" in out, out
    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nOne more fact.\n")
    code, out = run_echo(example_skill, ws, "--trials", "1", "--iteration", "1")
    assert code == 2, out
    flat = " ".join(out.split())
    assert "iteration 1 was run with another skill" in flat and "starts iteration 2" in flat, out
    assert "Traceback" not in out
    code, out = run_echo(example_skill, ws, "--trials", "1", "--iteration", "5")
    assert code in (0, 1, 3) and (ws / "iteration-5" / "benchmark.json").is_file(), out
