"""benchmarks/advice_rules_study.py computes what the library computes, faster: its FFT sign-flip
p-values are the exact test's and its copy of today's advice is power_stats'."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from skillassay.analyze import numerics as stats
from skillassay.analyze.statistics import group_records, power_stats
from skillassay.store.records import TrialRecord

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import advice_rules_study as study  # noqa: E402


@pytest.mark.parametrize("k", [1, 3, 10])
def test_fft_p_values_are_the_exact_sign_flip_test(k: int) -> None:
    rng = np.random.default_rng(k)
    pmf = study.lattice_pmf(0.2, k)
    for n in (6, 9, 14):
        counts = rng.multinomial(n, pmf, size=15)
        p, s = study.signflip_p(counts, k)
        for row, pv, sv in zip(counts, p, s, strict=True):
            d = np.repeat(np.arange(-k, k + 1), row) / k
            assert sv == pytest.approx(d.sum() * k)
            assert pv == pytest.approx(stats.sign_flip_p_value(d)[0], abs=1e-9)  # exact up to 14 non-zero


def _records(p: study.Pilot) -> list[TrialRecord]:
    return [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=cfg, run_number=i + 1, status="ok",
                        passed=i < x[e], passed_count=int(i < x[e]), total_count=1, tokens=1, duration_seconds=1.0)
            for cfg, x in (("a", p.xa), ("b", p.xb)) for e in range(p.m) for i in range(p.k)]


def test_todays_rule_is_power_stats_evals_needed() -> None:
    rng = np.random.default_rng(3)
    for k, m in ((1, 10), (3, 5), (10, 5)):
        for p in study.draw_pilots(rng, 8, m, k, np.full(8, 0.2)):
            n, _ = study.rule_assurance(p, study.summarise(p))
            assert n == power_stats(group_records(_records(p), ("a", "b")), "a", "b")["evals_needed"]
