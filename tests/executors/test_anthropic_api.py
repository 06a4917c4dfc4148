"""The `anthropic` executor through the real `anthropic` SDK against a loopback fake of the
Messages API (tests/fake_anthropic_api.py), which stands for the hosted API: it checks the
request shape the real API checks and replies in the real response shape. Through it these
tests also drive the shared agent loop end to end: tool round trips, usage summed over turns,
retries recorded in the transcript, and the turn/token limits."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_anthropic_api import Failure, FakeAnthropic, text, tool_use

from skillassay.executors.anthropic_api import AnthropicExecutor
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.spec.skill import load_skill

KEY = "sk-ant-test-key-never-logged"


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "haiku-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: haiku-writer\ndescription: Writes haiku to poem.txt.\n---\n"
        "Write exactly three lines to poem.txt.\n", encoding="utf-8")
    return load_skill(folder)


def make(fake: FakeAnthropic, **options) -> AnthropicExecutor:
    settings = ExecutorSettings(model="claude-test", max_tokens=512, temperature=0.0,
                                timeout_seconds=30,
                                options={"base_url": fake.base_url,
                                         "retry_initial_wait": 0.01, **options})
    return AnthropicExecutor(settings)


def trial(executor: AnthropicExecutor, tmp_path: Path, skill=None) -> TrialRequest:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return TrialRequest(prompt="Write a haiku about rain.", workdir=workdir, skill=skill, seed=1,
                        settings=executor.settings)


def test_tool_use_round_trip_with_skill(tmp_path: Path, skill) -> None:
    poem = "rain on the tin roof\nthe kettle starts its whistle\nboth of them singing\n"
    with FakeAnthropic([
        tool_use("load_skill", {"name": "haiku-writer"}, input_tokens=100, output_tokens=10),
        tool_use("write_file", {"path": "poem.txt", "content": poem}, preamble="Writing.",
                 input_tokens=150, output_tokens=40),
        text("Done: poem.txt has the haiku.", input_tokens=200, output_tokens=8),
    ]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path, skill))
    fake.assert_clean()

    assert result.status == "ok", result.error
    assert result.final_text == "Done: poem.txt has the haiku."
    assert (tmp_path / "work" / "poem.txt").read_text() == poem
    assert result.skill_triggered is True
    assert result.tool_calls == {"load_skill": 1, "write_file": 1}
    assert result.steps == 3 and result.errors_encountered == 0
    assert (result.usage.input_tokens, result.usage.output_tokens) == (450, 58)
    assert result.model == "claude-test"

    first, second, third = (r["body"] for r in fake.requests)
    assert "haiku-writer" in first["system"] and "Writes haiku" in first["system"]
    assert "Write exactly three lines" not in first["system"]  # body only via load_skill
    assert {t["name"] for t in first["tools"]} >= {"load_skill", "read_skill_file"}
    assert first["max_tokens"] == 512 and first["temperature"] == 0.0
    # The skill body reached the model as the load_skill tool_result.
    tool_result = second["messages"][2]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert "Write exactly three lines" in tool_result["content"]
    assert third["messages"][-1]["content"][0]["content"].startswith("wrote ")
    assert KEY not in json.dumps(result.transcript)


def test_baseline_has_no_skill_in_prompt_or_tools(tmp_path: Path) -> None:
    with FakeAnthropic([text("A haiku.")]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    body = fake.requests[0]["body"]
    assert "haiku-writer" not in body["system"]
    assert "load_skill" not in {t["name"] for t in body["tools"]}
    assert result.status == "ok" and result.skill_triggered is None


def test_skill_present_but_not_loaded_is_not_triggered(tmp_path: Path, skill) -> None:
    with FakeAnthropic([text("Rain falls.")]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path, skill))
    assert result.status == "ok" and result.skill_triggered is False


def test_rate_limit_and_overload_are_retried_and_recorded(tmp_path: Path) -> None:
    with FakeAnthropic([Failure(429, "rate limited"), Failure(529, "overloaded"),
                        text("ok after retries", input_tokens=7, output_tokens=3)]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    assert result.status == "ok" and result.final_text == "ok after retries"
    retries = [e for e in result.transcript if e["type"] == "retry"]
    assert [r["attempt"] for r in retries] == [1, 2]
    assert retries[0]["error"].startswith("RateLimitError")
    assert retries[1]["error"].startswith("OverloadedError")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (7, 3)


def test_persistent_failure_returns_error_status(tmp_path: Path) -> None:
    with FakeAnthropic([Failure(529), Failure(529)]) as fake:
        ex = make(fake, retry_attempts=2)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    assert result.status == "error" and result.error.startswith("OverloadedError")
    assert len([e for e in result.transcript if e["type"] == "retry"]) == 1


def test_client_error_is_not_retried(tmp_path: Path) -> None:
    with FakeAnthropic([Failure(400, "bad request")]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    assert result.status == "error" and "bad request" in result.error
    assert not [e for e in result.transcript if e["type"] == "retry"]


def test_max_turns_ends_with_error(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use("list_files", {}), tool_use("list_files", {})]) as fake:
        ex = make(fake, max_turns=2)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()  # exactly two calls: the loop stopped without a third request
    assert result.status == "error" and "max_turns (2)" in result.error
    assert result.steps == 2 and result.tool_calls == {"list_files": 2}


def test_token_budget_ends_with_error(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use("list_files", {}, input_tokens=900, output_tokens=200)]) as fake:
        ex = make(fake, token_budget=1000)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    assert result.status == "error" and "token budget" in result.error
    assert result.usage.total_tokens == 1100


def test_tool_errors_are_counted_and_sent_back_as_is_error(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use("read_file", {"path": "../../etc/passwd"}),
                        text("Could not read it.")]) as fake:
        ex = make(fake)
        result = ex.run(trial(ex, tmp_path))
    fake.assert_clean()
    assert result.status == "ok" and result.errors_encountered == 1
    sent = fake.requests[1]["body"]["messages"][-1]["content"][0]
    assert sent["is_error"] is True and "root:" not in sent["content"]


def test_cached_input_is_counted_inside_input(tmp_path: Path) -> None:
    with FakeAnthropic([text("hi", input_tokens=10, output_tokens=2, cache_read=90)]) as fake:
        ex = make(fake, prices={"input": 3.0, "output": 15.0, "cached_input": 0.3})
        result = ex.run(trial(ex, tmp_path))
    assert result.usage.input_tokens == 100 and result.usage.cached_input_tokens == 90
    assert result.usage.cost_usd == pytest.approx((10 * 3.0 + 90 * 0.3 + 2 * 15.0) / 1e6)


def test_trial_timeout_cuts_a_hanging_shell_command(tmp_path: Path) -> None:
    with FakeAnthropic([tool_use("run_shell", {"command": "sleep 60"})]) as fake:
        ex = make(fake)
        req = trial(ex, tmp_path)
        req = TrialRequest(prompt=req.prompt, workdir=req.workdir, skill=None, seed=1,
                           settings=ExecutorSettings(**{**ex.settings.__dict__,
                                                        "timeout_seconds": 1.5}))
        started = time.monotonic()
        result = ex.run(req)
    fake.assert_clean()  # no model call after the deadline
    assert time.monotonic() - started < 10
    assert result.status == "timeout" and "1.5s" in result.error
    assert AnthropicExecutor.handles_timeout is True


def test_retry_after_header_is_honoured(tmp_path: Path) -> None:
    """The API says "come back in 0.7 s"; retrying after the 0.01 s backoff would earn another 529."""
    with FakeAnthropic([Failure(529, "overloaded"), text("ok")], retry_after="0.7") as fake:
        ex = make(fake)
        t0 = time.monotonic()
        result = ex.run(trial(ex, tmp_path))
        took = time.monotonic() - t0
    fake.assert_clean()
    assert result.status == "ok"
    retries = [e for e in result.transcript if e["type"] == "retry"]
    assert [r["sleep_seconds"] for r in retries] == [0.7] and took >= 0.7
