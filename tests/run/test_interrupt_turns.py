"""A run killed between the turns of a conversation (issue 39): SIGKILL to the whole process
group of a real `skillassay run` while its command agent is on turn 2. The trial has no
grading.json, so the next run runs it again from turn 1 over a clean outputs/ (the agent's
conversation state cannot be trusted half-way): the killed attempt's stale file is gone, turn 1
ran twice, and the transcript holds each turn once."""

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
from process_support import alive, wait_for
from turns_support import write_skill

REPO = repo_paths.REPO
AGENT = str(REPO / "tests" / "turns_agent.py")



def log_lines(tmp_path: Path) -> list[tuple[int, int]]:
    path = tmp_path / "log"
    if not path.exists():
        return []
    return [(int(t), int(p)) for _, t, p in (line.split() for line in path.read_text().splitlines())]


def start(skill: Path, ws: Path, tmp_path: Path) -> subprocess.Popen[str]:
    agent = [sys.executable, AGENT, str(tmp_path / "log"), str(tmp_path / "flag"), "sleep", "{prompt}"]
    argv = [sys.executable, "-m", "skillassay", "run", str(skill), "--workspace", str(ws), "--executor", "command",
            "-o", "argv=" + json.dumps(agent), "--trials", "1", "--concurrency", "1", "--sandbox", "none"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CI": ""}
    return subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


@pytest.mark.slow
def test_a_kill_between_turns_reruns_the_trial_from_turn_1_over_a_clean_outputs(tmp_path: Path) -> None:
    (tmp_path / "flag").touch()
    skill, ws = write_skill(tmp_path / "talker"), tmp_path / "ws"
    proc = start(skill, ws, tmp_path)
    try:  # the first trial's agent answered turn 1 and is on turn 2
        wait_for(lambda: [t for t, _ in log_lines(tmp_path)] == [1, 2], 120, proc)
        wait_for(lambda: any(ws.glob("iteration-1/eval-1-talk/*/run-1/outputs/stale.txt")), 30, proc)
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its agent, at once: nothing gets to clean up
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    # The agent runs in a process group of its own, which a SIGKILL of the run cannot reach
    # (no handler runs): it is ended here, as a supervisor would, before the resume.
    for _, pid in log_lines(tmp_path):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while [p for _, p in log_lines(tmp_path) if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = next(ws.glob("iteration-1/eval-1-talk/*/run-1/outputs/stale.txt")).parents[1]
    assert not (killed / "grading.json").exists()

    (tmp_path / "flag").unlink()
    proc = start(skill, ws, tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1, 3), err
    assert not (ws / "iteration-2").exists(), err
    assert [t for t, _ in log_lines(tmp_path)].count(1) == 3  # turn 1 of the killed trial ran again (+ the other arm)
    assert sorted(p.name for p in (killed / "outputs").iterdir()) == \
        ["answer.md", "metrics.json", "turn1.txt", "turn2.txt", "turn3.txt"]
    events = [json.loads(line) for line in (killed / "transcript.jsonl").read_text().splitlines()]
    assert [e["turn"] for e in events if e["type"] == "command"] == [1, 2, 3]
    grading = json.loads((killed / "grading.json").read_text())
    assert [(e["turn"], e["passed"]) for e in grading["expectations"]] == [(1, True), (2, True), (3, True)]
    turns = json.loads((killed / "turns.json").read_text())["turns"]
    assert "heard before: first question / second question | answers before: 2" in turns[2]["answer"]
