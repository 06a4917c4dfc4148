"""The gate's false FAIL as a family (issue 16): Holm's step-down over the checks a gate makes,
and `min_pass_rate`'s one-sided promise at one trial per eval."""

from __future__ import annotations

import pytest
from aa_simulation import BASE, SKILL, benchmark, records
from scipy import stats as sps

from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import evaluate, holm_fail_levels
from skillassay.analyze.statistics import build_statistics
from skillassay.models import Thresholds

pytestmark = pytest.mark.sim  # Monte-Carlo checks of a statistical promise


def _passes(k: int, hits: list[int]) -> dict:
    out = {}
    for e, h in enumerate(hits):
        out[(e, SKILL)] = [True] * h + [False] * (k - h)
        out[(e, BASE)] = [True] * h + [False] * (k - h)
    return out


def test_holm_levels_step_down() -> None:
    """Holm (1979): the smallest p against alpha/m, the next against alpha/(m-1), ...; each
    capped at the one-sided 2.5% a single check promises."""
    assert holm_fail_levels({"a": 0.012, "b": 0.02, "c": 0.5}) == {"a": 0.05 / 3, "b": 0.025}
    assert holm_fail_levels({"a": 0.02, "b": 0.5, "c": 0.5}) == {}
    assert holm_fail_levels({"a": 0.02}) == {"a": 0.025}
    assert holm_fail_levels({"a": 0.02, "b": 0.5}) == {"a": 0.025}


def test_a_fail_at_its_own_level_is_not_a_fail_of_a_three_check_gate() -> None:
    """A pass rate whose interval just misses the threshold (one-sided p 0.02) fails a gate that
    checks it alone, but not one that checks three thresholds at a family-wise 5%: three checks
    at 2.5% each, all at the truth, falsely failed 8.0% of A/A gates at K = 10, 50 evals."""
    k, hits = 3, [0, 1, 1, 2, 2, 2, 3, 1, 2, 0]
    recs = records(_passes(k, hits))
    st = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, {"min_pass_rate": 0.99})
    g = st["gates"]["min_pass_rate"]
    se = (g["interval"][1] - g["value"]) / float(sps.t.ppf(0.975, g["n_evals"] - 1))
    thr = g["value"] + float(sps.t.ppf(0.98, g["n_evals"] - 1)) * se  # one-sided FAIL p = 0.02
    alone = Thresholds(min_pass_rate=thr)
    res = evaluate(benchmark(recs, k, alone), alone)
    assert res.status == "FAIL"
    t = res.thresholds[0]
    assert t.fail_p_value == pytest.approx(0.02, abs=1e-4) and t.fail_level == 0.025
    three = Thresholds(min_pass_rate=thr, max_avg_tokens=5000, min_improvement_ratio=0.01)
    res3 = evaluate(benchmark(recs, k, three), three)
    pr = next(t for t in res3.thresholds if t.key == "min_pass_rate")
    assert pr.status == "INCONCLUSIVE" and res3.status != "FAIL", res3.to_dict()
    assert "Holm" in pr.advice and "0.0167" in pr.advice
    adj = res3.to_dict()["fail_adjustment"]
    assert adj["method"].startswith("Holm") and adj["checks"] == 3 and adj["family_alpha"] == 0.05


@pytest.mark.parametrize("n_evals", [5, 10, 20, 50])
@pytest.mark.parametrize("truth", [0.3, 0.5, 0.8])
def test_min_pass_rate_false_pass_at_one_trial_per_eval_is_exact(n_evals: int, truth: float) -> None:
    """At K = 1 the pooled count is Binomial(E, truth) whatever the per-eval rates, so the false
    PASS probability of a threshold at the truth is a finite sum, computed exactly here; the
    eval-clustered t interval alone gave 3.3% (true 0.5) and 4.8% (0.8) false PASS and 4.0%
    false FAIL (0.3) at 50 evals, against the 2.5% each side promises."""
    false = {"PASS": 0.0, "FAIL": 0.0, "INCONCLUSIVE": 0.0}
    for x in range(n_evals + 1):
        recs = records(_passes(1, [1] * x + [0] * (n_evals - x)))
        st = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, 1, {"min_pass_rate": truth})
        false[st["gates"]["min_pass_rate"]["decision"]] += float(sps.binom.pmf(x, n_evals, truth))
    assert false["PASS"] <= 0.025 and false["FAIL"] <= 0.025, false
