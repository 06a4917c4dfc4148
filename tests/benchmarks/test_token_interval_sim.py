"""The avg-tokens interval ("evals like these") against the population mean, by
benchmarks/token_interval_sim.py: the max_avg_tokens gate's false PASS (its interval wholly below
the truth) stays within 2.5% on calibration.py's token model, the vectorised interval is the
library's, and the simulation can see a miss (the t interval alone, before the lognormal join)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import repo_paths

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
import token_interval_sim as sim  # noqa: E402

from skillassay.stats.binomial import wilson_interval  # noqa: E402

pytestmark = pytest.mark.sim  # Monte-Carlo checks of a statistical promise

REPS = 6000


def test_upper_miss_within_its_share_on_the_calibration_model() -> None:
    spread = sim.spreads()[0]  # lognormal(0, 0.5) between evals, 30% within: calibration.py's
    assert "calibration.py" in spread.name
    pivot = sim.PivotQuantile(20, 0.95)
    rng = np.random.default_rng([34, 20, 10])
    sim.check(rng, spread, 20, 10, sample=10)  # the vectorised ends are cost_interval's
    upper, _ = sim.upper_misses(rng, spread, REPS, 20, 10, pivot)
    lo, _ = wilson_interval(upper, REPS) or (1.0, 1.0)
    assert lo <= 0.025, upper / REPS
    t_only, _ = sim.upper_misses(np.random.default_rng([34, 20, 10]), spread, REPS, 20, 10, pivot, join=False)
    t_lo, _ = wilson_interval(t_only, REPS) or (0.0, 0.0)
    assert t_lo > 0.025, t_only / REPS
