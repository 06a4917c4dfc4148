"""distributions' quantiles and sign-flip test are bit-identical to scipy.stats' (what they
replace to keep scipy.stats' 1.3 s import off `aggregate`): compared exactly, over many inputs,
the edges included."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import repo_paths
from scipy import stats as sps

from skillassay.analyze import distributions as dists

QS = [0.0, 1e-300, 1e-12, 1e-6, 0.001, 0.0125, 0.025, 0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5, 0.6, 0.8, 0.9,
      0.95, 0.975, 0.9875, 0.999, 1 - 1e-12, 1.0, -0.1, 1.5, math.nan]
DFS = [1, 2, 3, 4, 5, 7, 9, 10, 19, 29, 49, 99, 199, 999, 10**5, 0.5, 2.5, 0, -1]


def same(a: float, b: float) -> bool:
    """Equal bit for bit (nan equal to nan), and of the same type."""
    return type(a) is type(b) and (np.asarray(a).tobytes() == np.asarray(b).tobytes())


def test_norm_quantiles_are_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    for q in [*QS, *rng.random(500).tolist()]:
        assert same(dists.norm_ppf(q), sps.norm.ppf(q)), q
        assert same(dists.norm_isf(q), sps.norm.isf(q)), q


def test_t_quantiles_and_intervals_are_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    for df in DFS:
        for q in [*QS, *rng.random(40).tolist()]:
            assert same(dists.t_ppf(q, df), sps.t.ppf(q, df)), (q, df)
    for _ in range(500):
        conf, df = float(rng.choice([0.8, 0.9, 0.95, 0.99, rng.random()])), int(rng.integers(1, 300))
        loc, scale = float(rng.normal()), float(rng.exponential())
        assert all(map(same, dists.t_interval(conf, df, loc, scale), sps.t.interval(conf, df, loc=loc, scale=scale)))
        assert same(dists.t_ppf(conf, df, loc, scale), sps.t.ppf(conf, df, loc=loc, scale=scale))
    for loc, scale in [(0.3, 0.0), (0.3, -1.0), (math.nan, 1.0), (math.inf, 1.0)]:
        assert same(dists.t_ppf(0.975, 9, loc, scale), sps.t.ppf(0.975, 9, loc=loc, scale=scale))
    with pytest.raises(ValueError, match="alpha"):
        dists.t_interval(1.5, 3)


def test_chi2_quantiles_are_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for df in DFS:
        for q in [*QS, *rng.random(40).tolist()]:
            assert same(dists.chi2_ppf(q, df), sps.chi2.ppf(q, df)), (q, df)


def test_binomial_survival_is_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(4)
    cases = [(k, n, p) for n in (0, 1, 6, 7, 20, 100, 1000) for k in (-1, 0, 3, 5, n - 1, n, n + 1)
             for p in (0.0, 0.05, 0.3, 0.5, 0.9, 1.0)]
    cases += [(int(rng.integers(0, 60)), int(rng.integers(1, 5000)), float(rng.random())) for _ in range(500)]
    for k, n, p in cases:
        assert same(dists.binom_sf(k, n, p), sps.binom.sf(k, n, p)), (k, n, p)
    for bad in [(3, 10, 1.5), (3, 10, -0.1), (3, 10.5, 0.5), (3, -1, 0.5), (math.nan, 10, 0.5)]:
        assert same(dists.binom_sf(*bad), sps.binom.sf(*bad)), bad


def scipy_sign_flip(x: np.ndarray, **kw: object) -> float:
    res = sps.permutation_test((x,), np.mean, permutation_type="samples", vectorized=True, axis=-1, **kw)
    return float(res.pvalue)


def samples(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Differences as aggregation sees them: integer grids (rescaled rates), ties and
    zeros, and arbitrary floats, whose mean np.mean rounds (layout matters there)."""
    return [rng.integers(-3, 4, n).astype(float), rng.normal(0.1, 1, n), rng.choice([-1 / 3, 1 / 3, 2 / 3], n),
            np.round(rng.normal(0, 0.3, n), 2), np.full(n, 0.25)]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_sign_flip_is_scipys_exact_permutation_test(alternative: str) -> None:
    rng = np.random.default_rng(5)
    for n in range(2, 13):
        for x in samples(rng, n):
            ours, exact = dists.sign_flip_test(x, alternative=alternative)  # type: ignore[arg-type]
            assert exact
            assert ours == scipy_sign_flip(x, n_resamples=np.inf, alternative=alternative), (x, alternative)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.sim
