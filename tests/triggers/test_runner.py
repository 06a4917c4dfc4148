"""`skillassay triggers` under Ctrl-C stops as `run` does (triggers/runner.py, run/interrupt.py):
no run starts after it, the runs in flight are ended (their agents' process groups), what
finished is kept and counted, the message says how to resume, and the same command resumes
without running the finished runs again. A real `skillassay triggers` process whose agents are
real `sh` processes that sleep; Ctrl-C is sent as a terminal sends it, to the whole group.

Before: the runs were submitted to a thread pool up front; on Ctrl-C its shutdown waited for
every queued run (a minute each here) and the agents, in sessions of their own, kept running."""

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
from process_support import alive, interrupt_when, recorded_pids

QUICK, SLOW, RUNS = 2, 6, 2  # queries; 16 runs in all, 4 of them quick


def make_skill(root: Path) -> Path:
    skill = root / "zebra-facts"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: zebra-facts\ndescription: Knows zebra lore.\n---\nBody.\n",
                                    encoding="utf-8")
    return skill


def argv(tmp_path: Path, skill: Path, queries: Path) -> list[str]:
    """sh records its pid, then sleeps while tmp_path/slow exists unless its query is quick; it
    reports the skill loaded through the marker file."""
    script = (f"echo $$ >> {tmp_path / 'pids'}; "
              f"case \"$1\" in quick*) ;; *) if [ -e {tmp_path / 'slow'} ]; then sleep 60; fi ;; esac; "
              "echo zebra-facts > \"$SKILLASSAY_LOADED_SKILLS_FILE\"; echo answered")
    return [sys.executable, "-m", "skillassay", "triggers", str(skill), "--queries", str(queries),
            "--executor", "command", "-o", "argv=" + json.dumps(["sh", "-c", script, "sh", "{prompt}"]),
            "--runs", str(RUNS), "--concurrency", "4", "--fail-fast", "0", "--workspace", str(tmp_path / "ws"),
            "--sandbox", "none"]  # the agents record their host pids and read a flag outside their folder


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(repo_paths.SRC), "CI": ""}
    return subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finished(tmp_path: Path) -> int:
    records = (tmp_path / "ws" / "triggers" / "runs").glob("*.json")
    return sum(json.loads(p.read_text()).get("status") == "ok" for p in records)


@pytest.fixture
def setup(tmp_path: Path):
    (tmp_path / "slow").touch()
    skill = make_skill(tmp_path / "skills")
    queries = tmp_path / "trigger_evals.json"
    queries.write_text(json.dumps([{"query": f"quick zebra {i}", "should_trigger": True} for i in range(QUICK)]
                                  + [{"query": f"slow zebra {i}", "should_trigger": i % 2 == 0} for i in range(SLOW)]))
    yield argv(tmp_path, skill, queries)
    for pid in recorded_pids(tmp_path):  # whatever a failing run left behind never outlives the test
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def test_ctrl_c_stops_triggers_keeps_what_finished_and_resumes(tmp_path: Path, setup: list[str]) -> None:
    proc = start(setup, tmp_path)
    took, err = interrupt_when(lambda: finished(tmp_path) == QUICK * RUNS and len(recorded_pids(tmp_path)) >= QUICK * RUNS + 4,
                               proc, "triggers")
    assert took < 5, f"Ctrl-C took {took:.1f}s to stop triggers"
    assert proc.returncode == 130, err
    assert "interrupted" in err and "resume" in err and f"{QUICK * RUNS} finished runs" in err, err
    assert "Traceback" not in err, err
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == [], "an agent outlived the command"
    started = len(recorded_pids(tmp_path))
    assert started < (QUICK + SLOW) * RUNS, "every queued run still ran"
    assert finished(tmp_path) == QUICK * RUNS  # the stopped runs are not recorded as finished

    (tmp_path / "slow").unlink()  # the same command again runs only what did not finish
    proc = start(setup, tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1, 3), err
    assert len(recorded_pids(tmp_path)) - started == SLOW * RUNS, "finished runs ran again"
    report = json.loads((tmp_path / "ws" / "triggers" / "triggers.json").read_text())
    assert report["runs_completed"] == (QUICK + SLOW) * RUNS


def test_a_second_ctrl_c_ends_triggers_at_once(tmp_path: Path, setup: list[str]) -> None:
    proc = start(setup, tmp_path)
    took, err = interrupt_when(lambda: len(recorded_pids(tmp_path)) >= QUICK * RUNS + 4, proc, "triggers", presses=2)
    assert took < 2, f"a second Ctrl-C took {took:.1f}s"
    assert proc.returncode == 130, err
    assert "again" in err, err
    deadline = time.monotonic() + 5
    while any(alive(p) for p in recorded_pids(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in recorded_pids(tmp_path) if alive(p)] == [], "an agent outlived the command"
