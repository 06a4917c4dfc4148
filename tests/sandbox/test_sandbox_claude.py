"""The REAL `claude` CLI, confined, against the loopback fake of the Anthropic API
(tests/fake_model_api.py) whose scripted model runs a hostile Bash command: under `none` every
escape of issue 33 works (so the test can fail), under `bwrap` none does; the CLI talks to the
metering proxy with a placeholder key, and the proxy records the fake's usage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_cli_support import make_skill
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import ALL_ESCAPED, KEY, KEY_VAR, NONE_ESCAPED, needs_bwrap, targets

from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.sandbox import PLACEHOLDER_KEY, SandboxSpec

pytestmark = [pytest.mark.sandbox, pytest.mark.agent_cli,
              pytest.mark.skipif(shutil.which("claude") is None,
                                 reason="claude CLI not on PATH (npm install -g @anthropic-ai/claude-code)")]


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def run_claude(api: FakeModelAPI, work: Path, kind: str, skill_under_test: str | None = None):
    settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=90, sandbox=SandboxSpec(kind=kind),
                                options={"base_url": api.base_url}, skill_under_test=skill_under_test)
    return ClaudeCodeExecutor(settings).run(TrialRequest(prompt="Do the task.", workdir=work, skill=None, seed=1,
                                                         settings=settings))


@needs_bwrap
@pytest.mark.parametrize(("kind", "expected"), [("none", ALL_ESCAPED), ("bwrap", NONE_ESCAPED)])
def test_a_hostile_bash_call_escapes_only_without_a_sandbox(tmp_path: Path, claude_env: None, kind: str,
                                                            expected: dict[str, bool]) -> None:
    skill = make_skill(tmp_path / "skills")
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        script = [Reply(tool_calls=[ToolCall("Bash", {"command": t.script(), "description": "probe"})],
                      input_tokens=111, output_tokens=22),
                  Reply(text="done", input_tokens=133, output_tokens=44)]
        with FakeModelAPI(script) as api:
            result = run_claude(api, work, kind)
        assert result.status == "ok", result.error
        assert "probed" in json.dumps(api.model_requests()[1]["body"]["messages"])  # the command ran
        assert t.escapes(work) == expected
    key_seen = (work / "key.txt").read_text()
    assert key_seen == (KEY if kind == "none" else PLACEHOLDER_KEY)
    proxy = [e for e in result.transcript if e.get("type") == "_skillassay_proxy"]
    if kind == "none":
        assert not proxy
    else:  # the provider's own usage, request by request, beside the CLI's report
        usage = [r["usage"] for r in proxy[0]["requests"] if r["path"].endswith("/messages")]
        assert [(u["input_tokens"], u["output_tokens"]) for u in usage] == [(111, 22), (133, 44)]
        assert result.usage.raw["proxy"]["output_tokens"] == 66
        assert KEY not in json.dumps(result.transcript)
