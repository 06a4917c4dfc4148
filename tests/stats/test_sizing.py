"""skillassay.stats.sizing: trials and evals to decide, checked against the reference values in stats-notes.md
and against scipy / statsmodels on random inputs (split from tests/analyze/test_numerics.py)."""

from __future__ import annotations

import math

from scipy import stats as sps

from skillassay.stats.sizing import evals_to_decide, trials_per_arm, trials_per_eval_to_decide

# --------------------------------------------------------------------------- power


def test_trials_per_arm_formula() -> None:
    assert trials_per_arm(0.5, 0.5) is None
    p1, p2 = 0.9, 0.5
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    pbar = 0.7
    n = (za * math.sqrt(2 * pbar * (1 - pbar))
         + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / (p1 - p2) ** 2
    assert trials_per_arm(p1, p2) == math.ceil(n)
    assert trials_per_arm(0.9, 0.8) > trials_per_arm(0.9, 0.5)


def test_evals_to_decide_is_minimal() -> None:
    sd, gap = 0.3, 0.1
    e = evals_to_decide(sd, gap)
    assert e is not None
    assert sps.t.ppf(0.975, e - 1) * sd / math.sqrt(e) <= gap
    assert sps.t.ppf(0.975, e - 2) * sd / math.sqrt(e - 1) > gap
    assert evals_to_decide(sd, 0.0) is None


def test_trials_per_eval_to_decide() -> None:
    # between-eval spread alone too wide: more trials cannot help
    assert trials_per_eval_to_decide(1.0, 0.25, 5, 0.1) is None
    k = trials_per_eval_to_decide(0.0, 0.25, 10, 0.2)
    tq = sps.t.ppf(0.975, 9)
    assert tq * math.sqrt(0.25 / k / 10) <= 0.2
    assert tq * math.sqrt(0.25 / (k - 1) / 10) > 0.2
