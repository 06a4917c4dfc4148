"""The run's budget at the metering proxy (issue 36): the proxy refuses a trial's request once the
provider's own usage, priced, has reached the trial's share of the budget; the provider then
never sees the request. With real sockets, and with the REAL `claude` CLI confined in bwrap
against the loopback fake of the Anthropic API (tests/fake_model_api.py)."""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import KEY, KEY_VAR, Upstream, needs_bwrap

from skillassay.executors.agent_cli import trial_allowance
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.executors.pricing import ModelPrice, metered_usd, price_table
from skillassay.sandbox import MeteringProxy, SandboxSpec

ANSWER = json.dumps({"usage": {"input_tokens": 1000, "output_tokens": 100}}).encode()
PRICE = ModelPrice(input=3.0, output=15.0)  # a request: 1000 x $3/M + 100 x $15/M = $0.0045


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream(ANSWER) as up:
        yield up


def post(url: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=10)
    conn.request("POST", "/v1/messages", body=b"{}", headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read())


def test_requests_past_the_trials_share_are_refused_and_never_reach_the_provider(upstream: Upstream) -> None:
    with MeteringProxy(upstream.url(), {"x-api-key": "sk-real"}, allowance=trial_allowance(0.01, PRICE)) as proxy:
        answers = [post(proxy.url) for _ in range(4)]
    assert [status for status, _ in answers] == [200, 200, 200, 402]  # $0.0135 >= $0.01 before the 4th
    assert len(upstream.seen) == 3
    assert answers[3][1]["error"]["type"] == "budget_exceeded" and "--max-cost" in answers[3][1]["error"]["message"]
    assert metered_usd(proxy.totals(), PRICE) == pytest.approx(3 * 0.0045)


def test_metered_usd_prices_anthropic_cache_fields() -> None:
    price = price_table(None)["claude-sonnet-4-5"]
    totals = {"input_tokens": 1000, "cache_read_input_tokens": 10000, "cache_creation_input_tokens": 2000,
              "output_tokens": 500}
    assert metered_usd(totals, price) == pytest.approx((1000 * 3 + 10000 * 0.3 + 2000 * 3.75 + 500 * 15) / 1e6)


@pytest.mark.sandbox
@pytest.mark.agent_cli
@needs_bwrap
@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
def test_the_confined_claude_cli_is_stopped_at_its_share_and_costed_by_the_proxy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    # An agent that keeps working: each turn $0.0045 at claude-sonnet-4-5's list prices.
    turn = Reply(tool_calls=[ToolCall("Bash", {"command": "echo step", "description": "step"})],
                 input_tokens=1000, output_tokens=100)
    settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=90, sandbox=SandboxSpec(kind="bwrap"),
                                options={"base_url": ""}, prices=price_table(None))
    with FakeModelAPI([turn] * 10 + [Reply(text="done")]) as api:
        settings = ExecutorSettings(model=settings.model, timeout_seconds=90, sandbox=settings.sandbox,
                                    options={"base_url": api.base_url}, prices=settings.prices)
        result = ClaudeCodeExecutor(settings).run(TrialRequest(prompt="Do the task.", workdir=work, skill=None,
                                                               seed=1, settings=settings, max_cost_usd=0.01))
        served = len(api.model_requests())
    assert served == 3, served  # the 4th request was refused at the proxy: $0.0135 had been spent
    proxy = next(e for e in result.transcript if e.get("type") == "_skillassay_proxy")["requests"]
    assert [r["status"] for r in proxy][-1] == 402
    assert result.status == "error"
    assert result.usage.cost_source == "priced" and result.usage.cost_usd == pytest.approx(3 * 0.0045)
