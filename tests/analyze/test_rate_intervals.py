"""Issue 34: one interval per per-configuration figure, the inversion of the test its gate uses,
in two named readings ("evals like these", "these evals"), each measured against its own truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from aa_simulation import BASE, SKILL, benchmark, records

from skillassay.analyze import rate_intervals as ri
from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import evaluate
from skillassay.analyze.statistics import build_statistics
from skillassay.models import Thresholds
from skillassay.stats.beta_binomial import beta_binomial_mean_interval
from skillassay.stats.binomial import clopper_pearson_interval
from skillassay.stats.means import binomial_floor_se, clustered_mean


def _stats(passes: dict, k: int, thresholds: dict, reading: ri.Reading = "population") -> dict:
    recs = records(passes)
    chosen = {} if reading == "population" else {"interval_reading": reading}
    return build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, thresholds, **chosen)


def _suite(counts: list[int], k: int) -> dict:
    passes = {}
    for e, c in enumerate(counts):
        passes[(e, SKILL)] = [True] * c + [False] * (k - c)
        passes[(e, BASE)] = [False] * k
    return passes


def test_the_pass_rate_interval_is_one_method_not_a_hull() -> None:
    """5 evals x 10 trials: the gate's interval is the beta-binomial profile interval itself.
    It was the hull with the floored t interval, wider than the test that decides it."""
    counts = [10, 9, 10, 4, 8]
    st = _stats(_suite(counts, 10), 10, {"min_pass_rate": 0.5})
    bb = beta_binomial_mean_interval(counts, [10] * 5)
    assert st["gates"]["min_pass_rate"]["interval"] == pytest.approx(list(bb), abs=1e-6)
    assert st["configurations"][SKILL]["pass_rate_interval"] == pytest.approx(list(bb), abs=1e-6)


def test_one_trial_per_eval_is_clopper_pearson_on_the_pooled_count() -> None:
    counts = [1] * 14 + [0] * 6
    st = _stats(_suite(counts, 1), 1, {"min_pass_rate": 0.5})
    assert st["gates"]["min_pass_rate"]["interval"] == pytest.approx(
        list(clopper_pearson_interval(14, 20)), abs=1e-6)


@pytest.mark.parametrize("reading", ["population", "these_evals"])
@pytest.mark.parametrize(("counts", "k"), [([3, 2, 0, 1, 2, 3], 3), ([1, 0, 1, 1, 0, 1, 0, 0], 1),
                                           ([10, 9, 10, 4, 8], 10), ([0, 3, 3, 1, 3] * 5, 3)])
def test_the_fail_p_is_the_test_the_interval_inverts(reading: ri.Reading, counts: list[int], k: int) -> None:
    """Just above the upper end the test rejects "at least x" at 2.5%, just below it does not:
    so the gate's FAIL and the printed interval can never disagree (25 evals: the joint test)."""
    lo, hi = ri.pass_rate_interval(counts, [k] * len(counts), reading) or (0.0, 0.0)
    assert ri.pass_rate_p_at_least(counts, [k] * len(counts), hi + 1e-4, reading) < 0.025
    assert ri.pass_rate_p_at_least(counts, [k] * len(counts), hi - 1e-4, reading) > 0.025


def test_both_readings_are_recorded_and_the_gate_says_which_it_used() -> None:
    counts = [3, 3, 2, 3, 3, 3, 2, 3, 3, 3]
    st = _stats(_suite(counts, 3), 3, {"min_pass_rate": 0.7, "max_avg_tokens": 2000.0})
    conf = st["configurations"][SKILL]
    assert set(conf["pass_rate_intervals"]) == {"population", "these_evals"}
    assert conf["pass_rate_intervals"]["population"] == conf["pass_rate_interval"]
    assert conf["interval_reading"] == st["interval_reading"] == "population"
    assert set(conf["avg_tokens"]["intervals"]) == {"population", "these_evals"}
    assert st["gates"]["min_pass_rate"]["reading"] == "population"


