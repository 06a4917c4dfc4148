"""A matrix run killed part-way (SIGKILL: nothing of it gets to clean up) resumes: the same
command runs only what had not finished, for every agent (issue 37). The agents are real `sh`
processes; each logs the run folder it works in, so the test sees which trials ran again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import repo_paths
from cli_runner import invoke
from process_support import recorded_pids, wait_for

TRIALS_PER_AGENT = 6  # 3 evals x 2 arms x 1 trial; eval 1 is quick, the others sleep while the flag exists


def make_skill(root: Path, tmp_path: Path) -> Path:
    skill = root / "sleeper"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: sleeper\ndescription: Sleeps. Use when asked to sleep.\n---\n"
                                    "Sleep, then say hello.\n", encoding="utf-8")
    evals = [{"id": i, "prompt": "quick" if i == 1 else f"slow-{i}",
              "expectations": [{"type": "contains", "value": "hello"}]} for i in (1, 2, 3)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "sleeper", "evals": evals}))
    script = (f"echo $$ >> {tmp_path / 'pids'}; echo \"$SKILLASSAY_WORKDIR\" >> {tmp_path / 'log'}; "
              f"if [ \"$1\" != quick ] && [ -e {tmp_path / 'slow'} ]; then sleep 60; fi; echo hello")
    argv = ["sh", "-c", script, "sh", "{prompt}"]
    config = {"trials_per_eval": 1, "sandbox": "none", "concurrency": 2,
              "agents": [{"name": name, "executor": "command", "options": {"argv": argv}} for name in ("a", "b")]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    return skill


def graded(ws: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in ws.glob("iteration-1/agents/*/eval-*/*/run-*/grading.json")}


def logged(tmp_path: Path) -> list[str]:
    path = tmp_path / "log"
    return path.read_text().split() if path.exists() else []


def start_slow_matrix_run(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, list[str]]:
    """The matrix run as its own process group, its later trials held by the `slow` file."""
    (tmp_path / "slow").touch()
    skill = make_skill(tmp_path / "skills", tmp_path)
    ws = tmp_path / "ws"
    args = ["run", str(skill), "--workspace", str(ws), "--config", str(tmp_path / "config.json"), "--fail-fast", "0"]
    env = {**os.environ, "PYTHONPATH": str(repo_paths.REPO / "src"), "CI": ""}
    proc = subprocess.Popen([sys.executable, "-m", "skillassay", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, ws, args


@pytest.mark.slow
def test_a_killed_matrix_run_resumes_without_running_finished_trials(tmp_path: Path) -> None:
    proc, ws, args = start_slow_matrix_run(tmp_path)
    try:
        # the four quick trials (eval 1, both arms, both agents) finish; two slow ones are running
        wait_for(lambda: len(graded(ws)) >= 4 and len(recorded_pids(tmp_path)) >= 6, 120, proc)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        for pid in [proc.pid, *recorded_pids(tmp_path)]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    finished = graded(ws)
    assert len(finished) == 4, sorted(finished)
    assert {p.parts[-5] for p in finished} == {"a", "b"}  # one queue: both agents had started
    before = len(logged(tmp_path))
    (tmp_path / "slow").unlink()

    result = invoke(*args)
    assert result.exit_code in (0, 1, 3), result.output
    assert f"4 trials already graded, {2 * TRIALS_PER_AGENT - 4} to run" in result.flat, result.output
    after = graded(ws)
    assert len(after) == 2 * TRIALS_PER_AGENT
    assert {p: after[p] for p in finished} == finished  # not one finished trial was run again
    rerun = logged(tmp_path)[before:]
    assert len(rerun) == 2 * TRIALS_PER_AGENT - 4
    assert not {str(p.parent) for p in finished} & {str(Path(w).parent) for w in rerun}
    assert (ws / "iteration-1" / "matrix.json").is_file()


@pytest.mark.slow
def test_ctrl_c_keeps_and_aggregates_every_agents_finished_trials(tmp_path: Path) -> None:
    proc, ws, args = start_slow_matrix_run(tmp_path)
    try:
        wait_for(lambda: len(graded(ws)) >= 4 and len(recorded_pids(tmp_path)) >= 6, 120, proc)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole group
        _, stderr = proc.communicate(timeout=60)
    finally:
        for pid in [proc.pid, *recorded_pids(tmp_path)]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    flat = " ".join(stderr.split())
    assert "interrupted" in flat and "each agent's benchmark.json" in flat and "Run the same command again" in flat
    for name in ("a", "b"):
        bench = json.loads((ws / "iteration-1" / "agents" / name / "benchmark.json").read_text())
        assert any("interrupted" in note for note in bench["notes"]), bench["notes"]
        assert len(bench["runs"]) == 2  # its two quick trials, nothing of the stopped ones
    assert not (ws / "iteration-1" / "matrix.json").exists()  # no verdict from a part
