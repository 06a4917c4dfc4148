"""The codex executor: its parser on recorded real runs, then the REAL `codex` CLI driven
against tests/fake_model_api.py (only the hosted model is faked)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from agent_cli_support import check_availability, load_events, make_skill, run_scripted, run_stalled, run_trial
from fake_model_api import Disconnect, FakeModelAPI, HttpError, Reply, ToolCall

from skillassay.executors.base import ExecutorSettings, TransientError
from skillassay.executors.codex import (
    CodexExecutor,
    build_argv,
    build_env,
    is_transient,
    parse_stream,
    provider_overrides,
)

FAKE_KEY = "sk-fake-openai-test-key-0123456789abcdef"
# With a custom provider and no model given, Codex 0.171 picks a model whose only tool is a
# JavaScript `exec` sandbox; a named model gets the plain `exec_command` shell tool scripted
# below. Real OpenAI models handle either; the fake only replays one.
MODEL = "gpt-5"


# ------------------------------------------------------------------ parser, recorded runs

def test_parse_recorded_0_169_run():
    r = parse_stream(load_events("codex-0.169.0_exec_json.jsonl"), skill_name="demo-skill")
    assert r.status == "ok" and r.error is None
    assert r.final_text == "Done from mock."
    # cached_input_tokens is already a subset of input_tokens: kept as is
    assert r.usage.input_tokens == 2000 and r.usage.cached_input_tokens == 1200
    assert r.usage.output_tokens == 100
    assert r.usage.raw["reasoning_output_tokens"] == 40
    assert r.usage.cost_usd is None
    assert r.tool_calls == {"command_execution": 1}  # started + completed = one call
    assert r.skill_triggered is True
    assert r.steps == 2


def test_parse_recorded_0_171_run_with_failing_command_and_notice():
    r = parse_stream(load_events("codex-0.171.0_with-skill_exec_json.jsonl"),
                     skill_name="demo-skill")
    assert r.status == "ok"  # the `error` *item* (unknown model metadata) is only a notice
    assert r.tool_calls == {"command_execution": 3}
    assert r.errors_encountered == 1  # `cat missing.txt` exited 1
    assert r.usage.input_tokens == 4750 and r.usage.cached_input_tokens == 3450
    assert r.usage.output_tokens == 105
    assert r.skill_triggered is True and r.final_text == "Done from mock."


def test_skill_triggered_only_for_reading_that_skill():
    events = load_events("codex-0.169.0_exec_json.jsonl")
    assert parse_stream(events, skill_name="other-skill").skill_triggered is False
    assert parse_stream(events, skill_name=None).skill_triggered is None


def test_parse_accepts_legacy_item_type_field():
    """Older codex exec --json releases named the item kind `item_type`."""
    events = load_events("codex-0.169.0_exec_json.jsonl")
    legacy = []
    for e in events:
        if isinstance(e.get("item"), dict):
            item = dict(e["item"])
            item["item_type"] = item.pop("type")
            e = {**e, "item": item}
        legacy.append(e)
    r = parse_stream(legacy, skill_name="demo-skill")
    assert r.tool_calls == {"command_execution": 1}
    assert r.final_text == "Done from mock." and r.skill_triggered is True


def test_parse_turn_failed_is_error_and_transient():
    r = parse_stream(load_events("codex-0.171.0_turn_failed_429.jsonl"))
    assert r.status == "error"
    assert r.error == "exceeded retry limit, last status: 429 Too Many Requests"
    assert is_transient(r.error)
    assert is_transient("unexpected status 529 <unknown status code>: Overloaded, url: x")
    assert not is_transient('{"type": "error", "error": {"type": "invalid_request_error"}}')


def test_mcp_and_other_tool_items_are_counted_by_name():
    events = [
        {"type": "item.completed", "item": {"id": "1", "type": "mcp_tool_call", "server": "fs",
                                            "tool": "read", "status": "completed"}},
        {"type": "item.completed", "item": {"id": "2", "type": "file_change", "status": "failed",
                                            "changes": []}},
        {"type": "item.completed", "item": {"id": "3", "type": "web_search", "query": "q"}},
        {"type": "item.completed", "item": {"id": "4", "type": "reasoning", "text": "hm"}},
    ]
    r = parse_stream(events)
    assert r.tool_calls == {"mcp__fs__read": 1, "file_change": 1, "web_search": 1}
    assert r.errors_encountered == 1


# ------------------------------------------------------------------ argv and env

def test_argv_flags_provider_and_prompt_after_double_dash(tmp_path):
    settings = ExecutorSettings(model="gpt-5", options={"base_url": "http://127.0.0.1:9/v1",
                                                        "max_retries": 0})
    argv = build_argv("codex", "resume", tmp_path, settings)
    assert argv[:5] == ["codex", "exec", "--json", "--ephemeral", "--skip-git-repo-check"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("-C") + 1] == str(tmp_path)
    assert argv[argv.index("-m") + 1] == "gpt-5"
    assert argv[-2:] == ["--", "resume"]  # never parsed as the `resume` subcommand
    provider = argv[argv.index("-c") + 1]
    assert provider.startswith("model_providers.skillassay={")
    assert 'base_url="http://127.0.0.1:9/v1"' in provider
    assert 'wire_api="responses"' in provider and "supports_websockets=false" in provider
    assert "request_max_retries=0" in provider
    assert "model_provider=skillassay" in argv


def test_no_provider_override_without_base_url():
    assert provider_overrides({}) == []


def test_env_is_isolated_and_maps_openai_key(tmp_path):
    env = build_env({"HOME": "/root", "OPENAI_API_KEY": FAKE_KEY}, tmp_path)
    assert env["HOME"] == str(tmp_path)
    assert env["CODEX_HOME"] == str(tmp_path / ".codex") and (tmp_path / ".codex").is_dir()
    assert env["CODEX_API_KEY"] == FAKE_KEY


def test_availability_reports_missing_binary_and_key(monkeypatch, tmp_path):
    check_availability(
        CodexExecutor, monkeypatch, tmp_path, binary="codex",
        missing_binary="codex not found on PATH (npm install -g @openai/codex)",
        key_vars=("OPENAI_API_KEY", "CODEX_API_KEY"),
        missing_key="OPENAI_API_KEY (or CODEX_API_KEY) not set", key=FAKE_KEY)


# ------------------------------------------------------------------ the real CLI

needs_codex = pytest.mark.skipif(shutil.which("codex") is None,
                                 reason="codex CLI not on PATH (npm install -g @openai/codex)")


@pytest.fixture
def codex_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)


def _run(api: FakeModelAPI, work: Path, skill, timeout: float = 60):
    settings = ExecutorSettings(model=MODEL, timeout_seconds=timeout,
                                options={"base_url": api.base_url + "/v1", "max_retries": 0})
    return run_trial(CodexExecutor, settings, work, skill)


def _shell(cmd: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": cmd})


def _prompt_text(request: dict) -> str:
    return json.dumps(request["body"]["input"])


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_with_skill_reads_skill_and_writes_file(tmp_path, work, codex_env):
    """The fake stands for the OpenAI Responses API: a model that reads SKILL.md with the
    shell tool, writes the file, then answers; usage per reply is summed by Codex."""
    skill = make_skill(tmp_path / "skills")
    script = [
        Reply(tool_calls=[_shell("cat .agents/skills/demo-skill/SKILL.md")], input_tokens=1000,
              cache_read_tokens=600, output_tokens=50, reasoning_tokens=10),
        Reply(tool_calls=[_shell("printf 'hello\\n' > out.txt")], input_tokens=1200,
              cache_read_tokens=900, output_tokens=30),
        Reply(text="Wrote out.txt.", input_tokens=1300, cache_read_tokens=1000, output_tokens=10),
    ]
    r, api = run_scripted(script, _run, work, skill)
    assert r.status == "ok", r.error
    assert (work / "out.txt").read_text() == "hello\n"
    assert not (work / ".agents").exists(), "installed skill must be removed after the run"
    assert r.skill_triggered is True
    assert r.tool_calls == {"command_execution": 2}
    assert r.final_text == "Wrote out.txt."
    assert r.usage.input_tokens == 3500 and r.usage.cached_input_tokens == 2500
    assert r.usage.output_tokens == 90
    first = api.model_requests()[0]
    assert "demo-skill" in _prompt_text(first)
    assert FAKE_KEY not in json.dumps(r.transcript)


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_baseline_has_no_skill(work, codex_env):
    """Same fake API; the baseline model is never told about the skill."""
    script = [Reply(tool_calls=[_shell("printf 'hi\\n' > out.txt")]), Reply(text="done")]
    r, api = run_scripted(script, _run, work, None)
    assert r.status == "ok", r.error
    assert (work / "out.txt").is_file()
    assert r.skill_triggered is None
    assert r.tool_calls == {"command_execution": 1}
    assert r.usage.input_tokens == 200 and r.usage.output_tokens == 40
    assert "demo-skill" not in _prompt_text(api.model_requests()[0])


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_stalled_model_times_out(work, codex_env):
    """The fake opens the response stream and goes silent, as a hung connection does."""
    r = run_stalled(_run, work)
    assert r.transcript and r.transcript[0]["type"] == "thread.started"  # partial transcript
    assert r.usage.input_tokens is None


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_rate_limit_raises_transient(work, codex_env):
    """The fake answers 429 rate_limit_error, as the hosted API does when throttling."""
    with FakeModelAPI([HttpError(429, "rate_limit_error", "Rate limited")]) as api, \
            pytest.raises(TransientError, match="429"):
        _run(api, work, None)


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_bad_request_is_error_not_transient(work, codex_env):
    """A 400 from the API is the user's problem (bad model name...): no retry."""
    with FakeModelAPI([HttpError(400, "invalid_request_error", "no such model")]) as api:
        r = _run(api, work, None)
    assert r.status == "error" and "no such model" in (r.error or "")