def test_the_config_picks_the_reading_the_gate_decides_on_and_the_line_says_it() -> None:
    """20 evals x 10 trials, half always pass, half pass 7 of 10: about these evals the rate is
    certainly above 0.75; about evals like these (half of which might pass 70%) it is not."""
    counts = [10] * 10 + [7] * 10
    recs = records(_suite(counts, 10))
    th = Thresholds(min_pass_rate=0.78)
    pop = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, 10, th.model_dump())
    fixed = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, 10, th.model_dump(),
                             interval_reading="these_evals")
    assert pop["gates"]["min_pass_rate"]["decision"] == "INCONCLUSIVE"
    assert fixed["gates"]["min_pass_rate"]["decision"] == "PASS"
    from skillassay.analyze.benchmark import build_benchmark

    bench = build_benchmark(recs, skill_name="s", skill_path=None, iteration=1, timestamp="t", trials_requested=10,
                            thresholds=th, interval_reading="these_evals")
    line = next(t for t in evaluate(bench, th).thresholds if t.key == "min_pass_rate").line()
    assert line.startswith("PASS: min_pass_rate") and ", these evals)" in line, line
    default = benchmark(recs, 10, th)
    line = next(t for t in evaluate(default, th).thresholds if t.key == "min_pass_rate").line()
    assert ", evals like these)" in line, line


@pytest.mark.parametrize("reading", ["population", "these_evals"])
def test_the_cost_fail_p_is_the_test_the_interval_inverts(reading: ri.Reading) -> None:
    sums, counts, wv = [900.0, 2400.0, 1500.0, 4000.0], [3, 3, 3, 3], [900.0, 4e4, 1e4, 9e4]
    lo, _ = ri.cost_interval(sums, counts, wv, reading) or (0.0, 0.0)
    assert (ri.cost_p_at_most(sums, counts, wv, lo * 0.999, reading) or 1.0) < 0.025
    assert (ri.cost_p_at_most(sums, counts, wv, lo * 1.001, reading) or 0.0) > 0.025


def test_these_evals_cost_interval_needs_two_trials_per_eval() -> None:
    assert ri.cost_interval([10.0, 20.0], [1, 1], [None, None], "these_evals") is None
    lo, hi = ri.cost_interval([20.0, 44.0], [2, 2], [2.0, 8.0], "these_evals") or (0.0, 0.0)
    assert lo < 16.0 < hi


# --------------------------------------------------------------------------- each reading against its truth


def _misses(draw_counts, interval, n: int) -> tuple[float, float]:
    low = high = 0
    for _ in range(n):
        c, k, truth = draw_counts()
        iv = interval(c, k)
        low += iv[0] > truth + 1e-12
        high += iv[1] < truth - 1e-12
    return low / n, high / n


def _mix(rng: np.random.Generator, n: int) -> np.ndarray:
    """calibration.py's mix: a quarter of evals always fail, a quarter always pass, the rest Beta(2,2)."""
    kind = rng.random(n)
    return np.where(kind < 0.25, 0.0, np.where(kind < 0.5, 1.0, rng.beta(2, 2, n)))


def old_pass_hull(c: np.ndarray, k: np.ndarray) -> tuple[float, float]:
    """The interval the gate decided on before: the hull of the floored t, the beta-binomial
    and (at one trial per eval) Clopper-Pearson intervals (benchmarks/reading_coverage.py too)."""
    means = c / k
    est = clustered_mean(means, bounds=(0.0, 1.0), floor_se=binomial_floor_se(means, k))
    lo, hi = est.interval or (0.0, 1.0)
    bb = beta_binomial_mean_interval(c, k) or (lo, hi)
    return min(lo, bb[0]), max(hi, bb[1])


