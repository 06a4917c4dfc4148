"""Why the paired intervals over-cover under A/A (issue 34): there the difference's interval holds 0
exactly when the sign-flip test does not reject, so its coverage is 1 - the test's size. This
draws calibration.py's A/A settings and prints, per setting, the one-sided rejection rates at
2.5% of the exact sign-flip test as the library computes it (ties at the observed sum count as
extreme) and with mid-p (they count half), and how often fewer than 6 evals differ (then no
test can reject). docs/statistics.md quotes its output.

    python benchmarks/sign_flip_size.py 2000      # draws per setting; 2000: ~10 CPU-min
"""

from __future__ import annotations

import sys

import numpy as np
from calibration import draw_rates


def pvals(d: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float, float]:
    d = np.round(d * 2520).astype(np.int64)  # an exact integer grid for K in 1, 3, 10: ties are exact
    nz = d[d != 0]
    m = nz.size
    if m == 0:
        return 1.0, 1.0, 1.0, 1.0
    if m <= 14:
        signs = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1) * 2 - 1
    else:
        signs = rng.choice([-1, 1], size=(20000, m))
        signs[0] = 1
    sums = signs @ nz
    t = nz.sum()
    ge, eq_hi, le = np.mean(sums >= t), np.mean(sums == t), np.mean(sums <= t)
    # one-sided p (greater / less), conventional and mid
    return float(ge), float(le), float(ge - 0.5 * eq_hi), float(le - 0.5 * eq_hi)

rng = np.random.default_rng(0)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
print("setting | conventional: reject > / < at 2.5% | mid-p: > / < | P(m<6)")
tot, cnt = np.zeros(4), 0
for pop in ("beta22", "mix"):
    for k in (1, 3, 10):
        for e in (5, 10, 20):
            r, few = np.zeros(4), 0
            for _ in range(n):
                rates = draw_rates(rng, pop, e)
                a, b = rng.binomial(k, rates) / k, rng.binomial(k, rates) / k
                pg, pl, mg, ml = pvals(a - b, rng)
                r += [pg <= 0.025, pl <= 0.025, mg <= 0.025, ml <= 0.025]
                few += np.count_nonzero(a - b) < 6
            r /= n
            tot += r
            cnt += 1
            print(f"{pop} K={k} E={e} | {100*r[0]:.2f} / {100*r[1]:.2f} | {100*r[2]:.2f} / {100*r[3]:.2f} | {100*few/n:.0f}%", flush=True)
print(f"overall | {100*tot[0]/cnt:.2f} / {100*tot[1]/cnt:.2f} | {100*tot[2]/cnt:.2f} / {100*tot[3]/cnt:.2f}")
