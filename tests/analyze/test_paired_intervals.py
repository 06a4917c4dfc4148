"""The paired figures' intervals are the inversions of the sign-flip tests printed beside them
(issue 34): "the test cannot confirm this difference" exactly when 0 is inside the difference's
interval, and the ratio gate over a baseline that passed nothing decides by the same paired test
as any other ratio, not by a separate pooled bound."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from aa_simulation import BASE, SKILL, records
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze import paired_intervals
from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics


def _scenario(rng: np.random.Generator) -> tuple[list, int]:
    n_evals, k = int(rng.integers(3, 13)), int(rng.integers(1, 6))
    base = rng.beta(2, 2, n_evals)
    skill = np.clip(base + rng.choice([0.0, 0.15, 0.3, 0.5]), 0, 1)
    passes = {}
    for e in range(n_evals):
        passes[(e, SKILL)] = list(rng.random(k) < skill[e])
        passes[(e, BASE)] = list(rng.random(k) < base[e])
    return records(passes), k


@pytest.mark.sim  # 300 random scenarios through build_statistics: ~20 CPU-s
def test_difference_interval_holds_zero_exactly_when_its_test_cannot_confirm() -> None:
    """Random scenarios (3-12 evals, 1-5 trials, effects 0 to +0.5): on the old code the t
    interval excluded 0 beside a sign-flip p >= 0.05 (or held it beside p < 0.05) in about 6.5%
    of them."""
    rng = np.random.default_rng(34)
    disagree = []
    for i in range(300):
        recs, k = _scenario(rng)
        d = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k)["paired"]["pass_rate_difference"]
        if d["interval"] is None or d["p_value"] is None:
            continue
        lo, hi = d["interval"]
        if (lo <= 0 <= hi) != (d["p_value"] >= 0.05):
            disagree.append((i, d["mean"], d["interval"], d["p_value"]))
    assert not disagree, disagree[:5]


def test_too_few_differing_evals_span_everything_and_say_so() -> None:
    """Five evals can never reach p < 0.05 (the smallest two-sided p is 2/32): no difference is
    ruled out, so the interval is the whole range and the explanation says why in words."""
    est = paired_intervals.difference_by_test_inversion([1.0, 1.0, 1.0, 1.0, 2 / 3], [0.0] * 5)
    assert est.interval == (-1.0, 1.0)
    assert "too few" in est.explanation and "any difference" in est.explanation


def test_difference_interval_edges_are_the_tests_edges() -> None:
    """Just inside an edge the shifted test does not reject, just outside it does."""
    from skillassay.stats.paired import sign_flip_p_value

    a = [1.0, 2 / 3, 1.0, 1 / 3, 1.0, 2 / 3, 1.0, 1.0]
    b = [0.0, 1 / 3, 1 / 3, 0.0, 2 / 3, 0.0, 1 / 3, 0.0]
    d = np.array(a) - np.array(b)
    lo, hi = paired_intervals.difference_by_test_inversion(a, b, floor_se=0.0).interval
    assert lo > 0
    for edge, inward in ((lo, 1e-4), (hi, -1e-4)):
        assert sign_flip_p_value(d - (edge + inward))[0] >= 0.05
        assert sign_flip_p_value(d - (edge - inward))[0] < 0.05


def _gate(*args: str) -> tuple[int, str]:
    result = cli(["gate", *args])
    return result.exit_code, result.output


def test_zero_baseline_ratio_needs_the_paired_test(tmp_path: Path) -> None:
    """Baseline 0/3 on each of 5 evals, skill 14/15: the paired sign-flip test cannot reject with
    5 evals, so the ratio gate is not a PASS (the old pooled, unclustered bound passed it: 2.24..inf,
    exit 0, beside a report saying the test cannot confirm it). With 6 evals the test rejects and
    the unbounded ratio passes with a finite lower bound."""
    evals = {i: ("PPP", "FFF") for i in range(1, 6)}
    evals[5] = ("PPF", "FFF")
    it = write_iteration(tmp_path / "five", 1, evals, thresholds={"min_improvement_ratio": 1.5})
    code, out = _gate(str(it))
    assert code == 3, out
    assert "INCONCLUSIVE: min_improvement_ratio: improvement ratio unbounded" in out
    st = json.loads((it / "benchmark.json").read_text())["statistics"]
    assert st["paired"]["pass_rate_difference"]["p_value"] >= 0.05
    assert st["gates"]["min_improvement_ratio"]["decision"] == "INCONCLUSIVE"

    six = {**evals, 6: ("PPP", "FFF")}
    it6 = write_iteration(tmp_path / "six", 1, six, thresholds={"min_improvement_ratio": 1.5})
    code, out = _gate(str(it6))
    assert code == 0, out
    assert "PASS: min_improvement_ratio: improvement ratio unbounded (95% CI " in out
    lower = float(out.split("improvement ratio unbounded (95% CI ")[1].split("..")[0])
    assert 1.5 < lower < math.inf
    imp = json.loads((it6 / "benchmark.json").read_text())["statistics"]["paired"]["improvement_ratio"]
    assert imp["unbounded"] is True and imp["interval"][1] is None


@pytest.mark.parametrize("ratio_bound", [0.5, 1.0, 2.0])
def test_ratio_interval_agrees_with_its_test_at_any_threshold(ratio_bound: float) -> None:
    """The ratio's interval holds thr exactly when the paired test of a_e - thr b_e does not reject
    (the zero-baseline case included), at the thresholds gates use."""
    from skillassay.stats.ratio import ratio_test_p

    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(4, 11))
        k = 3
        b = rng.integers(0, k + 1, n) / k
        a = np.clip(b + rng.integers(-1, 3, n) / k, 0, 1)
        est = paired_intervals.ratio_interval(a, b)
        if est.interval is None:
            continue
        lo, hi = est.interval
        inside = lo <= ratio_bound <= hi
        assert inside == (ratio_test_p(a, b, ratio_bound) >= 0.05), (a, b, est)


@pytest.mark.parametrize(("k", "n_evals", "effect"), [(1, 10, 0.25), (3, 10, 0.25), (10, 20, 0.15)])
def test_these_evals_difference_covers_its_own_truth(k: int, n_evals: int, effect: float) -> None:
    """The "these evals" reading against its own truth: the evals' true rates fixed, only the
    trials redrawn (80 eval sets x 20 redraws); its interval holds 0 exactly when its test's p >= 0.05."""
    rng = np.random.default_rng([k, n_evals])
    hit = total = 0
    for _ in range(80):
        b = rng.beta(2, 2, n_evals)
        a = np.clip(b + effect, 0, 1)
        truth = float((a - b).mean())
        for _ in range(20):
            est = paired_intervals.difference_these_evals(rng.binomial(k, a), [k] * n_evals, rng.binomial(k, b), [k] * n_evals)
            assert est is not None
            lo, hi = est.interval
            hit += lo <= truth <= hi
            total += 1
            assert (lo <= 0 <= hi) == (est.p_value >= 0.05) or min(abs(lo), abs(hi)) < 1e-12
    assert hit / total >= 0.93, hit / total
