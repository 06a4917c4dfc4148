"""Is the matrix's heterogeneity test calibrated? (issue 37; stats/heterogeneity.py)

Simulates agents measured on the same evals, K trials per eval and arm, and runs the
within-eval permutation test of the agent x skill interaction on the per-eval paired
differences, as analyze/matrix.py does:

- A/A scenarios (every agent has the same true effect): how often the test is called, which
  must be at most alpha within Monte-Carlo error (the Wilson interval of the rate reaches
  alpha or below). "identical": the agents are the same (same per-eval rates); "levels": the
  agents' baselines differ (0.1 to 0.6), the per-eval effect is the same +0.2, so the
  differences' spread differs by agent (binomial noise); "interaction": each agent's per-eval
  effect is its own draw around the same mean; "spread": one agent's per-eval effect is
  constant, another's swings +-0.2 around the same mean (the least exchangeable null).
- Power: one agent on which the skill does nothing, the others +0.3 (the issue's "done when").

    python benchmarks/matrix_calibration.py --replicates 1000 --resamples 2000

Prints one markdown table; tests/benchmarks/test_matrix_calibration.py runs a small version.
With two agents analyze/matrix.py runs the same test as the sign-flip test of the two effects'
difference (stats.paired.sign_flip_p_value): identical p when exact (up to 14-15 informative evals),
another valid Monte-Carlo draw of it beyond.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skillassay.stats.heterogeneity import interaction_test  # noqa: E402

# (agents, evals) -> (with-skill rates, baseline rates), each (evals, agents)
Rates = tuple[np.ndarray, np.ndarray]
Scenario = Callable[[np.random.Generator, int, int], Rates]


def _identical(rng: np.random.Generator, agents: int, evals: int) -> Rates:
    base = rng.beta(2, 2, size=(evals, 1))
    skill = np.clip(base + 0.2, 0, 1)
    return np.repeat(skill, agents, axis=1), np.repeat(base, agents, axis=1)


def _levels(rng: np.random.Generator, agents: int, evals: int) -> Rates:
    level = np.linspace(0.1, 0.6, agents)[None, :]
    base = np.clip(level + rng.uniform(-0.1, 0.1, size=(evals, agents)), 0.02, 0.78)
    return base + 0.2, base


def _interaction(rng: np.random.Generator, agents: int, evals: int) -> Rates:
    base = rng.uniform(0.1, 0.5, size=(evals, 1)).repeat(agents, axis=1)
    effect = np.clip(rng.normal(0.2, 0.15, size=(evals, agents)), -base, 1 - base)
    return base + effect, base


def _spread(rng: np.random.Generator, agents: int, evals: int) -> Rates:
    base = rng.uniform(0.3, 0.4, size=(evals, 1)).repeat(agents, axis=1)
    swing = np.linspace(0.0, 0.2, agents)[None, :] * rng.choice([-1.0, 1.0], size=(evals, agents))
    return base + 0.2 + swing, base


def _one_without(rng: np.random.Generator, agents: int, evals: int) -> Rates:
    base = rng.uniform(0.1, 0.6, size=(evals, 1)).repeat(agents, axis=1)
    effect = np.full((1, agents), 0.3)
    effect[0, -1] = 0.0
    return base + effect, base


SCENARIOS: dict[str, tuple[Scenario, bool]] = {  # name -> (draw, is the null true)
    "identical": (_identical, True),
    "levels": (_levels, True),
    "interaction": (_interaction, True),
    "spread": (_spread, True),
    "one agent without effect": (_one_without, False),
}


@dataclass
class Cell:
    scenario: str
    agents: int
    evals: int
    k: int
    calls: int = 0
    n: int = 0

    def rate(self) -> float:
        return self.calls / self.n if self.n else math.nan


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run_cell(cell: Cell, replicates: int, resamples: int, alpha: float, seed: int) -> Cell:
    draw, _ = SCENARIOS[cell.scenario]
    rng = np.random.default_rng(seed)
    for r in range(replicates):
        skill, base = draw(rng, cell.agents, cell.evals)
        d = (rng.binomial(cell.k, skill) - rng.binomial(cell.k, base)) / cell.k
        test = interaction_test(d, alpha=alpha, seed=r, n_resamples=resamples)
        cell.calls += test.p_value <= alpha
        cell.n += 1
    return cell


def check(cells: Sequence[Cell], alpha: float) -> list[str]:
    """The A/A cells whose false-call rate exceeds alpha beyond Monte-Carlo error."""
    return [f"{c.scenario} A={c.agents} E={c.evals} K={c.k}: {c.calls}/{c.n}" for c in cells
            if SCENARIOS[c.scenario][1] and wilson(c.calls, c.n)[0] > alpha]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=2000, help="sampled permutations beyond the exact limit")
    ap.add_argument("--agents", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--evals", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--k", type=int, nargs="+", default=[3])
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    cells = []
    print(f"### Heterogeneity test: share of {args.replicates} replicates called at alpha {args.alpha:g}\n")
    print("| Scenario | Null true | Agents | Evals | K | Called | 95% MC interval |")
    print("|---|---|---|---|---|---|---|")
    for i, (name, a, e, k) in enumerate((s, a, e, k) for s in args.scenarios for a in args.agents
                                         for e in args.evals for k in args.k):
        cell = run_cell(Cell(name, a, e, k), args.replicates, args.resamples, args.alpha, args.seed + 1000 * i)
        lo, hi = wilson(cell.calls, cell.n)
        print(f"| {name} | {'yes' if SCENARIOS[name][1] else 'no'} | {a} | {e} | {k} | "
              f"{100 * cell.rate():.1f}% | {100 * lo:.1f}..{100 * hi:.1f}% |", flush=True)
        cells.append(cell)
    bad = check(cells, args.alpha)
    print(f"\n{len(cells)} cells in {time.perf_counter() - started:.0f} s; "
          + ("every A/A cell at or below alpha within Monte-Carlo error" if not bad else
             "A/A cells above alpha beyond Monte-Carlo error: " + "; ".join(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