def test_sampled_sign_flip_is_scipys_monte_carlo_permutation_test(alternative: str) -> None:
    rng = np.random.default_rng(6)
    for n, resamples, batch in [(15, 3000, 1000), (20, 2500, 2000), (33, 5000, 2000), (50, 4001, 2000),
                                (8, 100, None)]:
        for x in samples(rng, n):
            for seed in (0, 7):
                ours, exact = dists.sign_flip_test(x, n_resamples=resamples, batch=batch,  # type: ignore[arg-type]
                                                   rng=np.random.default_rng(seed), alternative=alternative)
                assert not exact
                theirs = scipy_sign_flip(x, n_resamples=resamples, batch=batch, rng=np.random.default_rng(seed),
                                         alternative=alternative)
                assert ours == theirs, (n, resamples, seed, alternative)


def test_sign_flip_refuses_what_scipy_refuses() -> None:
    with pytest.raises(ValueError, match="two or more"):
        dists.sign_flip_test(np.array([1.0]))
    with pytest.raises(ValueError, match="rng"):
        dists.sign_flip_test(np.arange(20.0), n_resamples=100)


def test_aggregate_does_not_import_scipy_stats(tmp_path: Path) -> None:
    """The point of this module: scipy.stats' 1.3 CPU-s import stays off `aggregate`."""
    it = tmp_path / "demo-workspace" / "iteration-1"
    for e in range(8):
        for ci, config in enumerate(("with_skill", "without_skill")):
            for k in range(1, 4):
                run = it / f"eval-{e}" / config / f"run-{k}"
                run.mkdir(parents=True)
                ok = (e + k + ci) % 3 != 0
                (run / "grading.json").write_text(json.dumps({
                    "expectations": [{"text": "a", "passed": ok, "evidence": ""}],
                    "summary": {"passed": int(ok), "failed": int(not ok), "total": 1, "pass_rate": float(ok)}}))
                (run / "timing.json").write_text(json.dumps({"total_tokens": 100 + e * k, "duration_ms": 1000 + k}))
    code = ("import sys; from pathlib import Path; from skillassay.workflows.aggregate import aggregate_iteration; "
            f"aggregate_iteration(Path({str(it)!r})); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(repo_paths.REPO / "src")})
    assert out.stdout.split() == ["False"]
    assert json.loads((it / "benchmark.json").read_text())["run_summary"]


def test_a_small_run_does_not_import_scipy_stats(tmp_path: Path) -> None:
    """`run` imports the adaptive rule's module (analyze/sequential) even when not adaptive:
    scipy.stats there put a CPU second into every run's start-up."""
    skill = tmp_path / "tiny"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tiny\ndescription: A test skill. Use in tests.\n---\nBody\n")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "tiny", "evals": [
        {"id": 1, "prompt": "hi", "expectations": [{"type": "contains", "value": "hi"}]}]}))
    code = ("import sys; from skillassay.cli.main import main; sys.argv = ['skillassay', 'run', "
            f"{str(skill)!r}, '--executor', 'echo', '--trials', '2', '--workspace', {str(tmp_path / 'ws')!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('scipy.stats' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(repo_paths.REPO / "src")})
    assert out.stderr.split()[-1] == "False", out.stderr[-2000:]
    assert (tmp_path / "ws" / "iteration-1" / "benchmark.json").is_file()