@pytest.mark.sim
def test_evals_like_these_keeps_each_side_without_the_hulls_over_coverage() -> None:
    """Mix, 5 evals x 10 trials, truth 0.5: each side misses at most about 2.5% (the t interval
    alone missed 3.3-3.9%), and the interval is narrower than the hull the gate used before,
    which missed 0.40% / 0.17% where 2.5% is allowed: width a run pays for in evals."""
    rng = np.random.default_rng(34)
    n, k, e = 600, 10, 5
    low = high = 0
    width_new = width_old = 0.0
    for _ in range(n):
        c = rng.binomial(k, _mix(rng, e))
        lo, hi = ri.pass_rate_interval(c, [k] * e) or (0.0, 1.0)
        old = old_pass_hull(c, np.full(e, k))
        low += lo > 0.5
        high += hi < 0.5
        width_new += hi - lo
        width_old += old[1] - old[0]
    assert low / n <= 0.035 and high / n <= 0.035, (low / n, high / n)
    assert width_new < 0.95 * width_old, (width_new / n, width_old / n)


@pytest.mark.sim
@pytest.mark.parametrize(("k", "e"), [(1, 20), (3, 10), (10, 5)])
def test_these_evals_covers_the_drawn_evals_mean(k: int, e: int) -> None:
    """Against its own truth, the mean of the drawn evals' rates: each side misses at most 2.5%
    (Hoeffding: the pooled count is less spread than the binomial), and it is narrower than
    the population reading, which also carries the spread between evals."""
    rng = np.random.default_rng(k * 100 + e)
    n = 1500
    low = high = 0
    narrower = 0
    for i in range(n):
        rates = rng.beta(2, 2, e)
        c = rng.binomial(k, rates)
        lo, hi = ri.pass_rate_interval(c, [k] * e, "these_evals") or (0.0, 1.0)
        low += lo > rates.mean()
        high += hi < rates.mean()
        if k == 1 or i >= 300:  # the population interval beside it, on the first 300 draws
            continue
        plo, phi = ri.pass_rate_interval(c, [k] * e) or (0.0, 1.0)
        narrower += hi - lo <= phi - plo + 1e-12
    assert low / n <= 0.025 and high / n <= 0.025, (low / n, high / n)
    assert k == 1 or narrower / 300 > 0.9


@pytest.mark.sim
def test_these_evals_token_interval_covers_the_drawn_evals_mean() -> None:
    """calibration.py's costs (per-eval means 1000 x lognormal(0, 0.5), trials scattering 30%),
    10 evals x 3 trials: against the mean of these evals' true means each side misses at most
    2.5% (a t interval with Satterthwaite's df missed above 3.5%)."""
    rng = np.random.default_rng(341)
    n, k, e = 2000, 3, 10
    low = high = 0
    for _ in range(n):
        mu = 1000 * rng.lognormal(0, 0.5, e)
        toks = [m * rng.lognormal(-0.3**2 / 2, 0.3, k) for m in mu]
        iv = ri.cost_interval([t.sum() for t in toks], [k] * e, [float(np.var(t, ddof=1)) for t in toks],
                              "these_evals")
        assert iv is not None
        low += iv[0] > mu.mean()
        high += iv[1] < mu.mean()
    assert low / n <= 0.025 and high / n <= 0.025, (low / n, high / n)


def test_a_config_with_interval_reading_these_evals_gates_on_it(tmp_path: Path) -> None:
    """End to end: `aggregate` reads interval_reading from the config, benchmark.json records it,
    and `gate` decides and prints on that reading."""
    from cli_runner import invoke
    from iteration_factory import write_iteration

    evals = {i: ("P" * 10 if i <= 10 else "PPPPPPPFFF", "F" * 10) for i in range(1, 21)}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_pass_rate": 0.78})
    assert invoke("gate", str(it)).exit_code == 3  # evals like these: undecided
    config = it / "skill-snapshot" / "evals" / "benchmark_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "interval_reading": "these_evals"}))
    assert invoke("aggregate", str(it), "--config", str(config)).exit_code == 0
    st = json.loads((it / "benchmark.json").read_text())["statistics"]
    assert st["interval_reading"] == "these_evals" and st["gates"]["min_pass_rate"]["decision"] == "PASS"
    result = invoke("gate", str(it))
    assert result.exit_code == 0 and ", these evals)" in result.output, result.output
