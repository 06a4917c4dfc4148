"""The embedded model for real (SmolLM2-135M via llama-cpp-python, no fake): the skill reaches
the with-skill arm, the measured difference is real, and a seed reproduces a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillassay.executors import ExecutorSettings, TrialRequest
from skillassay.executors.local import LocalExecutor, find_embedded_model
from skillassay.run.engine import RunRequest, run_benchmark
from skillassay.spec.skill import load_skill

pytestmark = pytest.mark.model


def test_embedded_model_is_shipped_by_a_package() -> None:
    path = find_embedded_model()
    assert path is not None and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000
    ok, reason = LocalExecutor.availability()
    assert ok, reason


def test_same_seed_reproduces_the_answer(example_skill: Path, tmp_path: Path) -> None:
    ex = LocalExecutor(ExecutorSettings(temperature=0.7, max_tokens=32))
    skill = load_skill(example_skill)
    req = TrialRequest(prompt="What port does the Acme VPN server use?", workdir=tmp_path, skill=skill,
                       seed=11, settings=ex.settings)
    a, b = ex.run(req), ex.run(req)
    assert a.final_text == b.final_text and a.final_text
    assert a.usage.input_tokens and a.usage.output_tokens
    base = ex.run(TrialRequest(prompt=req.prompt, workdir=tmp_path, skill=None, seed=11, settings=ex.settings))
    # the skill's text reached the model in one arm only: its prompt is much longer
    assert a.usage.input_tokens > base.usage.input_tokens + 50
    sent = a.transcript[0]["messages"][-1]["content"]
    assert "Skill: acme-vpn" in sent and "4433" in sent
    assert "acme-vpn" not in base.transcript[0]["messages"][-1]["content"]


def test_run_on_real_model_shows_the_skill_helps(example_skill: Path, tmp_path: Path) -> None:
    evals = json.loads((example_skill / "evals/evals.json").read_text())
    evals["evals"] = [e for e in evals["evals"] if e["id"] in (1, 3)]  # port, help-desk email
    (example_skill / "evals/evals.json").write_text(json.dumps(evals))
    outcome = run_benchmark(RunRequest(skill_dir=example_skill, executor="local", trials=3,
                                       workspace=tmp_path / "ws"))
    per = {e.eval_id: e for e in outcome.benchmark.per_eval}
    assert outcome.executed == 12 and outcome.failed == 0
    for eval_id in (1, 3):
        assert per[eval_id].with_skill.pass_rate >= 2 / 3, per[eval_id]
        assert per[eval_id].baseline.pass_rate == 0.0, per[eval_id]
    timing = json.loads(next((tmp_path / "ws/iteration-1").glob("eval-1-*/with_skill/run-1/timing.json")).read_text())
    assert timing["total_tokens"] > 100 and timing["executor_duration_seconds"] > 0


def test_a_trials_answer_does_not_depend_on_the_trial_before(example_skill: Path, tmp_path: Path) -> None:
    """One Llama instance serves every trial; llama-cpp-python reuses the KV cache of the
    longest prompt prefix the previous call shares, and a prefix decoded in another batch
    split gives slightly different logits, so the same seed sampled other tokens depending on
    which trial ran before (a fixed and an adaptive run, or a resumed one, run trials in other
    orders). Each pair below differed before the cache was reset per call."""
    ex = LocalExecutor(ExecutorSettings(temperature=0.7, max_tokens=64))
    skill = load_skill(example_skill)
    prompts = {e["id"]: e["prompt"] for e in json.loads((example_skill / "evals/evals.json").read_text())["evals"]}

    def run(eval_id: int, with_skill: bool, k: int) -> str:
        return ex.run(TrialRequest(prompt=prompts[eval_id], workdir=tmp_path, skill=skill if with_skill else None,
                                   seed=eval_id * 1000 + k, settings=ex.settings)).final_text

    for target, before in (((2, False, 1), ((1, False, 2), (2, False, 2))),
                           ((5, True, 1), ((4, False, 2), (5, True, 2)))):
        answers = []
        for prior in before:
            run(*prior)
            answers.append(run(*target))
        assert answers[0] == answers[1], (target, answers)
