"""The budget, the dry-run's estimate and the cost figures with the `openai` executor against a
REAL OpenAI-compatible server (llama-cpp-python's `llama_cpp.server` serving SmolLM2-135M), the
trials priced by a price table in the config: nothing here is faked."""

from __future__ import annotations

from pathlib import Path

import pytest
from budget_support import arm_totals, budget_suite, cost_range, graded_usages
from cli_runner import invoke

pytestmark = pytest.mark.model
PRICE = 10.0  # USD per million tokens, in and out
CEILING = 3000  # token_budget: a trial's worst case is 3000 tokens x $10/M = $0.03


def test_priced_trials_budget_and_estimate_against_llama_server(
        llama_server: str, example_skill: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    budget_suite(example_skill, evals=2, executor="openai", model="smollm2-135m", max_tokens=48, temperature=0.0,
                 trials_per_eval=2, timeout_seconds=120,  # eight trials
                 prices={"smollm2-135m": {"input": PRICE, "output": PRICE}})
    ws = tmp_path / "ws"
    args = ["run", str(example_skill), "--workspace", str(ws), "--concurrency", "1", "-o", f"base_url={llama_server}",
            "-o", f"token_budget={CEILING}", "-o", "max_turns=3"]
    plan = invoke(*args, "--dry-run")
    assert plan.exit_code == 0 and not ws.exists(), plan.output
    low, high = cost_range(plan.output)
    first = invoke(*args, "--max-cost", "0.035")  # one trial's ceiling ($0.03) and a little: a few trials
    assert first.exit_code == 3, first.output
    usages = graded_usages(ws)
    spent = sum(u["cost_usd"] for u in usages)
    assert {u["cost_source"] for u in usages} == {"priced"}
    for u in usages:  # tokens x the config's price, exactly
        assert u["cost_usd"] == pytest.approx((u["input_tokens"] + u["output_tokens"]) * PRICE / 1e6)
    assert 0 < spent <= 0.035 and 0 < len(usages) < 8
    second = invoke(*args, "--max-cost", "1")
    assert "max_cost_usd" not in second.flat, second.output
    usages = graded_usages(ws)
    total = sum(u["cost_usd"] for u in usages)
    assert len(usages) == 8 and not (ws / "iteration-2").exists()
    assert low <= total <= high, (low, total, high)
    assert arm_totals(ws) == pytest.approx(total, abs=1e-9)
