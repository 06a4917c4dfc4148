"""How the embedded model runs (executors/llama_runtime.py, executors/local.py), for real:
every CPU the process may use by default, `-o n_threads` and `-o n_batch` settable and checked,
answers that do not depend on the thread count or on the batch size (the whole prompt is one
batch), and iteration.json recording what the answers do depend on. The example's gate is the
same under two thread and batch settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.executors import ExecutorSettings, TrialRequest
from skillassay.executors.local import LocalExecutor, _models
from skillassay.run.engine import RunRequest, run_benchmark


def available_cpus() -> int:
    from skillassay.executors.llama_runtime import available_cpus

    return available_cpus()


def test_available_cpus_is_the_affinity_mask() -> None:
    assert available_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_thread_or_batch_option_is_refused_before_any_trial(example_skill: Path, tmp_path: Path,
                                                                  value: str) -> None:
    for key in ("n_threads", "n_batch"):
        result = cli(["run", str(example_skill), "--executor", "local", "-o", f"{key}={value}",
                                     "--workspace", str(tmp_path / "ws")])
        assert result.exit_code == 2, result.output
        assert f"{key}={value}" in result.output and "whole number >= 1" in result.output
        assert "Traceback" not in result.output and not (tmp_path / "ws").exists()


@pytest.mark.model
def test_the_model_runs_on_every_available_cpu(example_skill: Path, tmp_path: Path) -> None:
    """llama-cpp-python's own default is half the CPUs for generation (1 of 2 here)."""
    ex = LocalExecutor(ExecutorSettings(temperature=0.7, max_tokens=8))
    ex.run(TrialRequest(prompt="What is 2 + 2?", workdir=tmp_path, skill=None, seed=1, settings=ex.settings))
    llm = ex._llm()
    assert llm.n_threads == available_cpus() and llm.context_params.n_threads_batch == available_cpus()
    one = LocalExecutor(ExecutorSettings(temperature=0.7, max_tokens=8, options={"n_threads": 1}))
    assert one._llm().n_threads == 1 and one._llm() is not llm
    # threads change no answer, so they are not part of what identifies the results
    assert one.identity() == ex.identity()


@pytest.mark.model
def test_the_examples_gate_is_the_same_under_two_thread_and_batch_settings(example_skill: Path,
                                                                           tmp_path: Path) -> None:
    """The README's demo (examples/acme-vpn as shipped, every eval and gate; 1 trial per arm
    instead of 3 to save CPU) run with one thread and a 512-token batch, then with two threads
    and the default batch (the whole context): every answer, hence the gate, is the same (the
    whole prompt is decoded in one batch whatever the batch size allowed, and the thread count
    only splits the same arithmetic); iteration.json says how each ran. (This also holds what a
    separate test of 8 executor calls under the same two settings asked, at 2x its CPU.)"""
    outcomes, answers = [], []
    for i, options in enumerate(({"n_threads": 1, "n_batch": 512}, {"n_threads": 2})):
        ws = tmp_path / f"ws{i}"
        _models.clear()
        outcome = run_benchmark(RunRequest(skill_dir=example_skill, executor="local", workspace=ws, trials=1,
                                           executor_options=options))
        outcomes.append(outcome)
        answers.append({p.relative_to(ws).as_posix(): p.read_text() for p in sorted(ws.glob("iteration-1/eval-*/*/run-*/outputs/answer.md"))})
        runtime = json.loads((ws / "iteration-1" / "iteration.json").read_text())["executor_runtime"]
        assert runtime["n_threads"] == options["n_threads"]
        assert runtime["n_batch"] == options.get("n_batch", 2048) and runtime["n_ubatch"] == runtime["n_batch"]
        assert len(runtime["model_sha256"]) == 64 and runtime["llama_cpp_python"]
        assert "AVX" in runtime["system_info"] or "NEON" in runtime["system_info"]
    assert answers[0] == answers[1] and len(answers[0]) == 16
    assert outcomes[0].gate.headline() == outcomes[1].gate.headline()
    assert outcomes[0].gate.exit_code == outcomes[1].gate.exit_code
    # every figure but the durations (wall time) is computed from the same answers
    same = [[(t.key, t.status, t.value, t.interval) for t in o.gate.thresholds if "duration" not in t.key]
            for o in outcomes]
    assert same[0] == same[1] and len(same[0]) == 3
