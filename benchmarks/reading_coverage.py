"""How often each per-configuration interval misses its own truth, per reading, drawn directly.

"evals like these" (the population reading) is checked against the population mean (0.5 for
pass rates, calibration.TOKEN_POP_MEAN for tokens); "these evals" against the mean of the
drawn evals' true values. A miss on the low side (the interval wholly above the truth) is a
false PASS of min_pass_rate with the threshold at the truth; a miss on the high side is a false
FAIL (for max_avg_tokens the sides swap). Also printed: the pass-rate interval the gate used
before (the hull of three intervals) and the two token intervals the population one joins, each
alone. The data are calibration.py's (same truths, tokens, trial noise).

    python benchmarks/reading_coverage.py --draws 1000 --jobs 2
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import TOKEN_MEAN, TOKEN_POP_MEAN, draw_rates, wilson  # noqa: E402

from skillassay.analyze import rate_intervals as ri  # noqa: E402
from skillassay.stats.beta_binomial import beta_binomial_mean_interval
from skillassay.stats.binomial import clopper_pearson_interval
from skillassay.stats.lognormal import lognormal_mean_interval
from skillassay.stats.means import binomial_floor_se, clustered_mean, pooled_clustered_mean  # noqa: E402


@dataclass
class Misses:
    low: int = 0  # interval wholly above the truth
    high: int = 0  # wholly below
    n: int = 0
    width: float = 0.0

    def add(self, iv: tuple[float, float] | None, truth: float) -> None:
        if iv is None:
            return
        self.n += 1
        self.low += iv[0] > truth + 1e-12
        self.high += iv[1] < truth - 1e-12
        self.width += min(iv[1], 1e12) - iv[0]

    def text(self) -> str:
        def rate(h: int) -> str:
            lo, hi = wilson(h, self.n)
            return f"{100 * h / self.n:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]"
        return f"{rate(self.low)} / {rate(self.high)} / w {self.width / max(self.n, 1):.4g}"


@dataclass
class Tally:
    cells: dict[str, Misses] = field(default_factory=dict)

    def get(self, name: str) -> Misses:
        return self.cells.setdefault(name, Misses())


def old_pass_hull(c: np.ndarray, k: np.ndarray) -> tuple[float, float] | None:
    """The previous suite pass-rate interval: hull of the floored t, beta-binomial and CP."""
    means = c / k
    est = clustered_mean(means, bounds=(0.0, 1.0), floor_se=binomial_floor_se(means, k))
    if est.interval is None:
        return None
    lo, hi = est.interval
    if np.any(k > 1):
        bb = beta_binomial_mean_interval(c, k)
        if bb is not None:
            lo, hi = min(lo, bb[0]), max(hi, bb[1])
    if np.all(k == 1):
        cp = clopper_pearson_interval(int(c.sum()), int(k.size))
        lo, hi = min(lo, cp[0]), max(hi, cp[1])
    return (lo, hi)


def pass_rate_cells(t: Tally, c: np.ndarray, ks: np.ndarray, rates: np.ndarray) -> None:
    t.get("pass rate, evals like these").add(ri.pass_rate_interval(c, ks, "population"), 0.5)
    t.get("pass rate, these evals").add(ri.pass_rate_interval(c, ks, "these_evals"), float(rates.mean()))
    t.get("pass rate, before (hull)").add(old_pass_hull(c, ks), 0.5)


def run_setting(args: tuple[str, int, int, int, int, bool]) -> tuple[tuple[str, int, int], Tally]:
    population, k, n_evals, draws, seed, pass_rates = args
    rng = np.random.default_rng([seed, k, n_evals, 0 if population == "beta22" else 1])
    t = Tally()
    ks = np.full(n_evals, k)
    for _ in range(draws):
        rates = draw_rates(rng, population, n_evals)
        c = rng.binomial(k, rates)
        if pass_rates:
            pass_rate_cells(t, c, ks, rates)
        mu = TOKEN_MEAN * rng.lognormal(0, 0.5, n_evals)
        toks = [m * rng.lognormal(-0.3**2 / 2, 0.3, k) for m in mu]
        sums = np.array([x.sum() for x in toks])
        wv = [float(np.var(x, ddof=1)) if k > 1 else None for x in toks]
        pop = ri.cost_interval(sums, ks, wv, "population")
        t.get("tokens, evals like these").add(pop, TOKEN_POP_MEAN)
        t.get("tokens, these evals").add(ri.cost_interval(sums, ks, wv, "these_evals"), float(mu.mean()))
        t.get("tokens, t alone").add(pooled_clustered_mean(sums, ks).interval, TOKEN_POP_MEAN)
        t.get("tokens, lognormal generalized alone").add(lognormal_mean_interval(sums / ks), TOKEN_POP_MEAN)
    return (population, k, n_evals), t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--k", type=int, nargs="+", default=[1, 3, 10])
    ap.add_argument("--evals", type=int, nargs="+", default=[5, 10, 20, 50])
    ap.add_argument("--populations", nargs="+", default=["beta22", "mix"])
    ap.add_argument("--tokens-only", action="store_true", help="skip the pass rates (the slow part)")
    a = ap.parse_args(argv)
    units = [(p, k, e, a.draws, a.seed, not a.tokens_only) for p in a.populations for k in a.k for e in a.evals]
    with ProcessPoolExecutor(a.jobs) as pool:
        results = dict(pool.map(run_setting, units)) if a.jobs > 1 else dict(map(run_setting, units))
    names = list(next(iter(results.values())).cells)
    print(f"draws {a.draws} per setting, seed {a.seed}; each cell: misses low (interval above the truth) "
          "/ misses high / mean width, 95% Wilson intervals\n")
    print("| setting | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    total: dict[str, Misses] = {n: Misses() for n in names}
    for (p, k, e), t in results.items():
        row = []
        for n in names:
            m = t.cells.get(n, Misses())
            row.append(m.text() if m.n else "n/a")
            tot = total[n]
            tot.low, tot.high, tot.n, tot.width = tot.low + m.low, tot.high + m.high, tot.n + m.n, tot.width + m.width
        print(f"| {p}, K={k}, {e} evals | " + " | ".join(row) + " |")
    print("| all | " + " | ".join(total[n].text() if total[n].n else "n/a" for n in names) + " |")


if __name__ == "__main__":
    main()
