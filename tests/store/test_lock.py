"""One writing command per workspace: a second `skillassay run` (or a `grade`) on a workspace that a
run is using fails at once with exit 2 instead of executing the same trials into the same run
folders. The main test uses real processes, as a CI matrix or a second terminal would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import cli

import skillassay
from skillassay.errors import InputError
from skillassay.models import Benchmark
from skillassay.run.engine import RunRequest, run_benchmark
from skillassay.store.layout import existing_iterations
from skillassay.store.lock import HOLDER_FILE, RUN_LOCK_FILE, WorkspaceLock

TRIALS, DELAY = 16, 0.25  # 8 evals x 2 arms x 1 trial of 0.25 s: the first run holds the lock ~4 s


def cli_env() -> dict[str, str]:
    """Subprocesses import the same skillassay as this test process (not whatever checkout the
    environment's editable install points at)."""
    src = str(Path(skillassay.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}


def run_cmd(skill: Path, ws: Path) -> list[str]:
    return [sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "echo", "--workspace", str(ws),
            "--trials", "1", "-o", f"delay_seconds={DELAY}"]


def test_second_concurrent_run_fails_fast_and_the_first_finishes(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "acme-vpn-workspace"
    env = cli_env()
    first = subprocess.Popen(run_cmd(example_skill, ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and first.poll() is None \
                and not any(ws.glob("iteration-1/eval-*/*/run-*/grading.json")):
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before it could be contended"

        started = time.monotonic()
        second = subprocess.run(run_cmd(example_skill, ws), capture_output=True, text=True, env=env, timeout=30)
        second_took = time.monotonic() - started
        assert second.returncode == 2, f"second run exited {second.returncode}:\n{second.stderr}"
        assert "Traceback" not in second.stderr, second.stderr
        assert str(ws) in second.stderr and "another skillassay run" in second.stderr, second.stderr
        assert "is using this workspace" in second.stderr and f"pid {first.pid}" in second.stderr, second.stderr
        # refused at once, not after waiting for the first: it is still running
        assert first.poll() is None, f"the second run waited {second_took:.1f} s for the first to finish"
    finally:
        out, err = first.communicate(timeout=60)

    assert first.returncode in (0, 1, 3), err  # the gate's verdict, as for any solo run (3: inconclusive)
    assert "Traceback" not in err, err
    assert f"{TRIALS} trials run (0 errored), 0 reused" in err, err  # it ran every trial, nobody else did
    assert existing_iterations(ws) == [1], "the refused run started an iteration of its own"
    bench = Benchmark.model_validate_json((ws / "iteration-1" / "benchmark.json").read_text())
    assert len({(r.eval_id, r.configuration, r.run_number) for r in bench.runs}) == len(bench.runs) == TRIALS
    assert all(r.result.errors == 0 for r in bench.runs)
    assert sorted(p.name for p in ws.glob("iteration-1/eval-*/*/run-*")) == ["run-1"] * TRIALS
    history = json.loads((ws / "history.json").read_text())  # the history lock works inside this one
    assert [e["iteration"] for e in history["iterations"]] == [1]
    assert not (ws / HOLDER_FILE).exists(), "the holder record outlived the run"
    with WorkspaceLock(ws, "test"):  # released
        pass


def test_grade_is_refused_while_a_run_holds_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "iteration-1").mkdir(parents=True)
    (ws / "iteration-1" / "iteration.json").write_text("{}")
    with WorkspaceLock(ws, "run"):  # its own descriptor, so a second lock object in this process is refused
        result = cli(["grade", str(ws / "iteration-1")])
    assert result.exit_code == 2, result.output
    assert f"another skillassay run (pid {os.getpid()}" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_refused_run_writes_nothing(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with WorkspaceLock(ws, "grade"), pytest.raises(InputError, match="another skillassay grade"):
        run_benchmark(RunRequest(skill_dir=example_skill, executor="echo", workspace=ws, trials=1))
    assert sorted(p.name for p in ws.iterdir()) == [RUN_LOCK_FILE]  # no iteration, no history
    assert existing_iterations(ws) == []
