"""Issue 16, items 1-6 and 10: intervals that keep their promise, calls the gate can stand
behind, and a report that says what it cannot detect. Each promise is checked on the numbers
that broke it and by a small seeded A/A simulation through the library (tests/aa_simulation.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aa_simulation import BASE, SKILL, benchmark, draw, experiment, fast_exact_p, records
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze import compare as compare_mod
from skillassay.analyze.cells import group_records
from skillassay.analyze.compare import Side, build_comparison
from skillassay.analyze.gate import evaluate
from skillassay.analyze.statistics import build_statistics
from skillassay.models import Thresholds

pytestmark = pytest.mark.sim  # Monte-Carlo checks of a statistical promise


def _gates(passes: dict, k: int, thresholds: dict) -> dict:
    recs = records(passes)
    return build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, thresholds)


# --------------------------------------------------------------------------- 1. zero width


def test_two_evals_one_trial_each_do_not_pass_min_pass_rate() -> None:
    st = _gates({(0, SKILL): [True], (1, SKILL): [True], (0, BASE): [True], (1, BASE): [False]}, 1,
                {"min_pass_rate": 0.95})
    g = st["gates"]["min_pass_rate"]
    assert g["interval"][0] < 0.5, g  # two passing trials say little
    assert g["decision"] != "PASS"


def test_equal_evals_still_have_binomial_noise() -> None:
    passes = {}
    for e in range(3):
        passes[(e, SKILL)] = [True] * 8 + [False] * 2
        passes[(e, BASE)] = [True] * 5 + [False] * 5
    st = _gates(passes, 10, {"min_improvement_ratio": 1.0})
    lo, hi = st["paired"]["improvement_ratio"]["interval"]
    assert lo < 1.6 and (hi is None or hi > 1.6), (lo, hi)  # was [1.6, 1.6]
    d = st["paired"]["pass_rate_difference"]["interval"]
    assert d[0] < 0.3 < d[1], d
    p = st["configurations"][SKILL]["pass_rate_interval"]
    assert p[0] < 0.8 < p[1], p


def test_min_pass_rate_false_pass_at_a_true_090(monkeypatch: pytest.MonkeyPatch) -> None:
    """True rate 0.9 on 5 evals x 3 trials against min_pass_rate 0.95: was a PASS in 20%."""
    rng = np.random.default_rng(16)
    n, passes = 300, 0
    rates = np.full(5, 0.9)
    for _ in range(n):
        recs = draw(rng, rates, rates, 3)
        st = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, 3, {"min_pass_rate": 0.95})
        passes += st["gates"]["min_pass_rate"]["decision"] == "PASS"
    assert passes / n <= 0.025, passes / n


# --------------------------------------------------------------------------- 2. ratio vs test


@pytest.mark.parametrize("k", [1, 3])
def test_ratio_gate_under_aa_never_contradicts_the_paired_test(k: int) -> None:
    """A/A, 6 evals: min_improvement_ratio >= 1.0 PASSED in 7-27% of experiments (bootstrap),
    including when the paired test beside it could not reach p < 0.05."""
    rng = np.random.default_rng(100 + k)
    n, false_pass = 200, 0
    for _ in range(n):
        rates = rng.beta(2, 2, 6)
        recs = draw(rng, rates, rates, k)
        st = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, {"min_improvement_ratio": 1.0})
        g, p = st["gates"]["min_improvement_ratio"], st["paired"]["pass_rate_difference"]["p_value"]
        if g["decision"] == "PASS":
            false_pass += 1
            assert p < 0.05, (g, p)
        if g["decision"] != "INCONCLUSIVE":
            assert p < 0.05, (g, p)
        if g["interval"] and p >= 0.05:
            hi = np.inf if g["interval"][1] is None else g["interval"][1]
            assert g["interval"][0] < 1.0 <= hi, (g, p)
    assert false_pass / n <= 0.025, false_pass / n


# --------------------------------------------------------------------------- 3. one set of evals


def test_gate_ratio_value_and_interval_come_from_the_same_evals() -> None:
    passes = {}
    for e, (a, b) in enumerate([(3, 1), (3, 1), (2, 1), (3, 2), (2, 1)]):
        passes[(e, SKILL)] = [True] * a + [False] * (3 - a)
        passes[(e, BASE)] = [True] * b + [False] * (3 - b)
    passes[(5, SKILL)] = [True] * 3  # this eval's baseline never ran
    bench = benchmark(records(passes), 3, Thresholds(min_improvement_ratio=1.0))
    paired = bench.statistics["paired"]["improvement_ratio"]
    assert bench.summary.improvement_ratio != pytest.approx(paired["value"])  # 6 vs 5 evals
    t = next(t for t in evaluate(bench, Thresholds(min_improvement_ratio=1.0)).thresholds
             if t.key == "min_improvement_ratio")
    assert t.value == pytest.approx(paired["value"])
    assert t.interval == paired["interval"] and t.interval[0] <= t.value


# --------------------------------------------------------------------------- 4. whole gate under A/A


@pytest.mark.parametrize("k", [1, 3, 10])
def test_whole_gate_false_fail_under_aa_at_most_5_percent(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """Ratio FAILs and regression calls together failed 7% (K = 3) and 15% (K = 10) of these A/A
    gates of 5 evals before the ratio test inversion and the 0.025 regression level."""
    fast_exact_p(monkeypatch)
    rng = np.random.default_rng(1)
    n, fails = 200, 0
    for _ in range(n):
        x = experiment(rng, rng.beta(2, 2, 5), k, Thresholds(min_improvement_ratio=1.0))
        fails += x.gate.status == "FAIL"
    assert fails / n <= 0.05, fails / n


# --------------------------------------------------------------------------- 5. report tables, drift


def test_possible_regressions_are_not_listed_as_action_needed(tmp_path: Path) -> None:
    others = {i: ("PPP", "FFF") for i in range(2, 6)}
    write_iteration(tmp_path, 1, {1: ("PPF", "FFF"), **others})
    write_iteration(tmp_path, 2, {1: ("PFF", "FFF"), **others})
    assert cli(["report", str(tmp_path / "iteration-2")]).exit_code == 0
    text = (tmp_path / "iteration-2" / "report.md").read_text()
    action = text.split("### Regressions (action needed)")[1].split("###")[0]
    assert "eval-1" not in action and "None called" in action
    possible = text.split("### Possible regressions (not called)")[1].split("###")[0]
    assert "| eval-1 (e1) | PASS (2/3) | FAIL (1/3) | possible regression |" in possible
    assert "Trials that would settle it" in possible


def test_baseline_drift_note_is_calibrated_under_aa(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drift note appeared in 7.7% of A/A experiments at K = 10; target 2.5%."""
    fast_exact_p(monkeypatch)
    monkeypatch.setattr(compare_mod, "add_trials_to_call", lambda result, q: None)  # advice only
    rng = np.random.default_rng(5)
    n, notes = 200, 0
    for _ in range(n):
        rates = rng.beta(2, 2, 10)
        cur, prev = draw(rng, rates, rates, 10), draw(rng, rates, rates, 10)
        result = build_comparison(Side(Path("iteration-2"), cur, {}, {}), Side(Path("iteration-1"), prev, {}, {}))
        notes += bool(result["baseline_drift"]["changed"])
        assert not any("probably" in note for note in result["notes"])
    assert notes / n <= 0.025, notes / n


