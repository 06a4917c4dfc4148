"""What a benchmark cost (analyze/cost.py, issue 36): arm totals that are the sum of the trials'
costs, unknown costs kept unknown, the skill's paired cost effect and cost per extra success,
and the max_avg_cost_usd gate, three-state like the token gate."""

from __future__ import annotations

import pytest

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.cost import extra_success_text, usd
from skillassay.analyze.gate import evaluate
from skillassay.models import Thresholds
from skillassay.store.records import TrialRecord


def trial(eval_id: int, config: str, k: int, passed: bool, cost: float | None, status: str = "ok") -> TrialRecord:
    return TrialRecord(eval_id=eval_id, eval_name=f"e{eval_id}", configuration=config, run_number=k,
                       status=status, passed=passed if status == "ok" else None, passed_count=int(passed),
                       total_count=1, tokens=100, duration_seconds=1.0, cost_usd=cost)


def bench(records: list[TrialRecord], **thresholds: float):
    return build_benchmark(records, skill_name="s", skill_path=None, iteration=1, timestamp="t",
                           trials_requested=3, thresholds=Thresholds(**thresholds),
                           arms=Arms("with_skill", "without_skill"))


def suite(n_evals: int, skill_cost: float, base_cost: float, skill_passes: int = 3, base_passes: int = 0,
          jitter: float = 0.0) -> list[TrialRecord]:
    out = []
    for e in range(1, n_evals + 1):
        for k in range(1, 4):
            wiggle = jitter * ((e * 7 + k * 3) % 5 - 2)
            out.append(trial(e, "with_skill", k, k <= skill_passes, round(skill_cost + wiggle, 6)))
            out.append(trial(e, "without_skill", k, k <= base_passes, round(base_cost + wiggle, 6)))
    return out


def test_arm_totals_are_the_sum_of_the_trials_costs_errored_trials_included() -> None:
    records = suite(4, 0.01, 0.004, jitter=0.001)
    records.append(trial(5, "with_skill", 1, False, 0.02, status="error"))  # paid for, no result
    records.append(trial(5, "without_skill", 1, False, 0.003))
    cost = bench(records).cost
    assert cost is not None
    for cfg in ("with_skill", "without_skill"):
        want = sum(r.cost_usd for r in records if r.configuration == cfg and r.cost_usd is not None)
        got = cost["configurations"][cfg]
        assert got["total_usd"] == pytest.approx(want, abs=1e-9)
        assert sum(pe["configurations"][cfg]["total_usd"] for pe in cost["per_eval"]) == pytest.approx(want)
        assert got["trials_unknown"] == 0 and got["total_is_lower_bound"] is False
        lo, hi = got["mean_per_trial_interval"]
        assert lo <= got["mean_per_trial_usd"] <= hi
    ws = cost["configurations"]["with_skill"]
    passes = sum(1 for r in records if r.configuration == "with_skill" and r.passed)
    assert ws["per_passing_trial_usd"] == pytest.approx(ws["total_usd"] / passes)


def test_unknown_cost_stays_unknown_never_zero() -> None:
    records = [trial(e, cfg, k, True, None) for e in (1, 2) for cfg in ("with_skill", "without_skill")
               for k in (1, 2)]
    records[0] = trial(1, "with_skill", 1, True, 0.5)
    cost = bench(records, max_avg_cost_usd=10.0).cost
    ws = cost["configurations"]["with_skill"]
    assert ws["trials_unknown"] == 3 and ws["trials_priced"] == 1 and ws["total_is_lower_bound"] is True
    assert ws["per_passing_trial_usd"] is None  # a total missing three trials is no cost per pass
    assert cost["configurations"]["without_skill"]["mean_per_trial_usd"] is None  # not 0


def test_cost_per_extra_success_with_interval_when_the_gain_is_clear() -> None:
    records = suite(10, 0.012, 0.004, skill_passes=3, base_passes=0, jitter=0.001)
    cost = bench(records).cost
    effect = cost["effect"]
    assert effect["mean_difference_usd"] == pytest.approx(0.008, abs=1e-9)
    lo, hi = effect["interval"]
    assert lo <= 0.008 <= hi
    extra = effect["per_extra_success"]
    assert extra["value_usd"] == pytest.approx(0.008)  # +$0.008 a task for +100 points
    assert extra["interval"][0] <= extra["value_usd"] <= extra["interval"][1]
    assert extra_success_text(cost) == "+$0.008 per task for +100 points: $0.008 per additional success " \
                                       "(95% CI $0.008..$0.008)"


def test_cost_per_extra_success_not_estimable_when_the_gain_may_be_zero() -> None:
    records = suite(6, 0.012, 0.004, skill_passes=2, base_passes=2, jitter=0.001)
    extra = bench(records).cost["effect"]["per_extra_success"]
    assert extra["value_usd"] is None and extra["interval"] is None
    assert extra["reason"].startswith("not estimable")


@pytest.mark.parametrize(("limit", "want"), [(0.05, "PASS"), (0.001, "FAIL"), (0.0101, "INCONCLUSIVE")])
def test_max_avg_cost_usd_is_gated_three_state_on_the_skill_arms_mean(limit: float, want: str) -> None:
    b = bench(suite(10, 0.01, 0.004, jitter=0.002), max_avg_cost_usd=limit)
    result = evaluate(b, Thresholds(max_avg_cost_usd=limit))
    (line,) = [t for t in result.thresholds if t.key == "max_avg_cost_usd"]
    assert line.status == want
    assert line.value == pytest.approx(b.cost["configurations"]["with_skill"]["mean_per_trial_usd"])
    assert b.statistics["gates"]["max_avg_cost_usd"]["decision"] == want
    assert "max_avg_cost_usd" in line.line()


def test_usd_format() -> None:
    assert [usd(x) for x in (0.0042, 1.234, 0.0, 12.0, -0.03)] == ["$0.0042", "$1.23", "$0.00", "$12.00", "-$0.03"]


def test_free_trials_say_so_in_a_few_words() -> None:
    """The embedded model's run printed a line of $0.00 figures ('$0.00 per additional success
    (95% CI $0.00..$0.00)'): trials that all cost nothing say so instead."""
    from skillassay.analyze.cost import cost_summary

    free = bench(suite(6, 0.0, 0.0)).cost
    assert free is not None
    assert cost_summary(free) == "cost: $0 (every trial cost nothing: a local model or an executor that calls none)"
    paid = bench(suite(6, 0.004, 0.002)).cost
    assert paid is not None and "per additional success" in cost_summary(paid)
