"""Claude Code's two token accounts (executors/claude_code._usage): when the result event's
`usage` and `modelUsage` disagree, the larger is recorded, with its source and the
disagreement in words, in metrics.json (run/execute.usage_provenance). The REAL `claude`
against the loopback fake reproduces the disagreement: a stream broken on a later turn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agent_cli_support import run_scripted, run_trial
from fake_model_api import Disconnect, FakeModelAPI, Reply, ToolCall

from skillassay.executors.base import ExecutorSettings
from skillassay.executors.claude_code import ClaudeCodeExecutor, parse_stream
from skillassay.run.execute import usage_provenance


@pytest.fixture
def claude_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key-0123456789")
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _run(api: FakeModelAPI, work: Path, skill):
    settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=60, options={"base_url": api.base_url})
    return run_trial(ClaudeCodeExecutor, settings, work, skill)


@pytest.mark.agent_cli
@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
def test_a_stream_broken_on_a_later_turn_counts_every_token_and_says_the_counts_disagree(work, claude_env):
    """Turn 1 streams (777/55); turn 2's stream drops and the CLI's non-streaming retry gets
    777/55 more. The server answered 1554/110 in all, as modelUsage says; `usage` says 777/55
    (today's figure)."""
    script = [Reply(tool_calls=[ToolCall("Write", {"file_path": "out.txt", "content": "hi\n"})],
                    input_tokens=777, output_tokens=55),
              Disconnect(), Reply(text="done", input_tokens=777, output_tokens=55)]
    r, api = run_scripted(script, _run, work, None)
    assert [bool(q["body"].get("stream")) for q in api.model_requests()] == [True, True, False]
    served = [(777, 55), (777, 55)]  # what the fake answered with a body (the dropped stream had none)
    assert r.status == "ok", r.error
    side = (100, 1) if (r.usage.input_tokens or 0) > 1554 else (0, 0)  # claude-code 2.1.332's side request
    assert (r.usage.input_tokens, r.usage.output_tokens) == tuple(map(sum, zip(*served, side, strict=True)))
    # confined (the default sandbox), the figure is the proxy's record of the provider's usage
    assert r.usage.source in ("modelUsage", "proxy")
    if r.usage.raw["input_tokens"] == 777:  # 2.1.197's `usage` undercounts: both accounts kept, the disagreement named
        assert r.usage.warning is not None and "777" in r.usage.warning and "1554" in r.usage.warning
    else:  # 2.1.332 counts the retry in `usage` too: the accounts agree
        assert r.usage.warning is None
    assert usage_provenance(r.usage) == {"token_source": r.usage.source,
                                         **({"token_warning": r.usage.warning} if r.usage.warning else {})}


def _result(usage: dict, model_usage: dict) -> dict:
    return {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": "x",
            "usage": usage, "modelUsage": model_usage}


def _entry(i: int, o: int) -> dict:
    return {"inputTokens": i, "outputTokens": o, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}


def test_usage_that_is_one_models_share_is_no_disagreement():
    """usage counts the main model; modelUsage adds a side model: the sum, without a warning."""
    r = parse_stream([_result({"input_tokens": 500, "output_tokens": 40},
                              {"claude-sonnet-4-5": _entry(500, 40), "claude-haiku-4-5": _entry(60, 5)})])
    assert (r.usage.input_tokens, r.usage.output_tokens) == (560, 45)
    assert r.usage.source == "modelUsage" and r.usage.warning is None


def test_agreeing_counts_have_no_warning_and_usage_alone_is_its_own_source():
    r = parse_stream([_result({"input_tokens": 500, "output_tokens": 40}, {"m": _entry(500, 40)})])
    assert r.usage.warning is None and r.usage.input_tokens == 500
    r = parse_stream([{**_result({"input_tokens": 500, "output_tokens": 40}, {}), "modelUsage": None}])
    assert r.usage.source == "usage" and r.usage.warning is None and usage_provenance(r.usage) == {"token_source": "usage"}


def test_a_larger_usage_than_model_usage_wins_and_is_shown():
    r = parse_stream([_result({"input_tokens": 900, "output_tokens": 90}, {"m": _entry(300, 30)})])
    assert (r.usage.input_tokens, r.usage.output_tokens) == (900, 90)
    assert r.usage.source == "usage" and "disagree" in (r.usage.warning or "")


def test_run_names_the_trials_whose_counts_disagreed(tmp_path):
    from skillassay.run.execute import token_note

    assert token_note([]) is None
    note = token_note([tmp_path / "run-1", tmp_path / "run-2"])
    assert note is not None and note.startswith("2 trials' token counts disagreed") and "run-1" in note


class _Metered:
    """What agent_cli reads of a MeteringProxy: its per-request records and their sums."""

    def __init__(self, usages: list[dict[str, int]]) -> None:
        self.records = [{"path": "/v1/messages", "status": 200, "usage": u} for u in usages]

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records:
            for k, v in r["usage"].items():
                out[k] = out.get(k, 0) + v
        return out


def test_the_proxys_record_is_the_token_figure_and_a_cli_that_disagrees_is_named() -> None:
    """Issue 33: token figures come from the provider's own usage as the proxy metered it,
    cross-checked with the CLI's; a disagreement is shown, never silently resolved."""
    from skillassay.executors.agent_cli import _add_metering, metered_tokens
    from skillassay.executors.base import TrialResult, Usage

    turns = [{"input_tokens": 700, "cache_read_input_tokens": 77, "output_tokens": 55}] * 2
    assert metered_tokens(_Metered(turns).totals()) == (1554, 110)
    result = TrialResult(usage=Usage(input_tokens=777, output_tokens=55, source="usage"))
    _add_metering(result, _Metered(turns))  # type: ignore[arg-type]
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.source) == (1554, 110, "proxy")
    assert result.usage.warning and "1554 in / 110 out" in result.usage.warning and "777 / 55" in result.usage.warning
    agreeing = TrialResult(usage=Usage(input_tokens=1554, output_tokens=110))
    _add_metering(agreeing, _Metered(turns))  # type: ignore[arg-type]
    assert agreeing.usage.warning is None and agreeing.usage.source == "proxy"
    silent = TrialResult(usage=Usage(input_tokens=5, output_tokens=1))
    _add_metering(silent, _Metered([]))  # type: ignore[arg-type]
    assert (silent.usage.input_tokens, silent.usage.warning) == (5, None)  # nothing metered: the CLI's stands
