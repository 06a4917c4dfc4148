"""The budget and the cost figures with the real Claude Code CLI (issue 36's "Done when"): the CLI
runs against the loopback stand-in for the Anthropic API (tests/fake_model_api.py), which
reports each reply's usage; the CLI prices it (total_cost_usd), and that is the trial's cost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from budget_support import arm_totals, budget_suite, cost_range, graded_usages
from cli_runner import invoke
from fake_model_api import FakeModelAPI, Reply

pytestmark = [pytest.mark.agent_cli,
              pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")]
FAKE_KEY = "sk-ant-fake-test-key-0123456789"


def test_claude_code_costs_sum_to_the_arm_totals_and_the_budget_holds(
        example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    budget_suite(example_skill, evals=2, executor="claude-code", model="claude-sonnet-4-5", max_tokens=None,
                 temperature=None, trials_per_eval=1)  # four trials
    ws = tmp_path / "ws"
    script = [Reply(text="The server listens on port 4433.", input_tokens=1000, output_tokens=200)] * 8
    with FakeModelAPI(script) as api:
        args = ["run", str(example_skill), "--workspace", str(ws), "--sandbox", "none", "--concurrency", "1",
                "-o", f"base_url={api.base_url}"]
        first = invoke(*args, "--max-cost", "0.015")  # a trial costs about $0.006: two fit, four do not
        assert first.exit_code == 3, first.output
        usages = graded_usages(ws)
        assert {u["cost_source"] for u in usages} == {"reported"}
        spent = sum(u["cost_usd"] for u in usages)
        assert 0 < spent <= 0.015 and len(usages) == 2, usages
        assert "max_cost_usd" in first.flat
        estimate = invoke(*args, "--dry-run")
        low, high = cost_range(estimate.output)
        second = invoke(*args, "--max-cost", "1")
        assert "max_cost_usd" not in second.flat, second.output
    usages = graded_usages(ws)
    assert len(usages) == 4 and not (ws / "iteration-2").exists()
    rest = sum(u["cost_usd"] for u in usages) - spent
    assert low <= rest <= high, (low, rest, high)
    bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert {cfg: sum(r["configuration"] == cfg for r in bench["runs"]) for cfg in bench["cost"]["configurations"]} \
        == {"with_skill": 2, "without_skill": 2}
    assert arm_totals(ws) == pytest.approx(sum(u["cost_usd"] for u in usages), abs=1e-9)
