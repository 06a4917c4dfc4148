"""The paired intervals against their own truth, "evals like these" (issue 34): evals drawn from a
population (baseline rates Beta(2,2), skill = baseline + effect clipped to [0, 1]), the truth the
population's mean difference and its ratio of mean pass rates. A 95% interval should hold it at
least about 95% of the time; the A/A case (truth 0 and 1) is the calibration table's."""

from __future__ import annotations

import numpy as np
import pytest
from aa_simulation import BASE, SKILL, draw

from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics

pytestmark = pytest.mark.sim


def _truth(effect: float) -> tuple[float, float]:
    b = np.random.default_rng(0).beta(2, 2, 2_000_000)
    s = np.clip(b + effect, 0, 1)
    return float((s - b).mean()), float(s.mean() / b.mean())


@pytest.mark.parametrize(("k", "n_evals", "effect"), [(3, 10, 0.25), (10, 20, 0.15)])
def test_difference_and_ratio_cover_the_population_truth(k: int, n_evals: int, effect: float) -> None:
    diff_truth, ratio_truth = _truth(effect)
    rng = np.random.default_rng([k, n_evals, 34])
    held = {"difference": 0, "ratio": 0}
    runs = 200
    for _ in range(runs):
        base = rng.beta(2, 2, n_evals)
        recs = draw(rng, np.clip(base + effect, 0, 1), base, k)
        paired = build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k)["paired"]
        lo, hi = paired["pass_rate_difference"]["interval"]
        held["difference"] += lo <= diff_truth <= hi
        rlo, rhi = paired["improvement_ratio"]["interval"]
        held["ratio"] += rlo <= ratio_truth <= (np.inf if rhi is None else rhi)
    # 200 runs: 95% coverage shows as 91.1-97.3% (Wilson); below 91% would be a real shortfall.
    assert held["difference"] / runs >= 0.90, held
    assert held["ratio"] / runs >= 0.90, held
    print(k, n_evals, effect, {key: v / runs for key, v in held.items()})