# ------------------------------------------------------------------ skill_triggered from what was read

def _command(cmd: str, exit_code: int, output: str = "") -> list[dict]:
    item = {"id": "item_0", "type": "command_execution", "command": f"/bin/bash -lc {shlex.quote(cmd)}",
            "aggregated_output": output, "exit_code": exit_code,
            "status": "completed" if exit_code == 0 else "failed"}
    return [{"type": "item.completed", "item": item}, {"type": "turn.completed", "usage": {}}]


@pytest.mark.parametrize(("cmd", "exit_code", "output", "triggered"), [
    ("cd .agents/skills/demo-skill && cat SKILL.md", 0, "---\nname: demo-skill\n", True),
    ("cd /tmp/x/work/.agents/skills/demo-skill && sed -n '1,80p' SKILL.md", 0, "---\n", True),
    ("cat /tmp/x/work/.agents/skills/demo-skill/SKILL.md", 0, "---\n", True),
    ("cd .agents && cat skills/demo-skill/SKILL.md | head -n 20", 0, "---\n", True),
    ("cat /nonexistent/demo-skill/SKILL.md", 1, "cat: /nonexistent/demo-skill/SKILL.md: No such file or directory\n", False),
    ("cat .agents/skills/demo-skill/SKILL.md; true", 0, "cat: .agents/skills/demo-skill/SKILL.md: No such file or directory\n", False),
    ("cat .agents/skills/demo-skill/SKILL.md", 0, "If the VPN says No such file or directory, reinstall.\n", True),
    ("ls .agents/skills/demo-skill/SKILL.md", 0, ".agents/skills/demo-skill/SKILL.md\n", False),
    ("echo demo-skill/SKILL.md > notes.txt", 0, "", False),
    ("cat .agents/skills/other-skill/SKILL.md", 0, "---\n", False),
])
def test_skill_triggered_from_the_paths_really_read(cmd, exit_code, output, triggered):
    r = parse_stream(_command(cmd, exit_code, output), skill_name="demo-skill")
    assert r.skill_triggered is triggered


