"""A dead provider costs under a minute (executors/give_up.py, run/stop.py): `run` and
`triggers` with the REAL `claude` and `codex` CLIs against the loopback fake answering 529
(or Codex's "high demand" 500) to every request, or opening each stream and going silent,
end with exit 2 and a message naming the failure in under 60 s. Before: 1,254 s for `run`
against a 529, 1,529 s against a stall; `triggers` ran every query to its end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_model_api import FakeModelAPI, HttpError, ScriptItem, Stall

from skillassay.executors.codex import is_transient
from skillassay.executors.give_up import GiveUp, ProviderWatch, failed_in_a_row, failures_of, no_answer
from skillassay.run.stop import SameErrorStreak

KEY = "sk-fake-0123456789abcdef0123"
HIGH_DEMAND = "We\u2019re currently experiencing high demand, which may cause temporary errors."
CLIS = {"claude-code": ("claude", "ANTHROPIC_API_KEY", ""), "codex": ("codex", "OPENAI_API_KEY", "/v1")}
STALL_SECONDS = 5
OVERLOADED = {"claude-code": HttpError(529, "overloaded_error", "Overloaded"),
              "codex": HttpError(500, "server_error", HIGH_DEMAND)}


def _env(key_var: str) -> dict[str, str]:
    """As a user runs it: the CLI's own retries at their defaults."""
    drop = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "CODEX_API_KEY",
            "CLAUDE_CODE_MAX_RETRIES", "CLAUDECODE")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, key_var: KEY}


def _skillassay(*args: str, env: dict[str, str]) -> tuple[int, str, float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "skillassay", *args], capture_output=True, text=True, env=env,
                          timeout=300)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split()), time.monotonic() - start


def _dead(executor: str, item: ScriptItem, command: str, skill: Path, ws: Path) -> tuple[int, str, float]:
    binary, key_var, suffix = CLIS[executor]
    if shutil.which(binary) is None:
        pytest.skip(f"{binary} not on PATH")
    model = "claude-sonnet-4-5" if executor == "claude-code" else "gpt-5"
    with FakeModelAPI([item] * 2000) as api:
        extra = ["--concurrency", "2"] if command == "run" else ["--runs", "1", "--concurrency", "2"]
        if isinstance(item, Stall):  # a silent stream ends at the first-answer horizon: 5 s, not the default 30
            extra += ["-o", f"first_answer_seconds={STALL_SECONDS}"]
        code, out, seconds = _skillassay(command, str(skill), "--executor", executor, "--model", model,
                                         "-o", f"base_url={api.base_url}{suffix}", "--workspace", str(ws), *extra,
                                         env=_env(key_var))
        asked = len(api.model_requests())
    assert asked > 0, out  # the provider was asked (preflight's probe is no model request)
    return code, out, seconds


def _ended_fast(code: int, out: str, seconds: float, command: str, says: str) -> None:
    assert code not in (0, 70) and code == 2, (code, out)
    assert f"{command} stopped" in out and says in out, out
    assert "Traceback" not in out
    assert seconds < 60, f"{seconds:.0f}s: {out}"


@pytest.mark.agent_cli
@pytest.mark.parametrize("executor", sorted(CLIS))
def test_run_against_an_overloaded_provider_stops_within_a_minute(executor, example_skill, tmp_path):
    code, out, seconds = _dead(executor, OVERLOADED[executor], "run", example_skill, tmp_path / "ws")
    _ended_fast(code, out, seconds, "run", "529" if executor == "claude-code" else "high demand")
    assert "the provider failed 5 times in a row" in out


@pytest.mark.agent_cli
@pytest.mark.parametrize("executor", sorted(CLIS))
def test_run_against_a_stalled_provider_stops_within_a_minute(executor, example_skill, tmp_path):
    code, out, seconds = _dead(executor, Stall(), "run", example_skill, tmp_path / "ws")
    _ended_fast(code, out, seconds, "run", f"the provider sent no answer within {STALL_SECONDS}s")


@pytest.mark.agent_cli
@pytest.mark.parametrize(("executor", "item"), [("claude-code", OVERLOADED["claude-code"]), ("codex", Stall())])
def test_triggers_against_a_dead_provider_stop_within_a_minute(executor, item, example_skill, tmp_path):
    code, out, seconds = _dead(executor, item, "triggers", example_skill, tmp_path / "ws")
    _ended_fast(code, out, seconds, "triggers", "529" if executor == "claude-code" else f"no answer within {STALL_SECONDS}s")


# ------------------------------------------------------------------ the rule, on plain data

