"""The claude-code executor: its parser on recorded real runs, then the REAL `claude` CLI
driven against tests/fake_model_api.py (only the hosted model is faked), plus the shared
process-group helpers it runs on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
from agent_cli_support import check_availability, load_events, make_skill, run_scripted, run_stalled, run_trial
from fake_model_api import Disconnect, FakeModelAPI, HttpError, Reply, ToolCall

from skillassay.executors.base import ExecutorSettings, TransientError
from skillassay.executors.claude_code import (
    ClaudeCodeExecutor,
    build_argv,
    build_env,
    is_transient,
    parse_stream,
)
from skillassay.executors.subprocess_util import (
    events_from_lines,
    installed_skill,
    isolated_workdir,
    redact,
    run_process_group,
)

FAKE_KEY = "sk-ant-fake-test-key-0123456789"


# ------------------------------------------------------------------ parser, recorded runs

def test_parse_with_skill_run_reads_result_event_only():
    r = parse_stream(load_events("claude-2.1.328_with-skill_stream-json_partial.jsonl"),
                     skill_name="demo-skill")
    assert r.status == "ok" and r.error is None
    assert r.final_text == "All done: wrote out.txt."
    # result usage: input 300 + cache write 150 + cache read 600; cache read is the cached part
    assert r.usage.input_tokens == 1050
    assert r.usage.cached_input_tokens == 600
    assert r.usage.output_tokens == 60
    assert r.usage.cost_usd == pytest.approx(0.0025425)
    assert r.usage.raw["cache_creation_input_tokens"] == 150
    assert r.steps == 4 and r.agent_duration_ms == 249
    # partial stream_event tool_use blocks must not double count
    assert r.tool_calls == {"Skill": 1, "Write": 1}
    assert r.skill_triggered is True
    assert r.model == "claude-sonnet-4-5"
    assert len(r.transcript) == 29


def test_skill_triggered_names_the_skill_and_is_none_for_baseline():
    events = load_events("claude-2.1.328_with-skill_stream-json_partial.jsonl")
    assert parse_stream(events, skill_name="other-skill").skill_triggered is False
    assert parse_stream(events, skill_name=None).skill_triggered is None


def test_parse_max_turns_is_an_error_with_the_cli_reason():
    r = parse_stream(load_events("claude-2.1.328_error_max_turns.jsonl"), skill_name="demo-skill")
    assert r.status == "error"
    assert r.error is not None and "error_max_turns" in r.error
    assert "Reached maximum number of turns (1)" in r.error
    assert r.tool_calls == {"Skill": 1} and r.skill_triggered is True
    assert r.usage.input_tokens == 350 and r.usage.output_tokens == 20


def test_parse_counts_rejected_tool_results_as_errors():
    r = parse_stream(load_events("claude-2.1.328_disable-slash-commands.jsonl"),
                     skill_name="demo-skill")
    assert r.tool_calls == {"Write": 1}
    assert r.errors_encountered == 1
    assert r.skill_triggered is False


def test_parse_api_error_is_error_and_transient():
    """Claude Code 2.1.197 reports an exhausted 529 as subtype success + is_error."""
    events = load_events("claude-2.1.197_api_error_529.jsonl")
    r = parse_stream(events)
    assert r.status == "error"
    assert r.error is not None and "529" in r.error and not r.error.startswith("success")
    assert is_transient(events[-1])
    assert not is_transient({**events[-1], "api_error_status": 400})


def test_parse_without_result_event_leaves_usage_unknown():
    """What a killed run leaves: no result event, so no numbers rather than wrong ones."""
    events = load_events("claude-2.1.328_with-skill_stream-json_partial.jsonl")[:-1]
    r = parse_stream(events, skill_name="demo-skill")
    assert r.usage.input_tokens is None and r.usage.cost_usd is None
    assert r.tool_calls == {"Skill": 1, "Write": 1}
    assert r.steps == 3
    assert r.final_text == "All done: wrote out.txt."


# ------------------------------------------------------------------ argv and env

def test_argv_has_headless_flags_and_prompt_after_double_dash():
    settings = ExecutorSettings(model="claude-sonnet-4-5",
                                options={"max_turns": 7, "allowed_tools": ["Read", "Bash"]})
    argv = build_argv("claude", "-not a flag", settings)
    assert argv[:6] == ["claude", "-p", "--output-format", "stream-json", "--verbose",
                        "--permission-mode"]
    assert argv[argv.index("--allowedTools") + 1] == "Read,Bash"
    assert argv[argv.index("--max-turns") + 1] == "7"
    assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert argv[-2:] == ["--", "-not a flag"]


def test_default_allowed_tools_include_skill_and_file_tools():
    argv = build_argv("claude", "p", ExecutorSettings())
    tools = argv[argv.index("--allowedTools") + 1].split(",")
    assert {"Skill", "Read", "Write", "Edit", "Bash", "Glob", "Grep"} <= set(tools)
    assert "--max-turns" not in argv and "--model" not in argv


def test_env_is_isolated_and_keeps_credentials(tmp_path):
    base = {"CLAUDECODE": "1", "HOME": "/root", "ANTHROPIC_API_KEY": FAKE_KEY, "PATH": "/bin"}
    env = build_env(base, tmp_path, ExecutorSettings(options={"base_url": "http://x"}))
    assert "CLAUDECODE" not in env
    assert env["HOME"] == str(tmp_path)
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / ".claude")
    assert env["ANTHROPIC_API_KEY"] == FAKE_KEY and env["ANTHROPIC_BASE_URL"] == "http://x"
    assert env["DISABLE_AUTOUPDATER"] == "1"


def test_availability_reports_missing_binary_and_key(monkeypatch, tmp_path):
    check_availability(
        ClaudeCodeExecutor, monkeypatch, tmp_path, binary="claude",
        missing_binary="claude not found on PATH (npm install -g @anthropic-ai/claude-code)",
        key_vars=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        missing_key="ANTHROPIC_API_KEY not set", key=FAKE_KEY)


# ------------------------------------------------------------------ shared helpers

def test_redact_masks_secret_env_values_and_key_shapes():
    env = {"MY_SERVICE_TOKEN": "tok-abcdefgh12345", "HOME": "/home/dev-abcdefgh"}
    text = f"token tok-abcdefgh12345 key {FAKE_KEY} home /home/dev-abcdefgh"
    out = redact(text, env)
    assert "tok-abcdefgh12345" not in out and FAKE_KEY not in out
    assert "/home/dev-abcdefgh" in out


def test_events_from_lines_keeps_non_json_lines_and_redacts():
    lines = [json.dumps({"type": "system", "k": FAKE_KEY}), "not json", "", '{"type": "resu']
    events = events_from_lines(lines, {})
    assert [e["type"] for e in events] == ["system", "_raw_line", "_raw_line"]
    assert FAKE_KEY not in json.dumps(events)


def test_installed_skill_is_removed_after_the_run(tmp_path, work):
    skill = make_skill(tmp_path / "src")
    with installed_skill(skill, work / ".claude" / "skills") as dest:
        assert dest is not None and (dest / "SKILL.md").is_file()
    assert list(work.iterdir()) == []


def test_isolated_workdir_mirrors_changes_back_and_keeps_untouched_mtimes(work):
    (work / "keep.txt").write_text("keep")
    (work / "gone.txt").write_text("gone")
    (work / "edit.txt").write_text("old")
    mtime = (work / "keep.txt").stat().st_mtime_ns
    with isolated_workdir(work, "test-") as run_dir:
        assert run_dir != work and (run_dir / "keep.txt").read_text() == "keep"
        (run_dir / "gone.txt").unlink()
        (run_dir / "edit.txt").write_text("new")
        (run_dir / "sub").mkdir()
        (run_dir / "sub" / "made.txt").write_text("made")
    assert sorted(p.name for p in work.rglob("*")) == ["edit.txt", "keep.txt", "made.txt", "sub"]
    assert (work / "edit.txt").read_text() == "new"
    assert (work / "keep.txt").stat().st_mtime_ns == mtime
    assert not run_dir.exists()


def test_timeout_kills_the_whole_process_group(tmp_path):
    """A CLI's grandchildren (shells it spawned) must die with it, or the trial never ends."""
    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "print('child', child.pid, flush=True)\n"
              "time.sleep(60)\n")
    start = time.monotonic()
    out = run_process_group([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ),
                            timeout_seconds=1.0, grace_seconds=1.0)
    assert out.timed_out and time.monotonic() - start < 10
    assert out.stdout_lines and out.stdout_lines[0].startswith("child ")
    grandchild = int(out.stdout_lines[0].split()[1])
    assert out.pid is not None
    assert _gone(out.pid) and _gone(grandchild)