@pytest.mark.agent_cli
@needs_codex
@pytest.mark.parametrize(("cmd", "triggered"), [
    ("cd .agents/skills/demo-skill && cat SKILL.md", True),
    ("cat /nonexistent/demo-skill/SKILL.md", False),
])
def test_real_cli_skill_triggered_follows_cd_and_failure(tmp_path, work, codex_env, cmd, triggered):
    """The real Codex runs the command in its shell; what it reports decides."""
    skill = make_skill(tmp_path / "skills")
    script = [Reply(tool_calls=[_shell(cmd)]), Reply(text="done")]
    r, _ = run_scripted(script, _run, work, skill)
    assert r.status == "ok", r.error
    assert r.skill_triggered is triggered, r.transcript


# ------------------------------------------------------------------ a dropped stream Codex recovered from

def test_reconnect_notice_followed_by_a_completed_turn_is_not_a_failure():
    events = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion: "
                                     "stream closed before response.completed)"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "51820"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 20}},
    ]
    r = parse_stream(events)
    assert r.status == "ok" and r.error is None and r.final_text == "51820"
    assert r.errors_encountered == 1  # the blip is counted, and kept in the transcript
    # the same notice with no completed turn after it is the run's failure
    r = parse_stream(events[:3])
    assert r.status == "error" and "stream disconnected" in (r.error or "")


@pytest.mark.agent_cli
@needs_codex
def test_real_cli_recovers_from_a_dropped_stream(work, codex_env):
    """The fake drops the first response stream; Codex reports `Reconnecting... 1/1` as a
    top-level error event, retries, and completes the turn with the right answer."""
    with FakeModelAPI([Disconnect(), Reply(text="The port is 51820.")]) as api:
        settings = ExecutorSettings(model=MODEL, timeout_seconds=60,
                                    options={"base_url": api.base_url + "/v1", "max_retries": 1})
        r = run_trial(CodexExecutor, settings, work, None)
    assert any(e.get("type") == "error" and "Reconnecting" in str(e.get("message")) for e in r.transcript), r.transcript
    assert r.status == "ok", r.error
    assert r.final_text == "The port is 51820."
    assert r.usage.input_tokens == 100 and r.usage.output_tokens == 20


def test_zero_usage_is_unknown_not_zero():
    events = [{"type": "item.completed", "item": {"id": "1", "type": "agent_message", "text": "hi"}},
              {"type": "turn.completed", "usage": {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}}]
    r = parse_stream(events)
    assert r.usage.input_tokens is None and r.usage.total_tokens is None
