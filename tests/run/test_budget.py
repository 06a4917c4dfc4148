"""A budget the run never passes (run/budget.py, `run --max-cost`), and `run --dry-run`'s plan and
cost range (run/estimate.py): the real `openai` executor and SDK against the loopback stand-in
for the hosted API (tests/fake_openai_api.py: every reply 50 prompt + 20 completion tokens),
priced by a price table in the config."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from budget_support import arm_totals, budget_suite, cost_range, graded_usages
from cli_runner import invoke
from fake_openai_api import FakeOpenAI

from skillassay.run.budget import Budget
from skillassay.run.schedule import execute_all
from skillassay.store.records import TrialRecord

PRICE = 1000.0  # USD per million tokens, in and out: 70 tokens a trial = $0.07
PER_TRIAL = 70 * PRICE / 1e6


def record(cost: float | None, k: int = 1) -> TrialRecord:
    return TrialRecord(eval_id=1, eval_name="e", configuration="with_skill", run_number=k, status="ok",
                       passed=True, cost_usd=cost)


@dataclass(frozen=True)
class Planned:
    """Stands for run.plan.Trial: the scheduler only hands it on, with its budget share set."""

    max_cost_usd: float | None = None


class Quiet:
    def trial_done(self, record: TrialRecord) -> None:
        pass


def test_first_trial_alone_then_the_most_expensive_so_far_is_the_worst_case() -> None:
    b = Budget(0.25)
    assert b.decide() == ("start", 0.25)  # alone, with all the money left (a proxy holds it to that)
    assert b.decide() == ("wait", 0.0)  # nothing says what a trial costs while the first runs
    b.settle(record(0.1), 0.25)
    assert b.decide() == ("start", 0.1)  # 0.1 spent + 0.1 reserved <= 0.25
    assert b.decide() == ("wait", 0.0)  # 0.1 + 0.1 + 0.1 > 0.25, one in flight
    b.settle(record(0.08), 0.1)
    assert b.decide() == ("stop", 0.0)  # 0.18 spent + 0.1 > 0.25, nothing in flight
    assert b.stopped and b.spent == pytest.approx(0.18)


def test_ceiling_worst_case_and_unknown_cost_stops() -> None:
    b = Budget(1.0, ceiling_worst=0.3)
    assert [b.decide()[0] for _ in range(4)] == ["start", "start", "start", "wait"]
    b.settle(record(None), 0.3)
    assert b.decide() == ("stop", 0.0)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_scheduler_never_passes_the_budget(concurrency: int) -> None:
    """Spent plus the worst case in flight stays within the budget at every start, in threads too."""
    spent, flying, peak = [0.0], [0.0], [0.0]
    lock = threading.Lock()
    budget = Budget(1.0, ceiling_worst=0.12)

    def runner(trial: Planned) -> TrialRecord:
        assert trial.max_cost_usd == 0.12  # its share of the budget, for a metering proxy to hold it to
        with lock:
            flying[0] += 0.12
            peak[0] = max(peak[0], spent[0] + flying[0])
        time.sleep(0.01)
        with lock:
            flying[0] -= 0.12
            spent[0] += 0.1
        return record(0.1)

    todo = [Planned() for _ in range(30)]
    done = execute_all(todo, runner, concurrency, Quiet(), budget=budget)  # type: ignore[arg-type]
    assert sum(r.cost_usd or 0 for r in done) <= 1.0 + 1e-12
    assert peak[0] <= 1.0 + 1e-12
    assert budget.stopped and len(done) == 9  # 0.9 spent + 0.12 > 1.0


def write_config(skill: Path, extra: dict) -> None:
    budget_suite(skill, executor="openai", model="fake-model", max_tokens=None, temperature=None,
                 prices={"fake-model": {"input": PRICE, "output": PRICE}}, **extra)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch):
    fake = FakeOpenAI(["The Acme VPN server listens on port 4433."] * 200).start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield fake
    fake.stop()


def test_budget_below_the_plan_stops_within_it_and_a_higher_budget_resumes(example_skill: Path, tmp_path: Path,
                                                                           api: FakeOpenAI) -> None:
    write_config(example_skill, {})
    ws = tmp_path / "ws"
    args = ["run", str(example_skill), "--workspace", str(ws), "--trials", "2", "-o", f"base_url={api.base_url}",
            "-o", "token_budget=100", "--concurrency", "3"]
    # The plan: 8 evals x 2 arms x 2 trials = 32 trials at $0.07 = $2.24.
    plan = invoke(*args, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert "32 to run" in plan.flat and not ws.exists()  # nothing written
    first = invoke(*args, "--max-cost", "1.0")
    assert first.exit_code == 3, first.output
    usages = graded_usages(ws)
    spent = sum(u["cost_usd"] for u in usages)
    assert {u["cost_source"] for u in usages} == {"priced"}
    assert 0 < spent <= 1.0 and len(usages) < 32
    assert "max_cost_usd" in first.flat and "more would finish the plan" in first.flat
    bench = json.loads((ws / "iteration-1" / "benchmark.json").read_text())
    assert arm_totals(ws) == pytest.approx(spent, abs=1e-9)  # the arm totals are the trials' costs
    assert any("budget" in n for n in bench["notes"])
    # the estimate now comes from the trials that ran, and brackets what the rest costs
    rest = invoke(*args, "--dry-run")
    assert "earlier iterations' per-trial costs" in rest.flat, rest.output
    second = invoke(*args, "--max-cost", "5")
    assert second.exit_code != 3 or "max_cost_usd" not in second.flat, second.output
    usages = graded_usages(ws)
    assert len(usages) == 32 and not (ws / "iteration-2").exists()  # resumed, not restarted
    assert sum(u["cost_usd"] for u in usages) == pytest.approx(32 * PER_TRIAL)
    assert arm_totals(ws) == pytest.approx(32 * PER_TRIAL)


def test_dry_run_brackets_the_cost_of_the_run_that_follows(example_skill: Path, tmp_path: Path,
                                                           api: FakeOpenAI) -> None:
    write_config(example_skill, {})
    ws = tmp_path / "ws"
    args = ["run", str(example_skill), "--workspace", str(ws), "--trials", "1", "-o", f"base_url={api.base_url}",
            "-o", "token_budget=100"]
    plan = invoke(*args, "--dry-run")
    assert plan.exit_code == 0 and not ws.exists()
    low, high = cost_range(plan.output)
    assert invoke(*args).exit_code in (0, 1, 3)
    actual = sum(u["cost_usd"] for u in graded_usages(ws))
    assert low <= actual <= high, (low, actual, high)


def test_max_cost_from_the_config_and_a_bad_one_is_refused(example_skill: Path, tmp_path: Path,
                                                          api: FakeOpenAI) -> None:
    write_config(example_skill, {"max_cost_usd": 0.3})
    ws = tmp_path / "ws"
    args = ["run", str(example_skill), "--workspace", str(ws), "--trials", "1", "-o", f"base_url={api.base_url}"]
    got = invoke(*args)
    assert got.exit_code == 3, got.output
    assert sum(u["cost_usd"] for u in graded_usages(ws)) <= 0.3
    bad = invoke(*args, "--max-cost", "0")
    assert bad.exit_code == 2 and "--max-cost" in bad.output


def test_adaptive_rounds_stop_at_the_budget(example_skill: Path, tmp_path: Path, api: FakeOpenAI) -> None:
    write_config(example_skill, {"adaptive": {"min_trials_per_eval": 1, "max_trials_per_eval": 3, "round_size": 1}})
    ws = tmp_path / "ws"
    got = invoke("run", str(example_skill), "--workspace", str(ws), "-o", f"base_url={api.base_url}",
                 "--concurrency", "2", "--max-cost", "0.5")
    assert got.exit_code == 3, got.output
    usages = graded_usages(ws)
    assert 0 < sum(u["cost_usd"] for u in usages) <= 0.5 and len(usages) < 16  # inside the first round
    assert "max_cost_usd" in got.flat