# --------------------------------------------------------------------------- 6. what cannot be detected


def test_detection_limit_figures() -> None:
    from skillassay.analyze.compare import detection_limit

    assert detection_limit(6, 3)["detectable"] and not detection_limit(7, 3)["detectable"]
    assert detection_limit(25, 4)["detectable"] and not detection_limit(26, 4)["detectable"]
    assert detection_limit(102, 5)["detectable"] and not detection_limit(103, 5)["detectable"]
    assert detection_limit(7, 3)["trials_needed"] == 4
    from scipy.stats import boschloo_exact

    assert detection_limit(7, 3)["smallest_p"] == pytest.approx(
        boschloo_exact([[3, 0], [0, 3]], alternative="greater").pvalue)


def test_report_and_compare_say_what_the_design_cannot_detect(tmp_path: Path) -> None:
    evals = {i: ("PPP", "FFF") for i in range(1, 8)}
    write_iteration(tmp_path, 1, evals)
    write_iteration(tmp_path, 2, evals)
    result = cli(["compare", str(tmp_path / "iteration-2")])
    assert "no single eval can be called regressed among 7 evals" in result.output
    assert "--trials 4" in result.output
    assert cli(["report", str(tmp_path / "iteration-2")]).exit_code == 0
    text = (tmp_path / "iteration-2" / "report.md").read_text()
    head = text.split("### Summary")[0]
    assert "**What this design cannot detect**" in head
    assert "no single eval can be called regressed among 7 evals" in head and "--trials 4" in head


# --------------------------------------------------------------------------- 10. wording


def test_no_solid_pass_and_no_overpromise(tmp_path: Path) -> None:
    evals = {i: ("PPP", "FFF") for i in range(1, 8)}
    write_iteration(tmp_path, 1, {**evals, 8: ("PPF", "FFF")})
    write_iteration(tmp_path, 2, {**evals, 8: ("PFF", "FFF")}, thresholds={"min_pass_rate": 0.5})
    assert cli(["report", str(tmp_path / "iteration-2")]).exit_code in (0, 3)
    text = (tmp_path / "iteration-2" / "report.md").read_text()
    assert "solid pass" not in text and "really got worse" not in text
    assert "more trials per arm would be enough for the exact test to call this drop" in text


