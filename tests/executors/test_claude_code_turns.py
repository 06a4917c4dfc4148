"""The claude-code executor carrying a conversation (issue 39): the REAL `claude` CLI, against the
loopback fake of the Anthropic Messages API, runs turn 1 and then `--resume`s its session for
each later user message; the fake's request log shows every earlier turn in each later request.
The parser's per-turn figures are checked on the result events Claude Code 2.1.332 prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_cli_support import ANSWERS, TURNS, history, make_skill, run_conversation, said_in_order
from fake_model_api import FakeModelAPI, HttpError, Reply

from skillassay.executors.base import ExecutorSettings
from skillassay.executors.claude_code import ClaudeCodeExecutor, build_argv, parse_stream, session_id, this_turn

FAKE_KEY = "sk-ant-fake-test-key-0123456789"


# ------------------------------------------------------------------ parser: a resumed run's figures

def _result(usage_in: int, usage_out: int, session_in: int, session_out: int, session_cost: float) -> dict:
    """A result event as Claude Code prints it after `--resume`: `usage` the run's, `modelUsage`
    and `total_cost_usd` the session's."""
    return {"type": "result", "subtype": "success", "is_error": False, "result": "ok", "num_turns": 1,
            "duration_ms": 250, "session_id": "s-1", "total_cost_usd": session_cost,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            "modelUsage": {"claude-sonnet-4-5": {"inputTokens": session_in, "outputTokens": session_out,
                                                 "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
                                                 "costUSD": session_cost, "contextWindow": 200000}}}


def test_a_resumed_run_counts_its_own_tokens_and_cost_not_the_sessions():
    first = _result(100, 10, 100, 10, 0.00045)
    second = _result(200, 20, 300, 30, 0.00135)
    alone = parse_stream([second])  # without the earlier turn: the session's figure wins, with a warning
    assert (alone.usage.input_tokens, alone.usage.output_tokens) == (300, 30) and alone.usage.warning
    r = parse_stream([second], earlier=[{"type": "system", "subtype": "init"}, first])
    assert (r.usage.input_tokens, r.usage.output_tokens) == (200, 20)
    assert r.usage.warning is None and r.usage.cost_usd == pytest.approx(0.0009)
    assert r.usage.raw["session_cost_usd"] == 0.00135
    model = this_turn(second, first)["modelUsage"]["claude-sonnet-4-5"]
    assert model["contextWindow"] == 200000 and model["costUSD"] == pytest.approx(0.0009)


def test_session_id_and_resume_argv():
    events = [{"type": "system", "subtype": "init", "session_id": "abc"}, {"type": "assistant"}]
    assert session_id(events) == "abc"
    assert session_id([{"type": "result", "session_id": "xyz"}]) == "xyz"
    assert session_id([{"type": "assistant", "session_id": "no"}]) is None
    argv = build_argv("claude", "-next", ExecutorSettings(), resume="abc")
    assert argv[-4:] == ["--resume", "abc", "--", "-next"]
    assert "--resume" not in build_argv("claude", "x", ExecutorSettings())


# ------------------------------------------------------------------ the real CLI

needs_claude = pytest.mark.skipif(shutil.which("claude") is None,
                                  reason="claude CLI not on PATH (npm install -g @anthropic-ai/claude-code)")


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _settings(api: FakeModelAPI, timeout: float = 90) -> ExecutorSettings:
    return ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=timeout, options={"base_url": api.base_url})


@pytest.mark.agent_cli
@needs_claude
@pytest.mark.parametrize("with_skill", [True, False], ids=["with-skill", "baseline"])
def test_three_turns_continue_one_session(tmp_path: Path, claude_env: None, with_skill: bool) -> None:
    skill = make_skill(tmp_path / "skills") if with_skill else None
    work = tmp_path / "work"
    work.mkdir()
    script = [Reply(text=answer, input_tokens=100 * k, output_tokens=10 * k) for k, answer in enumerate(ANSWERS, 1)]
    with FakeModelAPI(script) as api:
        r = run_conversation(ClaudeCodeExecutor, _settings(api), work, skill)
    assert r.status == "ok", r.error
    requests = api.model_requests()
    assert len(requests) == 3
    for k, request in enumerate(requests):  # the history grows turn by turn
        assert said_in_order(request, history(TURNS[:k + 1], ANSWERS[:k])) == history(TURNS[:k + 1], ANSWERS[:k])
        assert ("demo-skill" in json.dumps(request["body"])) is with_skill  # the arm's skill, every turn
    assert [(t.index, t.prompt, t.final_text, t.status) for t in r.turns] == [
        (k, TURNS[k - 1], ANSWERS[k - 1], "ok") for k in (1, 2, 3)]
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in r.turns] == [(100, 10), (200, 20), (300, 30)]
    assert all(t.usage.cost_usd and t.usage.warning is None for t in r.turns)
    assert (r.usage.input_tokens, r.usage.output_tokens) == (600, 60)
    assert r.usage.cost_usd == pytest.approx(sum(t.usage.cost_usd or 0 for t in r.turns))
    assert r.final_text == ANSWERS[-1] and r.agent_duration_ms == sum(t.agent_duration_ms or 0 for t in r.turns)
    # the transcript: each turn's events where its record says they start, each run's own
    starts = [t.transcript_start for t in r.turns]
    spans = [r.transcript[a:b] for a, b in zip(starts, [*starts[1:], len(r.transcript)], strict=True)]
    assert [[e.get("result") for e in span if e.get("type") == "result"] for span in spans] == [[a] for a in ANSWERS]
    assert all(span[0].get("subtype") == "init" for span in spans)
    sessions = {e["session_id"] for e in r.transcript if e.get("type") in ("system", "result") and "session_id" in e}
    assert len(sessions) == 1  # one session, resumed
    assert not list(Path.home().glob(f".claude/projects/*/{sessions.pop()}.jsonl"))  # kept in the trial's home
    assert not (work / ".claude").exists()


@pytest.mark.agent_cli
@needs_claude
def test_a_failing_turn_ends_the_trial_with_the_turns_before_it(tmp_path: Path, claude_env: None) -> None:
    """The fake refuses turn 2's request: the trial errors there, turn 1 kept, turn 3 never sent."""
    work = tmp_path / "work"
    work.mkdir()
    script = [Reply(text=ANSWERS[0], input_tokens=100, output_tokens=10),
              HttpError(400, "invalid_request_error", "turn two refused", sticky=True)]
    with FakeModelAPI(script) as api:
        r = run_conversation(ClaudeCodeExecutor, _settings(api), work, None)
    assert r.status == "error" and r.error is not None
    assert r.error.startswith("turn 2: ") and "turn two refused" in r.error
    assert [(t.index, t.status) for t in r.turns] == [(1, "ok"), (2, "error")]
    assert r.turns[0].final_text == ANSWERS[0] and r.turns[0].usage.input_tokens == 100
    assert not any(TURNS[2] in json.dumps(q["body"]) for q in api.model_requests())
