"""`history` prints the paired difference's interval beside its sign-flip p (issue 34): the
interval is that test inverted, so it holds 0 exactly when the p printed beside it is >= 0.05
(a t interval excluded 0 beside p = 0.0625 and 'tie')."""

from __future__ import annotations

import numpy as np

from skillassay.improve.history import EvalRate, VersionFacts, compare_versions


def _facts(n: int, values: list[float]) -> VersionFacts:
    return VersionFacts(n, f"iteration-{n}", None, "s", None, None,
                        tuple(EvalRate(i, f"e{i}", v, 3) for i, v in enumerate(values, 1)))


def test_five_evals_all_better_by_the_same_amount_do_not_exclude_zero() -> None:
    """Five equal differences: sd 0, so the t interval was the point +0.333, beside a p of
    2/32 = 0.0625 that no five evals can get under."""
    ev = compare_versions(_facts(2, [2 / 3] * 5), _facts(1, [1 / 3] * 5), "v1")
    assert ev["p_value"] >= 0.05 and ev["result"] == "tie"
    lo, hi = ev["interval"]
    assert lo <= 0 <= hi, ev["interval"]
    assert "95% CI" in ev["reason"] and "-1.000" in ev["reason"], ev["reason"]


def test_the_interval_holds_zero_exactly_when_the_printed_p_is_at_least_five_percent() -> None:
    rng = np.random.default_rng(6)
    bad = []
    for i in range(60):
        n = int(rng.integers(2, 12))
        best = rng.choice([0.0, 1 / 3, 2 / 3, 1.0], n)
        new = np.clip(best + rng.choice([-1 / 3, 0.0, 1 / 3, 2 / 3], n, p=[0.2, 0.3, 0.3, 0.2]), 0, 1)
        ev = compare_versions(_facts(2, list(new)), _facts(1, list(best)), "v1")
        if ev["interval"] is None or ev["p_value"] is None:
            continue
        lo, hi = ev["interval"]
        if (lo <= 0 <= hi) != (ev["p_value"] >= 0.05):
            bad.append((i, ev["interval"], ev["p_value"]))
    assert not bad, bad[:5]
