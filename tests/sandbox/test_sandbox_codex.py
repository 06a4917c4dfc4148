"""The REAL `codex` CLI, confined, against the loopback fake of the OpenAI Responses API whose
scripted model runs a hostile shell command: every escape of issue 33 works under `none` (with
Codex's own sandbox off, so the test can fail) and none under `bwrap`, where Codex's own nested
sandbox is off by default (ours confines it) and its key is a placeholder behind the proxy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_cli_support import make_skill
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import ALL_ESCAPED, KEY, KEY_VAR, NONE_ESCAPED, needs_bwrap, targets

from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.codex import CodexExecutor
from skillassay.sandbox import PLACEHOLDER_KEY, SandboxSpec

pytestmark = [pytest.mark.sandbox, pytest.mark.agent_cli,
              pytest.mark.skipif(shutil.which("codex") is None,
                                 reason="codex CLI not on PATH (npm install -g @openai/codex)")]


@needs_bwrap
@pytest.mark.parametrize(("kind", "expected"), [("none", ALL_ESCAPED), ("bwrap", NONE_ESCAPED)])
def test_a_hostile_shell_call_escapes_only_without_a_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             kind: str, expected: dict[str, bool]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    skill = make_skill(tmp_path / "skills")
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        script = [Reply(tool_calls=[ToolCall("exec_command", {"cmd": t.script() + "; printf %s \"$CODEX_API_KEY\""
                                                                              " > codex_key.txt"})],
                        input_tokens=111, output_tokens=22),
                  Reply(text="done", input_tokens=133, output_tokens=44)]
        with FakeModelAPI(script) as api:
            options = {"base_url": api.base_url + "/v1", "max_retries": 0}
            if kind == "none":
                options["sandbox"] = "danger-full-access"  # Codex's own, which fails nested (issue 33 item 4)
            settings = ExecutorSettings(model="gpt-5", timeout_seconds=90, sandbox=SandboxSpec(kind=kind),
                                        options=options)
            result = CodexExecutor(settings).run(TrialRequest(prompt="Do it.", workdir=work, skill=None, seed=1,
                                                              settings=settings))
        assert result.status == "ok", result.error
        assert t.escapes(work) == expected
    assert (work / "codex_key.txt").read_text() == (KEY if kind == "none" else PLACEHOLDER_KEY)
    if kind == "bwrap":
        assert result.usage.raw["proxy"]["output_tokens"] == 66
        assert KEY not in json.dumps(result.transcript)
