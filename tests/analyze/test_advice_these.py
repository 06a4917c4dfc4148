"""The sample-size advice follows the reading the gate decides on (issue 34): about "these evals"
only more trials per eval narrow the interval, so that is what it advises (never more evals),
and re-running at the trials advised decides the gate about as often as it promises."""

from __future__ import annotations

import numpy as np
from aa_simulation import BASE, SKILL, records

from skillassay.analyze import advice_these, paired_intervals, rate_intervals
from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics
from skillassay.stats.decide import decide


def _suite(counts_skill: list[int], counts_base: list[int], k: int) -> list:
    return records({**{(e, SKILL): [i < c for i in range(k)] for e, c in enumerate(counts_skill)},
                    **{(e, BASE): [i < c for i in range(k)] for e, c in enumerate(counts_base)}})


def _gates(reading: str, thresholds: dict, counts_skill: list[int], counts_base: list[int], k: int) -> dict:
    cells = group_records(_suite(counts_skill, counts_base, k), (SKILL, BASE))
    return build_statistics(cells, SKILL, BASE, k, thresholds, interval_reading=reading)["gates"]  # type: ignore[arg-type]


def test_an_undecided_these_evals_gate_is_advised_trials_not_evals() -> None:
    skill, base = [2, 3, 1, 2, 2, 3, 2, 1, 2, 3], [1, 2, 1, 1, 2, 1, 1, 0, 1, 2]
    th = {"min_pass_rate": 0.6, "min_improvement_ratio": 1.5}
    for key in th:
        pop = _gates("population", th, skill, base, 3)[key]
        fixed = _gates("these_evals", th, skill, base, 3)[key]
        assert pop["decision"] == fixed["decision"] == "INCONCLUSIVE", (key, pop, fixed)
        assert pop["evals_to_decide"] is not None, pop
        assert fixed["evals_to_decide"] is None and fixed["trials_to_decide"] > 3, fixed
        assert "trials per eval" in fixed["decide_note"] and "these evals" in fixed["decide_note"], fixed


def test_the_pass_rate_advice_keeps_its_promise_about_these_evals() -> None:
    """10 evals at the planned truth (0.1 above 0.6, every eval alike): re-run at the trials
    advised, the these-evals interval clears 0.6 at least as often as promised (400 re-runs)."""
    advice = advice_these.pass_rate_advice(0.65, 0.6, 10, 3, (0.1, "c"))
    k, promised = advice["trials_to_decide"], advice["planned_power"]
    assert promised >= 0.8
    rng = np.random.default_rng(1)
    hits = sum(decide(rate_intervals.pass_rate_interval(list(rng.binomial(k, 0.7, 10)), [k] * 10, "these_evals"),
                      0.6, "min") == "PASS" for _ in range(400))
    assert hits / 400 >= promised - 0.06, (k, promised, hits / 400)


def test_the_ratio_advice_keeps_its_promise_about_these_evals() -> None:
    """Baseline 0.4 on 10 evals, ratio gate at 1.5, the skill 0.1 above 1.5 x 0.4."""
    advice = advice_these.ratio_advice(0.65, 0.4, 1.5, 10, 3, 0.1)
    k, promised = advice["trials_to_decide"], advice["planned_power"]
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(400):
        a, b = list(rng.binomial(k, 0.7, 10)), list(rng.binomial(k, 0.4, 10))
        est = paired_intervals.ratio_these_evals(a, [k] * 10, b, [k] * 10)
        hits += est is not None and decide(est.interval, 1.5, "min") == "PASS"
    assert hits / 400 >= promised - 0.06, (k, promised, hits / 400)