def test_run_says_what_the_design_cannot_detect(example_skill: Path, tmp_path: Path) -> None:
    from echo_runs import run_echo

    code, out = run_echo(example_skill, tmp_path / "ws")
    assert "what this design can detect: At 3 trial(s) per arm no single eval can be called regressed among " \
           "8 evals" in " ".join(out.split()), out
    assert "--trials 4" in out


# --------------------------------------------------------------------------- tokens: skewed costs


def _token_records(rng: np.random.Generator, n_evals: int, k: int) -> tuple[list, float]:
    """Per-eval mean tokens 1000 * lognormal(0, 0.5), trials scattering 30% around it (the
    calibration harness's model); returns the records and the population mean."""
    from skillassay.store.records import TrialRecord

    mu = 1000 * rng.lognormal(0, 0.5, n_evals)
    recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=cfg, run_number=i + 1, status="ok",
                        passed=True, passed_count=1, total_count=1,
                        tokens=int(m * rng.lognormal(-0.3**2 / 2, 0.3)), duration_seconds=1.0)
            for e, m in enumerate(mu) for cfg in (SKILL, BASE) for i in range(k)]
    return recs, 1000 * float(np.exp(0.5**2 / 2))


def test_token_interval_keeps_its_upper_bound_on_skewed_costs() -> None:
    """max_avg_tokens at the true mean, 5 evals x 1 trial of lognormal costs: the plain
    clustered t interval's upper bound fell below the truth in 9% of experiments (a false PASS),
    against the 2.5% a one-sided bound promises; it is the skewness, not the clustering."""
    from skillassay.analyze import rate_intervals

    rng = np.random.default_rng(7)
    n, below, above = 2000, 0, 0
    truth = 1000 * float(np.exp(0.5**2 / 2))
    for _ in range(n):
        m = 1000 * rng.lognormal(0, 0.5, 5) * rng.lognormal(-0.3**2 / 2, 0.3, 5)
        lo, hi = rate_intervals.cost_interval(m, np.ones(5, dtype=int), [None] * 5) or (0.0, 0.0)
        below += hi < truth
        above += lo > truth
    assert below / n <= 0.03, below / n
    assert above / n <= 0.025, above / n


def test_token_gate_uses_the_skew_aware_interval() -> None:
    """Through build_statistics: the gate's and the configuration's token interval are the same
    and reach above the plain t interval's upper bound."""
    from skillassay.stats.means import pooled_clustered_mean

    recs, _ = _token_records(np.random.default_rng(3), 5, 1)
    cells = group_records(recs, (SKILL, BASE))
    st = build_statistics(cells, SKILL, BASE, 1, {"max_avg_tokens": 1e9})
    tokens = [r.tokens for r in recs if r.configuration == SKILL]
    plain = pooled_clustered_mean(tokens, np.ones(5))
    iv = st["configurations"][SKILL]["avg_tokens"]["interval"]
    assert iv == pytest.approx(st["gates"]["max_avg_tokens"]["interval"], abs=0.01)
    assert iv[1] > plain.interval[1] + 1, (iv, plain.interval)
    assert iv[0] <= max(0.0, plain.interval[0]) + 0.01 and iv[0] >= 0, (iv, plain.interval)  # never negative


def test_pass_rate_interval_keeps_its_promise_with_always_pass_and_always_fail_evals() -> None:
    """5 evals x 10 trials from the mix (a quarter of evals always fail, a quarter always pass):
    the t interval on five per-eval rates bunched at 0 and 1 missed 0.5 on either side 3.3-3.9%
    of the time in 6,000 draws (a sample without an always-failing eval looks like a population
    at 0.7). The interval the gate decides on must keep each one-sided 2.5%."""
    from skillassay.analyze.cells import MetricSeries

    rng = np.random.default_rng(16)
    n, k, e = 800, 10, 5
    false_pass = false_fail = 0
    for _ in range(n):
        kind = rng.random(e)
        rates = np.where(kind < 0.25, 0.0, np.where(kind < 0.5, 1.0, rng.beta(2, 2, e)))
        c = rng.binomial(k, rates)
        series = MetricSeries(list(range(e)), list(c / k), [float(x) for x in c], [k] * e,
                              [x * (k - x) / (k * (k - 1)) for x in c])
        est = series.estimate(pooled=False)
        assert est is not None and est.interval is not None
        false_pass += est.interval[0] > 0.5
        false_fail += est.interval[1] < 0.5
    assert false_pass / n <= 0.025 and false_fail / n <= 0.025, (false_pass / n, false_fail / n)


