"""benchmarks/advice_rules_study.py computes what the library computes, faster: its FFT sign-flip
p-values are the exact test's."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import repo_paths

from skillassay.stats.paired import sign_flip_p_value

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
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
            assert pv == pytest.approx(sign_flip_p_value(d)[0], abs=1e-9)  # exact up to 14 non-zero
