"""A conversation resumed inside the sandbox (issue 39): the REAL `claude` and `codex` CLIs under
bubblewrap, and `claude` in docker, against the loopback fake of their API. Turn 1 starts the
session confined; turn 2, a new confined run (a new container), finds it in the trial's private
home and carries turn 1 in its request. Every turn goes through the same metering proxy (each turn's requests recorded apart),
and the shell command the agent runs in turn 2 sees the same private home and no key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_cli_support import ANSWERS, TURNS, history, make_skill, run_conversation, said_in_order
from docker_support import IMAGE, MOUNTS, docker_env  # noqa: F401 - the session fixture
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import KEY, KEY_VAR, needs_bwrap

from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.executors.codex import CodexExecutor
from skillassay.executors.pricing import price_table
from skillassay.sandbox import SandboxSpec

pytestmark = [pytest.mark.sandbox, pytest.mark.agent_cli]

PROBE = 'printf %s "${ANTHROPIC_API_KEY:-}${OPENAI_API_KEY:-}${CODEX_API_KEY:-}" > key.txt; ls -A "$HOME" > home.txt'
CASES = {
    "claude": (ClaudeCodeExecutor, ToolCall("Bash", {"command": PROBE, "description": "probe"}), ".claude",
               lambda url: {"base_url": url}),
    "codex": (CodexExecutor, ToolCall("exec_command", {"cmd": PROBE}), ".codex",
              lambda url: {"base_url": url + "/v1", "max_retries": 0}),
}


@needs_bwrap
@pytest.mark.parametrize("cli", sorted(CASES))
def test_a_session_resumes_inside_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: str) -> None:
    converse_confined(tmp_path, monkeypatch, cli, SandboxSpec(kind="bwrap"))


def test_a_claude_session_resumes_in_a_new_container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     docker_env: dict[str, str]) -> None:  # noqa: F811
    """One container per turn: turn 2's finds the session in the HOME mounted at the same path."""
    if "DOCKER_HOST" in docker_env:
        monkeypatch.setenv("DOCKER_HOST", docker_env["DOCKER_HOST"])
    converse_confined(tmp_path, monkeypatch, "claude", SandboxSpec(kind="docker", image=IMAGE, mounts=MOUNTS))


def converse_confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: str, spec: SandboxSpec) -> None:
    """Two turns of `cli` under `spec`; turn 2 runs a shell command that reports its key and HOME."""
    executor, probe, config_dir, options = CASES[cli]
    if shutil.which(executor.binary) is None:
        pytest.skip(f"{executor.binary} not on PATH")
    for var in (KEY_VAR, "OPENAI_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    for var in ("CODEX_API_KEY", "CLAUDECODE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    script = [Reply(text=ANSWERS[0], input_tokens=111, output_tokens=11),
              Reply(tool_calls=[probe], input_tokens=222, output_tokens=22),
              Reply(text=ANSWERS[1], input_tokens=333, output_tokens=33)]
    with FakeModelAPI(script) as api:
        settings = ExecutorSettings(model="claude-sonnet-4-5" if cli == "claude" else "gpt-5", timeout_seconds=90,
                                    sandbox=spec, options=options(api.base_url))
        r = run_conversation(executor, settings, work, make_skill(tmp_path / "skills"), TURNS[:2])
    assert r.status == "ok", r.error
    assert [t.final_text for t in r.turns] == list(ANSWERS[:2])
    assert said_in_order(api.model_requests()[1], history(TURNS[:2], ANSWERS[:1])) == history(TURNS[:2], ANSWERS[:1])
    metered = [[(q["usage"]["input_tokens"], q["usage"]["output_tokens"]) for q in e["requests"] if q.get("usage")]
               for e in r.transcript if e.get("type") == "_skillassay_proxy"]
    assert metered == [[(111, 11)], [(222, 22), (333, 33)]]  # the one proxy, turn by turn
    assert r.transcript[r.turns[1].transcript_start - 1]["type"] == "_skillassay_proxy"  # turn 1's, at its end
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in r.turns] == [(111, 11), (555, 55)]
    assert KEY not in (work / "key.txt").read_text() and KEY not in json.dumps(r.transcript)
    assert config_dir in (work / "home.txt").read_text().split()  # turn 2 ran in the private home of turn 1


@needs_bwrap
def test_the_budget_covers_the_whole_conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn costs $0.0045 at claude-sonnet-4-5's list prices and the trial may spend $0.008:
    no turn alone reaches it, but the one proxy of the conversation refuses turn 3's request."""
    if shutil.which("claude") is None:
        pytest.skip("claude not on PATH")
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    script = [Reply(text=answer, input_tokens=1000, output_tokens=100) for answer in ANSWERS]
    with FakeModelAPI(script) as api:
        settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=90, sandbox=SandboxSpec(kind="bwrap"),
                                    options={"base_url": api.base_url}, prices=price_table(None))
        r = ClaudeCodeExecutor(settings).run(TrialRequest(prompt=TURNS[0], turns=TURNS[1:], workdir=tmp_path,
                                                          skill=None, seed=1, settings=settings, max_cost_usd=0.008))
    assert len(api.model_requests()) == 2  # turn 3's never reached the provider
    assert [t.status for t in r.turns] == ["ok", "ok", "error"] and r.status == "error"
    assert [t.usage.cost_usd for t in r.turns[:2]] == [pytest.approx(0.0045)] * 2
    assert r.usage.cost_usd == pytest.approx(0.009)
    assert "budget" in (r.turns[2].error or ""), r.turns[2].error
