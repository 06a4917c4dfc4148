"""Stopping a run whose agent left its process group (issue 40): an agent that starts a child
with `setsid` puts it out of reach of the group kill that ends a trial. Under bwrap the trial
runs in a PID namespace of its own (--unshare-pid, --die-with-parent), so ending the trial ends
everything it started; without a sandbox the escaped child survives, which shows the test can
tell the difference.

A real `skillassay run` (command executor, real `sh`), SIGTERM sent to the run's process alone as
a supervisor sends it; the escaped child is found from the host by a token in its command line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import repo_paths
from process_support import alive, wait_for
from sandbox_support import needs_bwrap

pytestmark = [pytest.mark.sandbox, needs_bwrap]


def pids_with(token: str) -> list[int]:
    """Running processes whose command line holds `token` (seen from the host's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if token.encode() in fh.read() and alive(int(entry)):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def one_eval_skill(root: Path) -> Path:
    skill = root / "escaper"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: escaper\ndescription: Waits. Use when asked to wait.\n---\nWait.\n",
                                    encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps(
        {"skill_name": "escaper", "evals": [{"id": 1, "prompt": "wait", "expectations": [
            {"type": "contains", "value": "hello"}]}]}), encoding="utf-8")
    return skill


@pytest.mark.parametrize(("sandbox", "escaped_survives"), [("none", True), ("bwrap", False)])
def test_a_child_that_left_the_agents_group_ends_with_the_trial_under_bwrap(tmp_path: Path, sandbox: str,
                                                                           escaped_survives: bool) -> None:
    tag = uuid.uuid4().hex[:12]
    token = f"escaped-{tag}"
    # the escaped shell keeps the token in its command line while it sleeps (`; :` stops sh exec-ing
    # sleep); the script spells it in two parts, so only the escaped shell's command line holds it
    script = f"e=esc; setsid sh -c 'sleep 120; :' \"${{e}}aped-{tag}\" </dev/null >/dev/null 2>&1 & sleep 60; echo hello"
    argv = [sys.executable, "-m", "skillassay", "run", str(one_eval_skill(tmp_path)), "--workspace",
            str(tmp_path / "ws"), "--executor", "command", "-o", "argv=" + json.dumps(["sh", "-c", script]),
            "--trials", "1", "--concurrency", "2", "--sandbox", sandbox]
    env = {**os.environ, "PYTHONPATH": str(repo_paths.REPO / "src"), "CI": ""}
    proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        wait_for(lambda: len(pids_with(token)) >= 2, 120, proc)  # both arms' agents have escaped
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, err
        deadline = time.monotonic() + 3  # the namespace's processes are killed as its init ends
        while pids_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bool(pids_with(token)) is escaped_survives, f"escaped children left: {pids_with(token)}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in pids_with(token):  # the escaped children this test started, by pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
