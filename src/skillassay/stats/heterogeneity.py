"""Does an effect differ between groups measured on the same blocks? The skill's effect on each
agent, measured on the same evals: a permutation test of the agent x skill interaction, and
pairwise follow-ups with Holm. Pure numbers; analyze/matrix.py gives them meaning. Method notes:
docs/matrix.md.

The data are per-eval paired differences d[e, a] (with-skill minus baseline pass rate of eval e
on agent a). The question "is the skill's effect the same on every agent?" is the agent main
effect on d in a randomized block design (evals are blocks, agents treatments): under the null,
the agents' differences within an eval are exchangeable, so permuting the agent labels within
each eval leaves the data's distribution unchanged (Fisher, The Design of Experiments, 1935,
ch. 21; Good, Permutation Tests, 2000, sec. 4.3). The statistic is the variance of the agents'
mean differences; within-eval permutations keep each eval's total, so it is equivalent to the
two-way ANOVA F for agents. With two agents the within-eval permutation is a sign flip of
d[e, a] - d[e, b]: the test is exactly the sign-flip test the benchmark already uses for
skill vs baseline, applied to the difference of the two effects. It is exact with few evals,
where Cochran's Q (a chi-square approximation with estimated variances) is not.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Enumerate every within-eval permutation up to this many (3 agents x 6 informative evals is
# 6**6 = 46,656); beyond it, a seeded sample of SAMPLED_PERMUTATIONS.
EXACT_MAX_PERMUTATIONS = 50_000
SAMPLED_PERMUTATIONS = 20_000
_BATCH = 5_000


@dataclass(frozen=True)
class InteractionTest:
    statistic: float  # variance across groups of their mean difference
    p_value: float
    exact: bool
    permutations: int
    n_blocks: int  # blocks (evals) given
    n_informative: int  # blocks whose values are not all equal
    significance_reachable: bool  # whether any data on these blocks could reach alpha


def _statistic(means: np.ndarray) -> np.ndarray:
    """Variance (ddof 0) across groups of the group means, along the last axis."""
    return np.var(means, axis=-1)


def _on_grid(d: np.ndarray) -> np.ndarray:
    """Pass-rate differences are fractions of small denominators: round to 1e-9 so values that
    are equal in exact arithmetic (1/3 - 2/3 and -1/3) compare equal."""
    return np.round(d, 9)


def interaction_test(d: np.ndarray | Sequence[Sequence[float]], alpha: float = 0.05, seed: int = 0,
                     exact_max: int = EXACT_MAX_PERMUTATIONS,
                     n_resamples: int = SAMPLED_PERMUTATIONS) -> InteractionTest:
    """Within-block permutation test that the groups' (columns') mean differs, on d of shape
    (blocks, groups), with 2+ groups. Blocks whose values are all equal cannot move the
    statistic and are dropped first (as the sign-flip test drops zeros). Exact over every
    within-block permutation when there are at most `exact_max`, else `n_resamples` seeded
    ones with the observed data counted among them (p = (1 + hits) / (1 + n), which is valid:
    Phipson & Smyth, Stat. Appl. Genet. Mol. Biol. 9, 2010)."""
    x = _on_grid(np.asarray(d, dtype=float))
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError("interaction_test needs a (blocks, groups) array with 2 or more groups")
    if not np.isfinite(x).all():
        raise ValueError("interaction_test needs finite values")
    n_blocks, groups = x.shape
    reported = float(_statistic(x.mean(axis=0))) if n_blocks else 0.0
    x = x[np.ptp(x, axis=1) > 0] if n_blocks else x
    m = x.shape[0]
    if m == 0:
        return InteractionTest(reported, 1.0, True, 1, n_blocks, 0, False)
    # Over the informative blocks only: the dropped ones add the same to every group's sum, so
    # the statistic over all blocks is this one times (m / n_blocks)**2, the same ordering.
    observed = float(_statistic(x.mean(axis=0)))
    fact = math.factorial(groups)
    reachable = significance_reachable(groups, m, alpha)
    tol = 1e-9 * max(1.0, abs(observed))
    perms = np.array(list(itertools.permutations(range(groups))))  # fact x groups
    total = fact**m if m * math.log(fact) <= math.log(exact_max) else None
    hits = 0
    if total is not None:
        for start in range(0, total, _BATCH):
            rows = np.arange(start, min(total, start + _BATCH))
            digits = (rows[:, None] // fact ** np.arange(m)[None, :]) % fact  # mixed radix: one perm per block
            hits += _count(x, perms[digits], observed - tol)
        return InteractionTest(reported, min(1.0, hits / total), True, total, n_blocks, m, reachable)
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, _BATCH):
        size = min(_BATCH, n_resamples - start)
        hits += _count(x, perms[rng.integers(0, fact, size=(size, m))], observed - tol)
    p = (1 + hits) / (1 + n_resamples)
    return InteractionTest(reported, min(1.0, p), False, n_resamples, n_blocks, m, reachable)


def significance_reachable(groups: int, informative: int, alpha: float) -> bool:
    """Whether any data on `informative` blocks can reach alpha. Relabelling every block the same
    way permutes the group means and keeps the statistic, so at least groups! of the
    groups!**m permutations reach the observed value: p >= groups!**(1 - m)."""
    return informative >= 1 and (informative - 1) * math.log(math.factorial(groups)) >= math.log(1 / alpha)


def informative_blocks(d: np.ndarray) -> int:
    """Blocks whose values are not all equal (the only ones that can move the test)."""
    x = _on_grid(np.asarray(d, dtype=float))
    return int(np.count_nonzero(np.ptp(x, axis=1) > 0)) if x.shape[0] else 0


def _count(x: np.ndarray, order: np.ndarray, floor: float) -> int:
    """How many of the permutations `order` (rows x blocks x groups: the source column of each
    group in each block) give a statistic >= floor."""
    permuted = np.take_along_axis(x[None, :, :], order, axis=2)  # rows x blocks x groups
    stat = _statistic(permuted.mean(axis=1))
    return int(np.count_nonzero(stat >= floor))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm, Scand. J. Statist. 6, 1979): the smallest
    p times m, the next times m - 1, ..., each at least the one before, at most 1. A test is
    rejected at family-wise alpha exactly when its adjusted p <= alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        out[i] = running
    return out
