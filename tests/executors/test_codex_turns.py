"""The codex executor carrying a conversation (issue 39): the REAL `codex` CLI, against the loopback
fake of the OpenAI Responses API, runs turn 1 (its session kept, in the trial's CODEX_HOME) and
then `codex exec resume`s its thread for each later user message; the fake's request log shows
every earlier turn in each later request. The parser's per-turn usage is checked on the
cumulative `turn.completed` usage Codex 0.171.0 prints."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from agent_cli_support import ANSWERS, TURNS, history, make_skill, run_conversation, said_in_order
from fake_model_api import FakeModelAPI, HttpError, Reply, Stall, ToolCall, conversation

from skillassay.executors.base import ExecutorSettings, TransientError
from skillassay.executors.codex import CodexExecutor, build_argv, parse_stream, thread_id

FAKE_KEY = "sk-fake-openai-test-key-0123456789abcdef"
MODEL = "gpt-5"  # a named model gets the plain exec_command shell tool (see test_codex.py)


# ------------------------------------------------------------------ parser and argv

def _turn(text: str, input_tokens: int, output_tokens: int) -> list[dict]:
    return [{"type": "thread.started", "thread_id": "t-1"}, {"type": "turn.started"},
            {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": text}},
            {"type": "turn.completed", "usage": {"input_tokens": input_tokens, "cached_input_tokens": 0,
                                                 "output_tokens": output_tokens, "reasoning_output_tokens": 0}}]


def test_a_resumed_run_counts_its_own_usage_not_the_threads():
    first, second = _turn("a", 100, 10), _turn("b", 300, 30)  # the thread's totals: 100+200, 10+20
    assert parse_stream(second).usage.input_tokens == 300
    r = parse_stream(second, earlier=first)
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_input_tokens) == (200, 20, 0)
    assert r.usage.raw["thread_total"]["input_tokens"] == 300
    assert thread_id(first) == "t-1" and thread_id([{"type": "turn.started"}]) is None


def test_argv_keeps_the_session_only_for_a_conversation_and_resumes_after_the_options(tmp_path: Path):
    settings = ExecutorSettings(model=MODEL)
    single = build_argv("codex", "q", tmp_path, settings)
    assert "--ephemeral" in single and single[-2:] == ["--", "q"]
    first = build_argv("codex", "q", tmp_path, settings, keep_session=True)
    assert "--ephemeral" not in first
    later = build_argv("codex", "resume", tmp_path, settings, resume="t-1")
    assert "--ephemeral" not in later and later[-4:] == ["resume", "--", "t-1", "resume"]
    assert later[:later.index("resume")] == [a for a in first[:-2]]  # the same options, before `resume`


# ------------------------------------------------------------------ the real CLI

needs_codex = pytest.mark.skipif(shutil.which("codex") is None,
                                 reason="codex CLI not on PATH (npm install -g @openai/codex)")


@pytest.fixture
def codex_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)


def _settings(api: FakeModelAPI, timeout: float = 60) -> ExecutorSettings:
    return ExecutorSettings(model=MODEL, timeout_seconds=timeout,
                            options={"base_url": api.base_url + "/v1", "max_retries": 0})


@pytest.mark.agent_cli
@needs_codex
@pytest.mark.parametrize("with_skill", [True, False], ids=["with-skill", "baseline"])
def test_three_turns_continue_one_thread(tmp_path: Path, codex_env: None, with_skill: bool) -> None:
    """Turn 2 reads the skill with a shell command before answering: the skill is still where
    the with-skill arm installed it, and a turn of two model requests counts both."""
    skill = make_skill(tmp_path / "skills") if with_skill else None
    work = tmp_path / "work"
    work.mkdir()
    script = [Reply(text=ANSWERS[0], input_tokens=100, output_tokens=10),
              Reply(tool_calls=[ToolCall("exec_command", {"cmd": "cat .agents/skills/demo-skill/SKILL.md"})],
                    input_tokens=150, output_tokens=15),
              Reply(text=ANSWERS[1], input_tokens=200, output_tokens=20),
              Reply(text=ANSWERS[2], input_tokens=300, output_tokens=30)]
    with FakeModelAPI(script) as api:
        r = run_conversation(CodexExecutor, _settings(api), work, skill)
    assert r.status == "ok", r.error
    asked = [q for q in api.model_requests() if q["body"]["input"][-1].get("role") == "user"]
    assert len(asked) == 3 and len(api.model_requests()) == 4  # turn 2's second one sends its command's output
    for k, request in enumerate(asked):  # the history grows turn by turn
        assert said_in_order(request, history(TURNS[:k + 1], ANSWERS[:k])) == history(TURNS[:k + 1], ANSWERS[:k])
        assert ("Writes greeting files" in json.dumps(conversation(request))) is with_skill  # the skill's listing
    assert [(t.index, t.final_text, t.status) for t in r.turns] == [(k, ANSWERS[k - 1], "ok") for k in (1, 2, 3)]
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in r.turns] == [(100, 10), (350, 35), (300, 30)]
    assert (r.usage.input_tokens, r.usage.output_tokens) == (750, 75)
    assert r.skill_triggered is (True if with_skill else None)
    assert r.tool_calls == {"command_execution": 1}
    turn_two = r.transcript[r.turns[1].transcript_start:r.turns[2].transcript_start]
    assert [e["type"] for e in turn_two if e["type"] in ("thread.started", "turn.completed")] == [
        "thread.started", "turn.completed"]
    threads = {e["thread_id"] for e in r.transcript if e.get("type") == "thread.started"}
    assert len(threads) == 1  # one thread, resumed
    assert not list(Path.home().glob(f".codex/sessions/**/*{threads.pop()}.jsonl"))  # kept in the trial's home
    assert not (work / ".agents").exists()


@pytest.mark.agent_cli
@needs_codex
def test_a_refused_turn_ends_the_trial_with_the_turns_before_it(tmp_path: Path, codex_env: None) -> None:
    script = [Reply(text=ANSWERS[0], input_tokens=100, output_tokens=10),
              HttpError(400, "invalid_request_error", "turn two refused", sticky=True)]
    with FakeModelAPI(script) as api:
        r = run_conversation(CodexExecutor, _settings(api), tmp_path, None)
    assert r.status == "error" and (r.error or "").startswith("turn 2: ") and "turn two refused" in (r.error or "")
    assert [(t.index, t.status) for t in r.turns] == [(1, "ok"), (2, "error")]
    assert r.turns[0].final_text == ANSWERS[0] and r.turns[0].usage.input_tokens == 100
    assert not any(TURNS[2] in json.dumps(q["body"]) for q in api.model_requests())


@pytest.mark.agent_cli
@needs_codex
def test_a_rate_limited_turn_is_transient_and_keeps_the_turns_before_it(tmp_path: Path, codex_env: None) -> None:
    """A retryable failure on turn 2 retries the whole trial (the engine's TransientError); what
    the failed attempt did, turn 1 included, travels with it."""
    script = [Reply(text=ANSWERS[0]), HttpError(429, "rate_limit_error", "Rate limited", sticky=True)]
    with FakeModelAPI(script) as api, pytest.raises(TransientError, match="429") as caught:
        run_conversation(CodexExecutor, _settings(api), tmp_path, None)
    result = caught.value.result
    assert result is not None and [(t.index, t.status) for t in result.turns] == [(1, "ok"), (2, "error")]
    assert result.turns[0].final_text == ANSWERS[0]


@pytest.mark.agent_cli
@needs_codex
def test_the_timeout_covers_the_whole_conversation(tmp_path: Path, codex_env: None) -> None:
    """Turn 2's model goes silent: the trial ends at its one deadline, turn 1 kept."""
    start = time.monotonic()
    with FakeModelAPI([Reply(text=ANSWERS[0]), Stall()]) as api:
        r = run_conversation(CodexExecutor, _settings(api, timeout=6), tmp_path, None)
    assert time.monotonic() - start < 15
    assert r.status == "timeout" and "timed out after 6s" in (r.error or "")
    assert [(t.index, t.status) for t in r.turns] == [(1, "ok"), (2, "timeout")]
