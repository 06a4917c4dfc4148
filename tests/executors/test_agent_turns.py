"""The API agent loops carry a conversation (issue 39): through the real `anthropic` and
`openai` SDKs against the loopback fakes of their APIs (tests/fake_anthropic_api.py,
fake_openai_api.py), a 3-turn trial sends one growing history, so each later request holds
every earlier user message, answer, tool call and tool result, and each turn is recorded with
its own tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic_api import FakeAnthropic, text, tool_use
from fake_openai_api import FakeOpenAI

from skillassay.executors.anthropic_api import AnthropicExecutor
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.openai_api import OpenAIExecutor

PROMPTS = ("What is the port?", "And the hostname?", "Thanks, anything else?")


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def request(settings: ExecutorSettings, tmp_path: Path) -> TrialRequest:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return TrialRequest(prompt=PROMPTS[0], workdir=work, skill=None, seed=3, settings=settings, turns=PROMPTS[1:])


def user_texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)]


def test_anthropic_sends_the_whole_history_with_every_later_turn(tmp_path: Path) -> None:
    with FakeAnthropic([
        tool_use("write_file", {"path": "notes.txt", "content": "port 4433"}, input_tokens=100, output_tokens=10),
        text("Port 4433.", input_tokens=120, output_tokens=5),
        text("vpn.acme.example", input_tokens=140, output_tokens=6),
        text("That is all.", input_tokens=160, output_tokens=7),
    ]) as fake:
        ex = AnthropicExecutor(ExecutorSettings(model="claude-test", max_tokens=256, timeout_seconds=30,
                                                options={"base_url": fake.base_url}))
        result = ex.run(request(ex.settings, tmp_path))
    fake.assert_clean()  # the fake also checks that roles alternate and every tool_use has its result
    assert result.status == "ok", result.error
    bodies = [r["body"]["messages"] for r in fake.requests]
    assert user_texts(bodies[0]) == [PROMPTS[0]]
    assert user_texts(bodies[2]) == list(PROMPTS[:2])
    assert user_texts(bodies[3]) == list(PROMPTS)
    last = bodies[3]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert any(b.get("type") == "tool_result" for m in last if isinstance(m["content"], list) for b in m["content"])
    assert last[5]["content"][0]["text"] == "vpn.acme.example"  # turn 2's answer, before turn 3's message
    assert [t.final_text for t in result.turns] == ["Port 4433.", "vpn.acme.example", "That is all."]
    assert [t.usage.input_tokens for t in result.turns] == [220, 140, 160]
    assert result.usage.input_tokens == 520 and result.final_text == "That is all."
    assert result.tool_calls == {"write_file": 1} and (tmp_path / "work" / "notes.txt").is_file()
    types = [e["type"] for e in result.transcript]
    starts = [t.transcript_start for t in result.turns]
    assert [types[s] for s in starts] == ["system", "user", "user"]


def test_openai_sends_the_whole_history_with_every_later_turn(tmp_path: Path) -> None:
    with FakeOpenAI(["Port 4433.", "vpn.acme.example", "That is all."]) as fake:
        ex = OpenAIExecutor(ExecutorSettings(model="gpt-test", timeout_seconds=30,
                                             options={"base_url": fake.base_url}))
        result = ex.run(request(ex.settings, tmp_path))
        ex.close()
    fake.assert_clean()
    assert result.status == "ok", result.error
    assert [user_texts(b["messages"]) for b in fake.requests] == [list(PROMPTS[:k]) for k in (1, 2, 3)]
    last = fake.requests[2]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in last if m["role"] == "assistant"] == ["Port 4433.", "vpn.acme.example"]
    assert [t.final_text for t in result.turns] == ["Port 4433.", "vpn.acme.example", "That is all."]
    assert [t.usage.output_tokens for t in result.turns] == [20, 20, 20] and result.usage.output_tokens == 60


def test_a_turn_whose_request_fails_ends_the_conversation_with_earlier_turns_kept(tmp_path: Path) -> None:
    with FakeOpenAI(["Port 4433."]) as fake:  # the script runs out on turn 2: the fake answers 400
        ex = OpenAIExecutor(ExecutorSettings(model="gpt-test", timeout_seconds=30,
                                             options={"base_url": fake.base_url}))
        result = ex.run(request(ex.settings, tmp_path))
        ex.close()
    assert result.status == "error" and result.error is not None and result.error.startswith("turn 2:")
    assert [(t.index, t.status) for t in result.turns] == [(1, "ok"), (2, "error")]
    assert result.turns[0].final_text == "Port 4433." and len(fake.requests) == 2