def _watch(limit: int = 5, seconds: float = 30.0) -> ProviderWatch:
    return ProviderWatch(GiveUp(limit, seconds),
                         lambda e: e.get("cause") if e.get("type") == "retry" else None,
                         lambda e: e.get("type") == "answer")


def test_the_watch_gives_up_after_the_limit_of_failures_in_a_row():
    watch = _watch(3)
    assert not watch.line('{"type": "retry", "cause": "API status 529 overloaded"}')
    assert not watch.line('{"type": "answer"}')  # an answer starts the count again
    assert not any(watch.line('{"type": "retry", "cause": "API status 529 overloaded"}') for _ in range(2))
    assert watch.line('{"type": "retry", "cause": "API status 529 overloaded"}')
    assert watch.verdict == failed_in_a_row(3, "API status 529 overloaded")
    assert not watch.overdue() or watch.verdict.startswith("the provider failed")


def test_a_timeout_while_retrying_is_the_same_failure_as_the_retries():
    """Killed at the timeout mid-retry: the same error (hence signature) as a trial whose retries
    were cut short, not "timed out"."""
    watch = ProviderWatch(None, lambda e: e.get("cause"), lambda e: False)
    for _ in range(2):
        watch.line('{"cause": "API status 529 overloaded"}')
    assert watch.verdict is None  # no give_up: the CLI runs its course
    streak = SameErrorStreak(5)

    class Failed:
        status = "error"
        error = watch.retrying()

    class CutShort:
        status = "error"
        error = failed_in_a_row(5, "API status 529 overloaded")

    streak.add(Failed())
    streak.add(CutShort())
    assert streak.count == 2 + 5 and streak.tripped


def test_the_stop_rule_counts_a_trials_failures_and_a_silent_provider_as_the_whole_horizon():
    assert failures_of(failed_in_a_row(5, "x"), 5) == 5
    assert failures_of(no_answer(30), 5) == 5
    assert failures_of("transient error after 3 attempts: 529", 5) == 1
    assert SameErrorStreak(5).give_up() == GiveUp(5)
    assert SameErrorStreak(0).give_up() is None


def test_a_watch_with_a_short_horizon_is_overdue_until_the_model_answers():
    watch = _watch(5, 0.0)
    assert watch.overdue() and watch.verdict == no_answer(0.0)
    answered = _watch(5, 0.0)
    answered.line('{"type": "answer"}')
    assert not answered.overdue()


def test_codex_high_demand_500_is_retried_like_a_529():
    assert is_transient(HIGH_DEMAND)
    assert is_transient("unexpected status 529 <unknown status code>: Overloaded")


@pytest.mark.agent_cli
@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
def test_a_real_trial_killed_at_its_timeout_while_retrying_529s_is_that_failure(work, monkeypatch):
    """No give_up (the setup was proven): the CLI retries 529s until the 6 s timeout kills it.
    Recorded as the 529s it was retrying, the same signature as a trial cut short, not a
    "timed out" that would start the stop rule's count again."""
    from agent_cli_support import run_trial

    from skillassay.executors.base import ExecutorSettings
    from skillassay.executors.claude_code import ClaudeCodeExecutor
    from skillassay.run.stop import error_signature

    for var, value in _env("ANTHROPIC_API_KEY").items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
    with FakeModelAPI([OVERLOADED["claude-code"]] * 50) as api:
        settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=6, options={"base_url": api.base_url})
        r = run_trial(ClaudeCodeExecutor, settings, work, None)
    assert r.status == "error", (r.status, r.error)
    assert (r.error or "").startswith("the provider failed ") and "API status 529 overloaded" in (r.error or "")

    class CutShort:
        status = "error"
        error = failed_in_a_row(5, "API status 529 overloaded")

    assert error_signature(r) == error_signature(CutShort())


def test_the_first_answer_horizon_is_an_executor_option_checked_before_any_trial():
    from skillassay.errors import InputError
    from skillassay.executors.base import ExecutorSettings
    from skillassay.executors.claude_code import ClaudeCodeExecutor
    from skillassay.executors.give_up import with_first_answer

    assert ClaudeCodeExecutor(ExecutorSettings(options={"first_answer_seconds": "5"})).first_answer_seconds == 5
    assert ClaudeCodeExecutor(ExecutorSettings()).first_answer_seconds is None
    for bad in ("0", "-1", "soon"):
        with pytest.raises(InputError, match="first_answer_seconds"):
            ClaudeCodeExecutor(ExecutorSettings(options={"first_answer_seconds": bad}))
    assert with_first_answer(GiveUp(5), 5) == GiveUp(5, 5.0)
    assert with_first_answer(GiveUp(5), None) == GiveUp(5) and with_first_answer(None, 5) is None