def test_sigterm_ignoring_child_is_sigkilled(tmp_path):
    script = ("import signal, time\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    out = run_process_group([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ),
                            timeout_seconds=1.0, grace_seconds=0.5)
    assert out.timed_out and out.returncode == -signal.SIGKILL
    assert out.stdout_lines == ["ready"]


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _is_zombie(pid):
            return True
        time.sleep(0.05)
    return False


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except (FileNotFoundError, IndexError):
        return True


# ------------------------------------------------------------------ the real CLI

needs_claude = pytest.mark.skipif(shutil.which("claude") is None,
                                  reason="claude CLI not on PATH "
                                         "(npm install -g @anthropic-ai/claude-code)")


@pytest.fixture
def claude_env(monkeypatch):
    """Credentials as a user would export them; the CLI must not retry for minutes in tests."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _run(api: FakeModelAPI, work: Path, skill, timeout: float = 60, **options):
    settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=timeout,
                                options={"base_url": api.base_url, **options})
    return run_trial(ClaudeCodeExecutor, settings, work, skill)


def _system_text(request: dict) -> str:
    return json.dumps(request["body"].get("system", "")) + json.dumps(request["body"]["messages"])


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_with_skill_triggers_skill_and_writes_file(tmp_path, work, claude_env):
    """The fake stands for the Anthropic Messages API: a model that calls the Skill tool,
    then Write, then answers; each reply carries the usage numbers asserted below."""
    skill = make_skill(tmp_path / "skills")
    script = [
        Reply(tool_calls=[ToolCall("Skill", {"skill": "demo-skill"})], input_tokens=100,
              output_tokens=20, cache_write_tokens=50),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "out.txt", "content": "hello\n"})],
              input_tokens=110, output_tokens=30, cache_read_tokens=200),
        Reply(text="Wrote out.txt.", input_tokens=120, output_tokens=10, cache_read_tokens=300),
    ]
    r, api = run_scripted(script, _run, work, skill)
    assert r.status == "ok", r.error
    assert (work / "out.txt").read_text() == "hello\n"
    assert not (work / ".claude").exists(), "installed skill must be removed after the run"
    assert r.skill_triggered is True
    assert r.tool_calls == {"Skill": 1, "Write": 1}
    assert r.final_text == "Wrote out.txt."
    assert r.usage.input_tokens == 100 + 50 + 110 + 200 + 120 + 300
    assert r.usage.cached_input_tokens == 500
    assert r.usage.output_tokens == 60
    assert r.usage.cost_usd is not None and r.usage.cost_usd > 0
    assert len(api.model_requests()) == 3
    assert "demo-skill" in _system_text(api.model_requests()[0])
    assert FAKE_KEY not in json.dumps(r.transcript)


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_baseline_has_no_skill_and_same_tools(tmp_path, claude_env):
    """Same fake API; the baseline arm's model must not be told about the skill, while the
    tool set it sees is identical to the with-skill arm's."""
    skill = make_skill(tmp_path / "skills")
    tool_sets = []
    for arm_skill in (skill, None):
        work = tmp_path / ("with" if arm_skill else "without")
        work.mkdir()
        script = [Reply(tool_calls=[ToolCall("Write", {"file_path": "out.txt", "content": "hi\n"})]),
                  Reply(text="done")]
        r, api = run_scripted(script, _run, work, arm_skill)
        assert r.status == "ok", r.error
        assert (work / "out.txt").is_file()
        first = api.model_requests()[0]
        tool_sets.append(sorted(t["name"] for t in first["body"]["tools"]))
        if arm_skill is None:
            assert r.skill_triggered is None
            assert "demo-skill" not in _system_text(first)
        else:
            assert r.skill_triggered is False  # listed but not used
            assert "demo-skill" in _system_text(first)
    assert tool_sets[0] == tool_sets[1]


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_does_not_see_skills_in_parent_dirs_of_the_workspace(tmp_path, claude_env):
    """Claude Code loads .claude/skills from every parent of its cwd; a workspace kept inside
    the project that holds the skill must still give the baseline arm no skill."""
    make_skill(tmp_path / "project" / ".claude" / "skills")
    work = tmp_path / "project" / "skill-workspace" / "work"
    work.mkdir(parents=True)
    r, api = run_scripted([Reply(text="done")], _run, work, None)
    assert r.status == "ok", r.error
    assert "demo-skill" not in _system_text(api.model_requests()[0])


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_max_turns_is_reported_as_error(work, claude_env):
    """The fake model keeps calling tools; --max-turns 1 stops the CLI after one turn."""
    script = [Reply(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "a\n"})])]
    r, api = run_scripted(script, _run, work, None, max_turns=1)
    assert r.status == "error"
    assert r.error is not None and "error_max_turns" in r.error
    assert r.tool_calls == {"Write": 1}
    assert r.usage.output_tokens == 20


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_stalled_model_times_out_and_group_is_killed(work, claude_env):
    """The fake opens the SSE stream and goes silent, as a hung API connection does."""
    r = run_stalled(_run, work)
    assert r.transcript and r.transcript[0].get("subtype") == "init"  # partial transcript kept
    assert r.usage.input_tokens is None
    assert r.agent_duration_ms is not None and r.agent_duration_ms >= 3000


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_overloaded_api_raises_transient(work, claude_env):
    """The fake answers 529 overloaded_error, as the hosted API does under load."""
    with FakeModelAPI([HttpError(529, "overloaded_error", "Overloaded")]) as api, \
            pytest.raises(TransientError, match="529"):
        _run(api, work, None)


# ------------------------------------------------------------------ tokens when `usage` is empty

def test_parse_reads_model_usage_when_usage_is_zero():
    """The result event of a run whose stream broke and whose non-streaming retry succeeded
    (as the real CLI wrote it, see test_real_cli_dropped_stream_counts_the_tokens_of_the_retry)."""
    event = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": "51820",
             "total_cost_usd": 0.006312,
             "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                       "output_tokens": 0},
             "modelUsage": {"claude-sonnet-4-5": {"inputTokens": 1554, "outputTokens": 110,
                                                  "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
                                                  "costUSD": 0.006312},
                            "claude-haiku-4-5": {"inputTokens": 40, "outputTokens": 5, "cacheReadInputTokens": 10,
                                                 "cacheCreationInputTokens": 0, "costUSD": 0.0001}}}
    r = parse_stream([event])
    assert r.status == "ok"
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_input_tokens) == (1604, 115, 10)
    assert r.usage.total_tokens == 1719 and r.usage.cost_usd == 0.006312


def test_parse_zero_usage_with_nothing_else_is_unknown_not_zero():
    """The 529 run: usage 0/0 and modelUsage {}. Zero would read as a perfect token score."""
    r = parse_stream(load_events("claude-2.1.197_api_error_529.jsonl"))
    assert r.usage.input_tokens is None and r.usage.output_tokens is None and r.usage.total_tokens is None
    assert r.usage.cost_usd is None


@pytest.mark.agent_cli
@needs_claude
def test_real_cli_dropped_stream_counts_the_tokens_of_the_retry(work, claude_env):
    """The fake drops the first (streamed) response; Claude Code retries without streaming and
    gets 1554 input / 110 output tokens, which its result event reports only in modelUsage."""
    script = [Disconnect(), Reply(text="The port is 51820.", input_tokens=1554, output_tokens=110)]
    r, api = run_scripted(script, _run, work, None)
    assert [bool(q["body"].get("stream")) for q in api.model_requests()] == [True, False]  # 2.1.197 omits it, 2.1.332 says false
    assert r.status == "ok", r.error
    assert r.final_text == "The port is 51820."
    # 1554/110 from the retry, plus what a newer CLI's side requests cost (2.1.332 makes one: 100/1)
    assert r.usage.input_tokens in (1554, 1654) and r.usage.output_tokens in (110, 111), r.usage
