"""The within-eval permutation test of the agent x skill interaction and Holm's adjustment
(stats/heterogeneity.py), against independent computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from skillassay.stats.heterogeneity import holm_adjust, interaction_test
from skillassay.stats.paired import sign_flip_p_value


def brute_force_p(d: np.ndarray) -> float:
    """Every within-row permutation, written out with itertools: the definition of the test."""
    def stat(x: np.ndarray) -> float:
        return float(np.var(x.mean(axis=0)))

    observed = stat(d)
    perms = list(itertools.permutations(range(d.shape[1])))
    hits = total = 0
    for choice in itertools.product(perms, repeat=d.shape[0]):
        x = np.array([row[list(p)] for row, p in zip(d, choice, strict=True)])
        hits += stat(x) >= observed - 1e-9
        total += 1
    return hits / total


@pytest.mark.parametrize("seed", range(6))
def test_exact_p_is_the_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = (rng.integers(0, 4, size=(4, 3)) - rng.integers(0, 4, size=(4, 3))) / 3
    test = interaction_test(d)
    assert test.exact and test.p_value == pytest.approx(brute_force_p(d), abs=1e-12)


def test_two_agents_is_the_sign_flip_test_of_their_difference() -> None:
    """The stats notes' reference differences: with two groups, permuting within a row is a
    sign flip of the difference, so the p is the paired sign-flip test's (0.078125)."""
    diff = np.array([1 / 3, 2 / 3, 0, -1 / 3, 1 / 3, 2 / 3, 1, 1 / 3])
    base = np.array([0.0, 1 / 3, 1.0, 2 / 3, 0.0, 1 / 3, 0.0, 1 / 3])
    d = np.column_stack([base + diff, base])
    test = interaction_test(d)
    assert test.p_value == pytest.approx(0.078125) == pytest.approx(sign_flip_p_value(diff)[0])
    assert test.n_informative == 7 and test.n_blocks == 8  # the tie drops, as the sign-flip test drops zeros


def test_rows_where_every_group_agrees_carry_nothing() -> None:
    test = interaction_test(np.full((6, 3), 0.25))
    assert test.p_value == 1.0 and test.n_informative == 0 and not test.significance_reachable
    assert test.statistic == 0.0


@pytest.mark.parametrize(("groups", "informative", "reachable"), [(2, 5, False), (2, 6, True), (3, 2, False),
                                                                   (3, 3, True)])
def test_when_significance_is_reachable(groups: int, informative: int, reachable: bool) -> None:
    """Relabelling every row the same way keeps the statistic: the smallest p is
    groups! ** (1 - rows); 2 groups need 6 rows (1/32), 3 groups 3 rows (1/36)."""
    d = np.tile(np.arange(groups, dtype=float) / groups, (informative, 1))  # the most extreme data
    test = interaction_test(d)
    assert test.significance_reachable is reachable
    assert test.p_value == pytest.approx(math.factorial(groups) ** (1 - informative))


def test_sampled_p_agrees_with_exact_and_is_seeded() -> None:
    rng = np.random.default_rng(3)
    d = (rng.integers(0, 4, size=(6, 3)) - rng.integers(0, 4, size=(6, 3))) / 3
    exact = interaction_test(d)
    assert exact.exact and exact.permutations == 6**6
    sampled = interaction_test(d, exact_max=100, n_resamples=20_000, seed=1)
    assert not sampled.exact and sampled.permutations == 20_000
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.01)
    assert interaction_test(d, exact_max=100, n_resamples=20_000, seed=1) == sampled


def test_a_clear_difference_is_called() -> None:
    d = np.column_stack([np.full(10, 0.75), np.full(10, 0.7), np.zeros(10)]) + np.linspace(-0.1, 0.1, 10)[:, None]
    d[:, 2] += np.tile([0.05, -0.05], 5)
    test = interaction_test(d)
    assert test.p_value < 0.001 and test.significance_reachable and not test.exact


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="2 or more groups"):
        interaction_test(np.zeros((5, 1)))
    with pytest.raises(ValueError, match="finite"):
        interaction_test(np.array([[0.1, np.nan], [0.2, 0.3]]))


def test_holm_adjust() -> None:
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm_adjust([]) == []
    # statsmodels' multipletests(ps, method="holm")[1] for these (importing it costs ~3 s)
    ps = [0.001, 0.2, 0.013, 0.04, 0.6, 0.0125]
    assert holm_adjust(ps) == pytest.approx([0.006, 0.4, 0.0625, 0.12, 0.6, 0.0625])
