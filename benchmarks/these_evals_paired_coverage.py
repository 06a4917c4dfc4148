"""The paired "these evals" intervals against their own truth (issue 34): per setting one fixed eval
set (baseline rates from calibration.py's populations, the skill +0.15), trials redrawn 2,000
times; coverage of the difference (difference_these_evals) and of the ratio (ratio_these_evals),
and how often the ratio's interval lies wholly above / below the truth. Last, the A/A worst case
of a small design: every eval at 1/2 in both arms (truth: difference 0, ratio 1). docs/statistics.md
quotes it.

    PYTHONPATH=src python benchmarks/these_evals_paired_coverage.py
"""

from __future__ import annotations

import numpy as np
from calibration import draw_rates

from skillassay.analyze import paired_intervals as pi

DRAWS = 2000


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for pop in ("beta22", "mix", "all 1/2, A/A"):
        for k in (1, 3, 10):
            for e in (5, 10, 20):
                if pop == "all 1/2, A/A":
                    rates_b = rates_a = np.full(e, 0.5)
                else:
                    rates_b = draw_rates(rng, pop, e)
                    rates_a = np.clip(rates_b + 0.15, 0, 1)  # the evals are fixed; only trials are redrawn
                truth_r = rates_a.mean() / rates_b.mean() if rates_b.mean() > 0 else np.inf
                truth_d = (rates_a - rates_b).mean()
                cover_d = cover_r = above = below = 0
                for _ in range(DRAWS):
                    a, b = list(rng.binomial(k, rates_a)), list(rng.binomial(k, rates_b))
                    d = pi.difference_these_evals(a, [k] * e, b, [k] * e)
                    r = pi.ratio_these_evals(a, [k] * e, b, [k] * e)
                    cover_d += d is not None and d.interval[0] - 1e-12 <= truth_d <= d.interval[1] + 1e-12
                    if r is not None and r.interval is not None:
                        cover_r += r.interval[0] <= truth_r <= r.interval[1]
                        above += r.interval[0] > truth_r
                        below += r.interval[1] < truth_r
                rows.append((cover_d / DRAWS, cover_r / DRAWS, above / DRAWS, below / DRAWS))
                print(f"{pop} K={k} E={e}: difference {cover_d / DRAWS:.1%}, ratio {cover_r / DRAWS:.1%} "
                      f"(wholly above {above / DRAWS:.1%} / below {below / DRAWS:.1%})", flush=True)
    print(f"difference {min(r[0] for r in rows):.1%}..{max(r[0] for r in rows):.1%}, ratio "
          f"{min(r[1] for r in rows):.1%}..{max(r[1] for r in rows):.1%}, largest one-sided ratio miss "
          f"{max(max(r[2], r[3]) for r in rows):.1%}")


if __name__ == "__main__":
    main()
