"""Stopping a run from outside (issue 40): Ctrl-C, a second Ctrl-C, SIGTERM and SIGHUP, sent to a
real `skillassay run` process whose trials are real `sh` processes that sleep.

Ctrl-C is sent as a terminal sends it, to the run's whole process group (the run is started in a
session of its own); SIGTERM and SIGHUP to the run's process alone, as a supervisor sends them.
Each trial's shell records its pid, so the test can tell whether any agent outlived the run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import repo_paths
from process_support import alive, interrupt_when, recorded_pids, wait_for

REPO = repo_paths.REPO
EVALS = 4  # eval 1 is quick, the others sleep while the slow flag exists
TRIALS = 2  # per eval and arm: 16 trials in all, 4 of them quick


def make_skill(root: Path) -> Path:
    skill = root / "sleeper"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: sleeper\ndescription: Sleeps. Use when asked to sleep.\n---\n"
                                    "Sleep, then say hello.\n", encoding="utf-8")
    evals = [{"id": i, "prompt": "quick" if i == 1 else f"slow-{i}",
              "expectations": [{"type": "contains", "value": "hello"}]} for i in range(1, EVALS + 1)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "sleeper", "evals": evals}),
                                                encoding="utf-8")
    return skill


def command_argv(tmp_path: Path, trap_term: bool = False) -> list[str]:
    """sh records its pid, then sleeps while tmp_path/slow exists unless its prompt is `quick`.
    With trap_term it ignores SIGTERM (an agent that will not stop when asked)."""
    pids, slow = tmp_path / "pids", tmp_path / "slow"
    trap = "trap '' TERM; " if trap_term else ""
    script = (f"{trap}echo $$ >> {pids}; "
              f"if [ \"$1\" != quick ] && [ -e {slow} ]; then sleep 60; fi; echo hello")
    return ["sh", "-c", script, "sh", "{prompt}"]


def run_argv(skill: Path, ws: Path, argv: list[str], concurrency: int = 4) -> list[str]:
    return [sys.executable, "-m", "skillassay", "run", str(skill), "--workspace", str(ws), "--executor", "command",
            "-o", "argv=" + json.dumps(argv), "--trials", str(TRIALS), "--concurrency", str(concurrency),
            "--fail-fast", "0",
            # the agents record their host pids and read a flag outside their work folder: no sandbox
            "--sandbox", "none"]


def start(argv: list[str], tmp_path: Path, write_behind: str = "") -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CI": "", "SKILLASSAY_WRITE_BEHIND": write_behind}
    return subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def graded(ws: Path) -> list[Path]:
    return sorted(ws.glob("iteration-1/eval-*/*/run-*/grading.json"))


def sleeping_started(tmp_path: Path, count: int) -> bool:
    return len(recorded_pids(tmp_path)) >= 4 + count


@pytest.fixture
def slow_run(tmp_path: Path):
    (tmp_path / "slow").touch()
    skill = make_skill(tmp_path / "skills")
    yield skill, tmp_path / "ws"
    for pid in recorded_pids(tmp_path):  # whatever a failing run left behind: never outlives the test
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


@pytest.mark.parametrize("write_behind", ["0", "1"])  # 1: the trial files' writer process gets the Ctrl-C too
def test_ctrl_c_stops_a_concurrent_run_keeps_what_finished_and_resumes(tmp_path: Path, slow_run,
                                                                       write_behind: str) -> None:
    skill, ws = slow_run
    argv = run_argv(skill, ws, command_argv(tmp_path))
    proc = start(argv, tmp_path, write_behind)
    took, err = interrupt_when(lambda: len(graded(ws)) == 4 and sleeping_started(tmp_path, 4), proc)
    assert took < 5, f"Ctrl-C took {took:.1f}s to stop the run"
    assert proc.returncode == 130, err
    assert "resume" in err and "interrupted" in err, err
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == [], "an agent outlived the run"
    bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert len(bench["runs"]) == len(graded(ws)) >= 4
    assert any("interrupted" in n for n in bench.get("notes", [])), bench.get("notes")
    started = len(recorded_pids(tmp_path))
    assert started < 4 * EVALS, "every queued trial still ran"

    (tmp_path / "slow").unlink()  # the same command again resumes the same iteration and finishes it
    proc = start(argv, tmp_path, write_behind)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert not (ws / "iteration-2").exists(), err
    assert len(graded(ws)) == 2 * TRIALS * EVALS
    assert len(json.loads((ws / "iteration-1" / "benchmark.json").read_text())["runs"]) == 2 * TRIALS * EVALS


def test_a_second_ctrl_c_ends_the_run_at_once(tmp_path: Path, slow_run) -> None:
    """The trials ignore SIGTERM, so the first Ctrl-C waits out their grace period; the second
    kills them and ends the run without waiting."""
    skill, ws = slow_run
    proc = start(run_argv(skill, ws, command_argv(tmp_path, trap_term=True)), tmp_path)
    took, _ = interrupt_when(lambda: len(graded(ws)) == 4 and sleeping_started(tmp_path, 4), proc, presses=2)
    assert took < 1.5, f"the second Ctrl-C took {took:.1f}s"
    assert proc.returncode == 130
    time.sleep(0.2)
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == [], "an agent outlived the run"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_agents_before_the_run(tmp_path: Path, slow_run, sig: signal.Signals) -> None:
    skill, ws = slow_run
    proc = start(run_argv(skill, ws, command_argv(tmp_path)), tmp_path)
    try:
        wait_for(lambda: sleeping_started(tmp_path, 4), 120, proc)
        proc.send_signal(sig)  # the run's own process only, as a supervisor does
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + sig, err
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == [], "an agent outlived the run"


def test_ctrl_c_with_concurrency_one_also_keeps_what_finished(tmp_path: Path, slow_run) -> None:
    skill, ws = slow_run
    proc = start(run_argv(skill, ws, command_argv(tmp_path), concurrency=1), tmp_path)
    took, err = interrupt_when(lambda: len(graded(ws)) == 4 and sleeping_started(tmp_path, 1), proc)
    assert took < 5, took
    assert proc.returncode == 130, err
    assert len(json.loads((ws / "iteration-1" / "benchmark.json").read_text())["runs"]) == 4
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == []
