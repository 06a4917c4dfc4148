"""A broken tool is an error, not a result (executors/harness_faults.py, agent_home.py): the
REAL `codex` against the loopback fake, with its home where Codex refuses to build its sandbox
helper (bwrap then fails every shell command) and where it must go; and the rule itself on
parsed Claude Code and Codex streams."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from agent_cli_support import run_scripted, run_trial
from fake_model_api import FakeModelAPI, Reply, ToolCall

from skillassay.executors.agent_home import homes_root, under_temp
from skillassay.executors.base import ExecutorSettings
from skillassay.executors.claude_code import parse_stream as parse_claude
from skillassay.executors.claude_code import shell_commands as claude_commands
from skillassay.executors.codex import CodexExecutor
from skillassay.executors.codex import shell_commands as codex_commands
from skillassay.executors.harness_faults import PREFIX, all_commands_broken

needs_codex = pytest.mark.skipif(shutil.which("codex") is None, reason="codex CLI not on PATH")
BWRAP_FAILURE = "bwrap: execvp codex-linux-sandbox: No such file or directory\n"


@pytest.fixture
def codex_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai-test-key-0123456789abcdef")
    monkeypatch.delenv("CODEX_API_KEY", raising=False)


def _run(api: FakeModelAPI, work: Path, skill, timeout: float = 60):
    settings = ExecutorSettings(model="gpt-5", timeout_seconds=timeout,
                                options={"base_url": api.base_url + "/v1", "max_retries": 0})
    return run_trial(CodexExecutor, settings, work, skill)


def _tool_output(api: FakeModelAPI) -> str:
    """What the shell tool answered the model (the fake sees it in the next request)."""
    inputs = api.model_requests()[1]["body"]["input"]
    return "".join(str(i.get("output")) for i in inputs if i.get("type") == "function_call_output")


@pytest.mark.agent_cli
@needs_codex
def test_codex_home_is_a_private_cache_folder_and_its_shell_commands_run(work, codex_env):
    """Codex's home is outside the temp folder, so its sandbox helper exists and a shell
    command really runs (today: `bwrap: execvp codex-linux-sandbox`, trial "ok"); the home is
    removed after the trial."""
    script = [Reply(tool_calls=[ToolCall("exec_command", {"cmd": "printf 'hi\\n' > out.txt; echo HOME=$CODEX_HOME"})]),
              Reply(text="done")]
    r, api = run_scripted(script, _run, work, None)
    output = _tool_output(api)
    assert "bwrap" not in output, output
    assert r.status == "ok", r.error
    assert (work / "out.txt").read_text() == "hi\n"
    home = Path(output.split("HOME=", 1)[1].split()[0])
    assert not under_temp(home) and homes_root() in home.parents, home
    assert not home.exists(), "the trial's home must be removed after it"
    # (no comparison of the whole homes folder: other tests' trials come and go there in parallel)


@pytest.mark.agent_cli
@needs_codex
def test_codex_without_its_sandbox_helper_is_an_error_with_the_cause(work, codex_env, monkeypatch, tmp_path):
    """Put the cache (hence Codex's home) inside the temp folder, as the old executor did: Codex
    refuses to create its helper and no shell command runs. The trial is an error naming that,
    never "ok" (today: ok, with an answer made without tools)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert under_temp(homes_root())
    script = [Reply(tool_calls=[ToolCall("exec_command", {"cmd": "printf 'hi\\n' > out.txt"})]), Reply(text="done")]
    r, _ = run_scripted(script, _run, work, None)
    assert r.status == "error"
    assert (r.error or "").startswith(PREFIX) and "sandbox helper" in (r.error or ""), r.error
    ready = CodexExecutor(ExecutorSettings()).ready()  # and preflight refuses that cache folder
    assert ready is not None and "XDG_CACHE_HOME" in ready and tempfile.gettempdir() in ready


# ------------------------------------------------------------------ the rule on parsed streams

def _claude_bash(outputs: list[tuple[bool, str]]) -> list[dict]:
    events: list[dict] = []
    for n, (failed, text) in enumerate(outputs):
        events.append({"type": "assistant", "message": {"id": f"m{n}", "content": [
            {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}]}})
        events.append({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": text, "is_error": failed}]}})
    events.append({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": 2,
                   "usage": {"input_tokens": 10, "output_tokens": 5}})
    return events


def test_claude_code_bash_refused_by_its_permission_mode_is_named():
    denied = "Claude requested permissions to use Bash, but you haven't granted it yet."
    cause = all_commands_broken(claude_commands(_claude_bash([(True, denied)])))
    assert cause is not None and "requested permissions to use Bash" in cause


def test_claude_code_bash_calls_all_failing_in_bwrap_are_named():
    events = _claude_bash([(True, "bwrap: Can't mkdir /w: Read-only file system"), (True, BWRAP_FAILURE)])
    assert parse_claude(events).status == "ok"  # the parser reports; the executor's _finish decides
    cause = all_commands_broken(claude_commands(events))
    assert cause is not None and "all 2 shell commands failed: bwrap: Can't mkdir" in cause


@pytest.mark.parametrize("outputs", [
    [(True, BWRAP_FAILURE), (False, "out.txt")],  # one command ran: the tools work
    [(True, "cat: /etc/shadow: Permission denied")],  # the task's own failure is a result
    [],  # no shell command at all
])
def test_a_command_that_ran_or_failed_for_the_task_is_no_harness_fault(outputs):
    assert all_commands_broken(claude_commands(_claude_bash(outputs))) is None


def test_codex_command_items_all_failing_in_bwrap_are_named():
    items = [{"type": "item.completed", "item": {"id": f"i{n}", "type": "command_execution", "command": "ls",
                                                 "aggregated_output": BWRAP_FAILURE, "exit_code": 1,
                                                 "status": "failed"}} for n in range(3)]
    cause = all_commands_broken(codex_commands(items))
    assert cause is not None and "all 3 shell commands failed" in cause and "codex-linux-sandbox" in cause
