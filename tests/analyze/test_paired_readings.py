"""The paired figures under both readings (issue 34): benchmark.json records the difference's and
the ratio's interval for "evals like these" and for "these evals", the config's interval_reading
picks the one gated and printed, every printed interval names its reading, and under each reading
the interval holds the null exactly when the test beside it cannot reject."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from aa_simulation import BASE, SKILL, records

from skillassay.analyze import paired_intervals
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import evaluate
from skillassay.analyze.statistics import build_statistics
from skillassay.models import Thresholds
from skillassay.report.report import details

READINGS = ("population", "these_evals")


def _suite(skill: list[str], base: list[str]) -> list:
    return records({**{(e, SKILL): [c == "P" for c in s] for e, s in enumerate(skill)},
                    **{(e, BASE): [c == "P" for c in b] for e, b in enumerate(base)}})


# Six evals, ten trials: five improve a lot, one gets worse. The sign-flip test over evals can
# never reject with one eval against (p = 4/64): about evals like these nothing is shown. About
# these evals (only trial noise), +67 points over 60 trials an arm is far from chance.
SKILL_RUNS = ["P" * 10] * 5 + ["F" * 10]
BASE_RUNS = ["F" * 10] * 5 + ["P" * 6 + "F" * 4]


def _stats(reading: str, thresholds: dict | None = None) -> dict:
    cells = group_records(_suite(SKILL_RUNS, BASE_RUNS), (SKILL, BASE))
    return build_statistics(cells, SKILL, BASE, 10, thresholds or {}, interval_reading=reading)  # type: ignore[arg-type]


def test_both_readings_of_the_paired_figures_are_recorded() -> None:
    for reading in READINGS:
        paired = _stats(reading)["paired"]
        diff, ratio = paired["pass_rate_difference"], paired["improvement_ratio"]
        assert diff["interval_reading"] == ratio["interval_reading"] == reading
        assert set(diff["intervals"]) == set(diff["p_values"]) == set(ratio["intervals"]) == set(READINGS)
        assert diff["interval"] == diff["intervals"][reading] and diff["p_value"] == diff["p_values"][reading]
        assert ratio["interval"] == ratio["intervals"][reading]
    diff = _stats("population")["paired"]["pass_rate_difference"]
    assert diff["p_values"]["population"] >= 0.05 and diff["p_values"]["these_evals"] < 1e-6
    lo, hi = diff["intervals"]["these_evals"]
    assert 0 < lo < diff["mean"] < hi


def test_the_reading_picks_the_ratio_gates_verdict_and_its_p() -> None:
    th = {"min_improvement_ratio": 1.0}
    pop, fixed = _stats("population", th)["gates"], _stats("these_evals", th)["gates"]
    assert pop["min_improvement_ratio"]["decision"] == "INCONCLUSIVE"
    assert fixed["min_improvement_ratio"]["decision"] == "PASS"
    assert pop["min_improvement_ratio"]["reading"] == "population"
    assert fixed["min_improvement_ratio"]["reading"] == "these_evals"
    # The gate's p is the test the interval inverts: at 1 it is the difference's own.
    st = _stats("these_evals", th)
    assert st["gates"]["min_improvement_ratio"]["test_p_value"] == pytest.approx(
        st["paired"]["pass_rate_difference"]["p_value"], abs=1e-6)


def test_a_these_evals_ratio_fail_has_the_z_tests_p() -> None:
    th = {"min_improvement_ratio": 30.0}  # the ratio is 0.833 / 0.1 = 8.3
    g = _stats("these_evals", th)["gates"]["min_improvement_ratio"]
    assert g["decision"] == "FAIL" and g["interval"][1] < 30.0
    want = paired_intervals.ratio_these_p([10] * 5 + [0], [10] * 6, [0] * 5 + [6], [10] * 6, 30.0, side="less")
    assert g["fail_p_value"] == pytest.approx(min(want, 0.025), abs=1e-8)


def _random(rng: np.random.Generator) -> tuple[list, int]:
    n, k = int(rng.integers(2, 13)), int(rng.integers(1, 8))
    base = rng.beta(2, 2, n)
    skill = np.clip(base + rng.choice([0.0, 0.1, 0.3, 0.5]), 0, 1)
    passes = {}
    for e in range(n):
        passes[(e, SKILL)] = list(rng.random(k) < skill[e])
        passes[(e, BASE)] = list(rng.random(k) < base[e])
    return records(passes), k


@pytest.mark.sim
@pytest.mark.parametrize("reading", READINGS)
def test_each_readings_interval_holds_the_null_exactly_when_its_test_cannot_reject(reading: str) -> None:
    """150 random scenarios (2-12 evals, 1-7 trials, effects 0 to +0.5): 0 inside the difference's
    interval and 1 inside the ratio's exactly when the difference's p (same reading) is >= 0.05."""
    rng = np.random.default_rng(35)
    bad = []
    for i in range(150):
        recs, k = _random(rng)
        paired = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k,
                                  interval_reading=reading)["paired"]  # type: ignore[arg-type]
        d, r = paired["pass_rate_difference"], paired["improvement_ratio"]
        if d["interval"] is None or d["p_value"] is None:
            continue
        accepts = d["p_value"] >= 0.05
        if (d["interval"][0] <= 0 <= d["interval"][1]) != accepts:
            bad.append(("difference", i, d["interval"], d["p_value"]))
        if r["interval"] is not None:
            hi = math.inf if r["interval"][1] is None else r["interval"][1]
            if (r["interval"][0] <= 1 <= hi) != accepts:
                bad.append(("ratio", i, r["interval"], d["p_value"]))
    assert not bad, bad[:5]


def test_printed_paired_intervals_name_their_reading() -> None:
    th = Thresholds(min_improvement_ratio=1.0)
    for reading, phrase in (("population", "evals like these"), ("these_evals", "these evals")):
        bench = build_benchmark(_suite(SKILL_RUNS, BASE_RUNS), skill_name="s", skill_path=None, iteration=1,
                                timestamp="t", trials_requested=10, thresholds=th,
                                interval_reading=reading)  # type: ignore[arg-type]
        line = next(t for t in evaluate(bench, th).thresholds if t.key == "min_improvement_ratio").line()
        assert f", {phrase})" in line, line
        st = bench.model_dump(mode="json", by_alias=True, exclude_none=False)["statistics"]
        lines = details(st, None)
        assert f", {phrase})" in lines[0] and f", {phrase})" in lines[1], lines[:2]


def test_a_config_with_interval_reading_these_evals_gates_the_ratio_on_it(tmp_path: Path) -> None:
    """End to end: `aggregate` with the config's reading records both, `gate` decides on it."""
    from cli_runner import invoke
    from iteration_factory import write_iteration

    runs = {i + 1: (s, b) for i, (s, b) in enumerate(zip(SKILL_RUNS, BASE_RUNS, strict=True))}
    it = write_iteration(tmp_path, 1, runs, thresholds={"min_improvement_ratio": 1.0})
    assert invoke("gate", str(it)).exit_code == 3  # evals like these: undecided
    config = it / "skill-snapshot" / "evals" / "benchmark_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "interval_reading": "these_evals"}))
    assert invoke("aggregate", str(it), "--config", str(config)).exit_code == 0
    st = json.loads((it / "benchmark.json").read_text())["statistics"]
    assert st["paired"]["improvement_ratio"]["interval_reading"] == "these_evals"
    assert st["gates"]["min_improvement_ratio"]["decision"] == "PASS"
    result = invoke("gate", str(it))
    assert result.exit_code == 0 and ", these evals)" in result.output, result.output
