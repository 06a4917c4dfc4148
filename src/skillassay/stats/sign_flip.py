"""The exact sign-flip test's limits (the paired test of skill vs baseline, by eval)."""

from __future__ import annotations

# 2**14 sign flips enumerate in ~0.05 s; 2**16 takes ~0.25 s and 2**20 ~7 s, which would
# break the "statistics in well under a second" budget, so beyond this we sample.
EXACT_MAX_NONZERO = 14
MONTE_CARLO_RESAMPLES = 50_000

# With m non-zero paired differences the smallest two-sided sign-flip p is 2 / 2**m, which is
# >= 0.05 for m <= 5: significance is then impossible whatever the data say.
MIN_NONZERO_FOR_SIGNIFICANCE = 6