def test_beta_binomial_p_value_agrees_with_its_interval() -> None:
    """The gate's Holm step reads a FAIL as a p-value: the beta-binomial part's upper end is below
    a threshold exactly when its one-sided p there is below 2.5%, and 10/10 x 5 is no proof of
    a rate above 0.5 (five evals that always pass can come from a population at 0.5)."""
    from skillassay.stats import beta_binomial as stats

    passes, trials = [2, 3, 0, 1, 2], [3] * 5
    lo, hi = stats.beta_binomial_mean_interval(passes, trials) or (0.0, 0.0)
    assert 0 < lo < 8 / 15 < hi < 1
    assert stats.beta_binomial_mean_p(passes, trials, hi + 1e-4, "at least") < 0.025
    assert stats.beta_binomial_mean_p(passes, trials, hi - 1e-4, "at least") > 0.025
    assert stats.beta_binomial_mean_p(passes, trials, lo - 1e-4, "at most") < 0.025
    assert stats.beta_binomial_mean_p(passes, trials, lo + 1e-4, "at most") > 0.025
    all_pass = stats.beta_binomial_mean_interval([10] * 5, [10] * 5)
    assert all_pass is not None and all_pass[0] < 0.5 and all_pass[1] == 1.0


def _scipy_bb_interval(passes: list[int], trials: list[int], conf: float = 0.95) -> tuple[float, float]:
    """The same profile-likelihood interval computed with scipy.optimize (the oracle)."""
    import math

    from scipy import optimize, special, stats

    c, n = np.array(passes, float), np.array(trials, float)

    def loglik(mu: float, t: float) -> float:
        a, b = mu * math.exp(t), (1 - mu) * math.exp(t)
        return float(np.sum(special.betaln(c + a, n - c + b) - special.betaln(a, b)))

    def profile(mu: float) -> float:
        return -optimize.minimize_scalar(lambda t: -loglik(mu, t), bounds=(-9, 12), method="bounded",
                                         options={"xatol": 1e-9}).fun

    fit = optimize.minimize_scalar(lambda m: -profile(m), bounds=(1e-9, 1 - 1e-9), method="bounded",
                                   options={"xatol": 1e-10})
    mhat, lmax = float(fit.x), -float(fit.fun)
    crit = stats.t.ppf((1 + conf) / 2, len(passes) - 1) ** 2
    def excess(m: float) -> float:
        return 2 * (lmax - profile(m)) - crit
    lo = 0.0 if excess(1e-9) <= 0 else optimize.brentq(excess, 1e-9, mhat, xtol=1e-10)
    hi = 1.0 if excess(1 - 1e-9) <= 0 else optimize.brentq(excess, mhat, 1 - 1e-9, xtol=1e-10)
    return lo, hi


def test_beta_binomial_searches_agree_with_scipy_optimize() -> None:
    """The interval's two one-dimensional searches are written in stats/beta_binomial
    (scipy.optimize's import would cost `aggregate` 0.23-0.35 CPU-s): they must find what
    scipy.optimize finds."""
    from skillassay.stats import beta_binomial as stats

    rng = np.random.default_rng(7)
    for _ in range(25):
        e, k = int(rng.integers(2, 30)), int(rng.choice([2, 3, 5, 10]))
        rates = np.where(rng.random(e) < 0.2, rng.choice([0.0, 1.0], e), rng.beta(2, 2, e))
        passes = [int(x) for x in rng.binomial(k, rates)]
        if sum(passes) in (0, e * k):
            continue
        stats._bb_interval.cache_clear(), stats._bb_fit.cache_clear()
        ours = stats.beta_binomial_mean_interval(passes, [k] * e)
        assert ours is not None
        want = _scipy_bb_interval(passes, [k] * e)
        assert ours == pytest.approx(want, abs=2e-5), (passes, ours, want)


def test_the_pass_rate_interval_does_not_import_scipy_optimize() -> None:
    import subprocess
    import sys

    code = ("import sys; from skillassay.stats import beta_binomial as s; "
            "s.beta_binomial_mean_interval([2, 3, 0, 1, 2], [3] * 5); "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_detection_limit_of_many_trials_stays_a_readable_number() -> None:
    """At 200 trials per arm 4^K / q has 120 digits: written to a file, our own reader (64 digits
    at most) would refuse it, and printed it is noise."""
    from skillassay.analyze.compare import detection_limit

    limit = detection_limit(50, 200)
    assert limit["detectable"] and limit["max_evals"] <= 10**12
    assert "more than a million evals" in limit["text"] and len(limit["text"]) < 200
    assert "up to 6,553 evals" in detection_limit(50, 8)["text"]
