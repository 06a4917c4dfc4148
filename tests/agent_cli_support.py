"""What the agent-CLI executor tests (test_claude_code, test_codex, and their _turns) share: recorded
runs, a demo skill, one trial of the real CLI against the fake model API (or a conversation of several
turns), and the availability check against a stub binary."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_model_api import FakeModelAPI, ScriptItem, Stall, conversation

from skillassay.executors.agent_cli import AgentCliExecutor
from skillassay.executors.base import ExecutorSettings, TrialRequest, TrialResult
from skillassay.executors.subprocess_util import events_from_lines
from skillassay.spec.skill import Skill, load_skill

FIXTURES = Path(__file__).parent / "fixtures" / "agent-cli"
PROMPT = "Create a greeting file out.txt."


def load_events(name: str) -> list[dict]:
    """Line by line through the same path the executors use (JSON parse + redaction)."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return events_from_lines(lines, {})


def make_skill(parent: Path) -> Skill:
    folder = parent / "demo-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: demo-skill\ndescription: Writes greeting files. Use when asked to create "
        "a greeting file.\n---\n# Demo\nWrite out.txt containing a greeting.\n", encoding="utf-8")
    return load_skill(folder)


def run_trial(executor_class: type[AgentCliExecutor], settings: ExecutorSettings, work: Path,
              skill: Skill | None) -> TrialResult:
    """One trial of PROMPT, as the engine would run it."""
    executor = executor_class(settings)
    return executor.run(TrialRequest(prompt=PROMPT, workdir=work, skill=skill, seed=1,
                                     settings=settings))


# A conversation of three user messages, and the answers the fake model gives them, in order.
TURNS = ("First question: which port?", "Second question: which protocol?", "Third question: summarise.")
ANSWERS = ("Port 4433.", "QUIC.", "QUIC on port 4433.")


def run_conversation(executor_class: type[AgentCliExecutor], settings: ExecutorSettings, work: Path,
                     skill: Skill | None, prompts: tuple[str, ...] = TURNS) -> TrialResult:
    """One multi-turn trial of `prompts`, as the engine would run it."""
    return executor_class(settings).run(TrialRequest(prompt=prompts[0], turns=prompts[1:], workdir=work,
                                                     skill=skill, seed=1, settings=settings))


def said_in_order(request: dict[str, Any], lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Which of `lines` ((role, text) pairs) a recorded model request carried, in the order the
    request had them: equal to `lines` when the request held the whole conversation so far."""
    return [(role, want) for role, text in conversation(request) for r, want in lines if role == r and want in text]


def history(prompts: tuple[str, ...], answers: tuple[str, ...]) -> list[tuple[str, str]]:
    """The conversation a request for the last of `prompts` must carry: every earlier prompt and
    its answer, then the last prompt."""
    lines = [line for prompt, answer in zip(prompts, answers, strict=False)
             for line in (("user", prompt), ("assistant", answer))]
    return [*lines, ("user", prompts[len(answers)])]


def run_scripted(script: list[ScriptItem], run: Callable[..., TrialResult], work: Path,
                 skill: Skill | None, *, hangup_ok: bool = False, **kwargs: Any) -> tuple[TrialResult, FakeModelAPI]:
    """`run(api, work, skill, **kwargs)` against a fake model API serving `script`, which must
    have been used up exactly, with no protocol failure. `hangup_ok`: the run may stop the CLI
    mid-answer (a trigger run, once the skill loads)."""
    with FakeModelAPI(script) as api:
        api.hangup_ok = hangup_ok
        result = run(api, work, skill, **kwargs)
    api.assert_clean()
    return result, api


def run_stalled(run: Callable[..., TrialResult], work: Path) -> TrialResult:
    """`run(api, work, None, timeout=3)` against a model that opens its stream and goes silent,
    as a hung API connection does: the trial must end as a timeout, soon after the 3 s."""
    start = time.monotonic()
    with FakeModelAPI([Stall()]) as api:
        result = run(api, work, None, timeout=3)
    assert time.monotonic() - start < 15
    assert result.status == "timeout" and "timed out after 3s" in (result.error or "")
    return result


def check_availability(executor_class: type[AgentCliExecutor], monkeypatch: pytest.MonkeyPatch,
                       bin_dir: Path, *, binary: str, missing_binary: str,
                       key_vars: tuple[str, ...], missing_key: str, key: str) -> None:
    """No binary on PATH, then a stub binary without credentials, then with the first key."""
    monkeypatch.setenv("PATH", str(bin_dir))
    ok, why = executor_class.availability()
    assert not ok and why == missing_binary
    fake_bin = bin_dir / binary
    fake_bin.write_text("#!/bin/sh\n")
    fake_bin.chmod(0o755)
    for var in key_vars:
        monkeypatch.delenv(var, raising=False)
    assert executor_class.availability() == (False, missing_key)
    monkeypatch.setenv(key_vars[0], key)
    assert executor_class.availability()[0] is True
