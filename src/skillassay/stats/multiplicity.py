"""Per-eval exact tests and multiplicity: the one-sided exact (Boschloo) test of a change
between two iterations and Benjamini-Hochberg. Method notes: docs/statistics.md."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np


def one_sided_exact_p(
    c_before: int, n_before: int, c_after: int, n_after: int,
    only_observed_direction: bool = False,
) -> tuple[float | None, float | None]:
    """(p_regression, p_improvement): Boschloo's one-sided exact tests of rate change.

    p_regression tests H1: rate_before > rate_after; p_improvement the reverse. Boschloo is
    uniformly more powerful than Fisher's exact test for two independent binomials. A table
    with no variation at all (all pass or all fail in both samples) carries no evidence, so
    p = 1; an empty sample gives None. With only_observed_direction the test against the
    observed change (and both, when the rates are equal) is reported as 1 instead of computed:
    it could not reject anyway, a larger p only makes Benjamini-Hochberg more conservative,
    and Boschloo costs ~0.1 s per call at K = 200.
    """
    if n_before <= 0 or n_after <= 0:
        return None, None
    total = c_before + c_after
    if total == 0 or total == n_before + n_after:
        return 1.0, 1.0
    drop = c_before * n_after - c_after * n_before  # > 0 when the rate went down
    p_reg = p_imp = 1.0
    if not only_observed_direction or drop > 0:
        p_reg = _boschloo(c_before, n_before, c_after, n_after, "greater")
    if not only_observed_direction or drop < 0:
        p_imp = _boschloo(c_before, n_before, c_after, n_after, "less")
    return min(1.0, p_reg), min(1.0, p_imp)


@functools.lru_cache(maxsize=4096)
def _boschloo(c_before: int, n_before: int, c_after: int, n_after: int, alternative: str) -> float:
    """One Boschloo p-value, remembered: evals with the same counts (common at small K) and the
    trials-to-call search, which re-asks the same tables, then pay for each table once."""
    from scipy import stats as sps

    table = [[c_before, c_after], [n_before - c_before, n_after - c_after]]
    return float(sps.boschloo_exact(table, alternative=alternative).pvalue)


def bh_call_threshold(p_values: Sequence[float | None], index: int, q: float) -> float:
    """The largest raw p that test `index` may have and still be called at FDR q by
    Benjamini-Hochberg, the other p-values staying as they are.

    Closed form of the step-up rule: with m tests and the others sorted o_1 <= ... <= o_{m-1},
    a p-value x is rejected iff some rank r has x <= r q / m and o_{r-1} <= r q / m (then at
    least r p-values are <= r q / m, so the step-up rule reaches x). None entries are not tests.
    """
    others = sorted(p for i, p in enumerate(p_values) if i != index and p is not None)
    m = len(others) + 1
    best = q / m
    for r in range(2, m + 1):
        if others[r - 2] <= r * q / m:
            best = r * q / m
    return best


def bh_adjust(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values; None entries are not tests and stay None."""
    from scipy import stats as sps

    idx = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if not idx:
        return out
    adj = sps.false_discovery_control(np.array([p_values[i] for i in idx], dtype=float))
    for i, v in zip(idx, adj, strict=True):
        out[i] = float(v)
    return out
