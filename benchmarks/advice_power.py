"""Does the sample-size advice deliver the 80% it promises? Simulated through the library
(group_records and build_statistics: the code `run`, `aggregate` and `gate` use).

Each experiment draws a pilot run with a known truth, takes the advice the statistics give,
runs a fresh experiment of the advised size with the same truth, and counts whether the
verdict the advice promised is reached:

* difference: `power.evals_needed` (80% power to detect the skill-vs-baseline difference);
  success is the paired sign-flip test's p < 0.05 with the effect's sign. Baseline per-eval
  rates ~ Beta(2,2), with_skill = baseline + effect (clipped at 1); fresh evals on the re-run.
* ratio gate: `min_improvement_ratio 1.0`'s `evals_to_decide` on the same pilots; success is
  PASS. (At threshold 1 its deciding test is the difference's, so the two share re-runs when
  they advise the same size.)
* pass-rate gate by evals: `min_pass_rate`'s `evals_to_decide`, threshold = population mean
  (0.5) - gap; success is PASS on fresh evals.
* pass-rate gate by trials: `min_pass_rate` gives no trials advice, since more trials decide it
  only if the evals share one rate and no pilot can show that (Beta(2,2) evals that tied by
  chance were promised 90% and passed 63%); it states `trials_if_alike`, the trials that would
  decide it if they do. Success is PASS on the same evals at those trials, TRIAL_RERUNS
  re-runs per pilot, in the cells where the condition holds (every eval at 0.5).

The trials-to-call advice for a possible regression (compare) promises no power ("would be
called if the pass rates held"), so it is not measured here.

**What the 80% is.** Every size is planned for an effect (`min_detectable_effect` in the
config): 80% power if the true difference, or the true value's distance from the threshold, is
that effect (advice.power_stats says why not the observed one). Each cell plans for its own
truth, as a user who set `min_detectable_effect` to the effect that is there would: the paired
cells for the true mean difference (mean_difference: the clipping makes it a little less than
the effect), the gate cells for the gap. That is the promise's boundary: at a larger true effect
the power is higher, at a smaller one lower. `--planned X` plans every cell for X instead (e.g.
0.1, the default, against truths of +0.15 and +0.3: the power is then above 80%).

Advice beyond MAX_EVALS evals or MAX_TRIALS trials is re-run at the cap (a lower bound on its
power: power only grows with size), and the number capped is printed. Every rate carries its
95% Wilson interval (the simulation's own uncertainty); "sizes" gives the advised sizes'
quartiles and maximum.

**What is promised.** Each advice states the power planned at the size it gives
(assurance.planned_power): at least 80%, and more where one eval more moves the power by 10-20
points (at K = 10, +0.3 the exact test has 46%, 74%, 93% at 6, 7, 8 evals, so no size has 80%).
"power promised" is that figure averaged over the advised pilots; the promise is kept when the
power reached is within 5 points of it, which the column "within 5 points of the promise" says
row by row (kept()): "yes", or "within its interval" when the figure is outside but its 95%
interval reaches the band, so that the simulation cannot tell it from a kept promise.

**The exact test's power at the advised sizes.** One re-run per pilot scatters a cell's figure
by about 2.3 points at 300 pilots (a Bernoulli draw per pilot), more than the advice's own
error. For the difference the re-run's chance of success is known without drawing it: the
exact sign-flip test's power at that size and truth, tabulated by advice_rules_study.power_table
(2,000 runs per size, exact p-values on the per-eval lattice, checked against the library's in
tests/benchmarks/test_advice_rules_study.py). Averaged over the advised pilots, uncapped, it is the power
the advice reached with the re-runs' noise taken out (a Rao-Blackwellised form of the same
figure); the table prints it beside the re-runs'. The ratio gate at 1.0 passes only when that
same test rejects and its interval clears 1 too, so the same figure is an upper bound on its
power ("<= "). The pass-rate gate's re-runs have no such table (their decision is the
library's interval), so only their re-run figure is printed.

    python benchmarks/advice_power.py --quick       # one setting per advice kind, ~1 min
    python benchmarks/advice_power.py               # the table in docs/statistics.md (300 per cell)
    python benchmarks/advice_power.py --experiments 100 --k 3 --evals 10 --jobs 2
    python benchmarks/advice_power.py --planned 0.1  # the default plan against larger truths

Deterministic for a given --seed (each cell has its own generator).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics
from skillassay.stats.binomial import wilson_interval
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"
MAX_EVALS, MAX_TRIALS = 2000, 200  # re-runs beyond these are run at them (a lower bound)
# Each trials advice is re-run this many times on its evals: it goes to 5-15% of the pilots, so
# one re-run each would leave its rows 10-15 points wide. Given the pilot the re-runs are
# independent (same evals, same rates), so with every eval at one rate their Wilson interval is
# the simulation's; with evals that differ it is narrower than the spread between pilots.
TRIAL_RERUNS = 10
EFFECTS = (0.15, 0.3)  # with_skill - baseline, per eval (clipped): small, large
GAPS = (0.1, 0.2)  # population mean pass rate (0.5) minus the min_pass_rate threshold
TARGET = 0.8


def trials(rng: np.random.Generator, rates: dict[str, np.ndarray], k: int) -> list[TrialRecord]:
    """K Bernoulli trials per eval and configuration: the records a graded run would have."""
    out = []
    for config, rs in rates.items():
        passed = rng.random((len(rs), k)) < rs[:, None]
        out += [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=config, run_number=i + 1,
                            status="ok", passed=bool(passed[e, i]), passed_count=int(passed[e, i]),
                            total_count=1, tokens=1000, duration_seconds=1.0)
                for e in range(len(rs)) for i in range(k)]
    return out


def statistics(records: list[TrialRecord], k: int, thresholds: dict[str, float | None], planned: float) -> dict:
    return build_statistics(group_records(records, (SKILL, BASE)), SKILL, BASE, k, thresholds, seed=0,
                            min_detectable_effect=planned)


@functools.lru_cache(maxsize=64)
def mean_difference(effect: float) -> float:
    """The true mean difference an effect gives: E[clip(b + effect, 0, 1)] - E[b], b ~ Beta(2,2)
    (a midpoint rule on 20,000 points; the clipping makes it smaller than the effect)."""
    b = (np.arange(20_000) + 0.5) / 20_000
    w = 6 * b * (1 - b) / 20_000
    return float(np.sum(w * (np.clip(b + effect, 0, 1) - b)))


# ---------------------------------------------------------------------------------------------
# Tallies


@dataclass
class Tally:
    """One advice kind in one cell: how often advice was given, its sizes, and the re-runs."""

    pilots: int = 0
    sizes: list[int] = field(default_factory=list)
    capped: int = 0
    hits: int = 0
    runs: int = 0  # re-runs judged (more than the advised pilots where each is re-run several times)
    promised: list[float] = field(default_factory=list)  # the planned power each advice stated

    def add(self, size: int | None, cap: int, promised: float | None = None) -> int | None:
        """Record the advice and the power it promised; the size to re-run at (None: no advice
        to test)."""
        self.pilots += 1
        if size is None:
            return None
        self.sizes.append(size)
        self.promised.append(TARGET if promised is None else promised)
        self.capped += size > cap
        return min(size, cap)

    def promise(self) -> float:
        """The power the advice promised, averaged over the advised pilots: at least 80%, more
        where the size it gave has more (assurance.planned_power)."""
        return float(np.mean(self.promised)) if self.promised else math.nan

    def result(self, hit: bool) -> None:
        self.hits += bool(hit)
        self.runs += 1

    def reached(self) -> tuple[float, float, float]:
        """(power reached, its 95% Wilson interval) over the re-runs judged."""
        runs = self.runs or len(self.sizes)  # files saved before re-runs were counted: one per pilot
        lo, hi = wilson_interval(self.hits, runs) or (math.nan, math.nan)
        return self.hits / runs, lo, hi

    def cells(self) -> list[str]:
        n = len(self.sizes)
        given = f"{n}/{self.pilots}"
        if not n:
            return [given, "n/a", "n/a", "n/a", "0"]
        value, lo, hi = self.reached()
        q1, med, q3 = (int(round(float(x))) for x in np.percentile(self.sizes, [25, 50, 75]))
        return [given, f"{self.promise() * 100:.1f}%", f"{value * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]",
                f"{q1} / {med} / {q3}, max {max(self.sizes):,}", str(self.capped)]


@dataclass(frozen=True)
class Cell:
    kind: str  # "paired" (difference and ratio gate) or "gate" (min_pass_rate)
    k: int
    n_evals: int
    size: float  # the effect (paired) or the gap to the threshold (gate)
    population: str = "beta22"  # per-eval rates ~ Beta(2,2), or "equal": every eval at 0.5
    planned: float | None = None  # the advice's min_detectable_effect; None: the cell's own truth

    def plan(self) -> float:
        if self.planned is not None:
            return self.planned
        return mean_difference(self.size) if self.kind == "paired" else self.size


# ---------------------------------------------------------------------------------------------
# Experiments


def paired_experiment(rng: np.random.Generator, c: Cell, diff: Tally, ratio: Tally) -> None:
    def draw(n: int) -> dict[str, np.ndarray]:
        base = rng.beta(2, 2, n)
        return {SKILL: np.clip(base + c.size, 0, 1), BASE: base}

    th = {"min_improvement_ratio": 1.0}
    pilot = statistics(trials(rng, draw(c.n_evals), c.k), c.k, th, c.plan())
    g = pilot["gates"]["min_improvement_ratio"]
    n_diff = diff.add(pilot["power"]["evals_needed"], MAX_EVALS, pilot["power"]["planned_power"])
    # A decided pilot gets no advice: only an undecided gate is advised.
    n_ratio = (ratio.add(g["evals_to_decide"], MAX_EVALS, g["planned_power"])
               if g["decision"] == "INCONCLUSIVE" else None)
    done: dict[int, dict] = {}
    for n, tally in ((n_diff, diff), (n_ratio, ratio)):
        if n is None:
            continue
        if n not in done:
            done[n] = statistics(trials(rng, draw(n), c.k), c.k, th, c.plan())
        st = done[n]
        if tally is diff:
            d = st["paired"]["pass_rate_difference"]
            tally.result(d["p_value"] is not None and d["p_value"] < 0.05 and (d["mean"] or 0) > 0)
        else:
            tally.result(st["gates"]["min_improvement_ratio"]["decision"] == "PASS")


def gate_experiment(rng: np.random.Generator, c: Cell, by_evals: Tally, by_trials: Tally) -> None:
    thr = 0.5 - c.size
    th: dict[str, float | None] = {"min_pass_rate": thr}

    def draw(n: int) -> np.ndarray:
        return np.full(n, 0.5) if c.population == "equal" else rng.beta(2, 2, n)

    rates = draw(c.n_evals)
    g = statistics(trials(rng, {SKILL: rates}, c.k), c.k, th, c.plan())["gates"]["min_pass_rate"]
    if g["decision"] != "INCONCLUSIVE":
        return  # decided already: no advice
    if (e := by_evals.add(g["evals_to_decide"], MAX_EVALS, g.get("planned_power"))) is not None:
        again = statistics(trials(rng, {SKILL: draw(e)}, c.k), c.k, th, c.plan())
        by_evals.result(again["gates"]["min_pass_rate"]["decision"] == "PASS")
    if c.population != "equal":
        return  # trials_if_alike holds only if the evals share one rate: tested where they do
    if (k := by_trials.add(g.get("trials_if_alike"), MAX_TRIALS, g.get("trials_planned_power"))) is not None:
        for _ in range(TRIAL_RERUNS):
            again = statistics(trials(rng, {SKILL: rates}, k), k, th, c.plan())
            by_trials.result(again["gates"]["min_pass_rate"]["decision"] == "PASS")


def run_cell(args: tuple[Cell, int, int]) -> tuple[Cell, Tally, Tally, float]:
    """`experiments` pilots of one cell, on a generator of its own (so cells run in parallel
    and the output does not depend on their order)."""
    c, experiments, seed = args
    key = [seed, c.k, c.n_evals, int(round(c.size * 1000)), c.kind == "gate", c.population == "equal"]
    if c.planned is not None:
        key.append(int(round(c.planned * 1000)))
    rng = np.random.default_rng(key)
    a, b = Tally(), Tally()
    started = time.process_time()
    for _ in range(experiments):
        (paired_experiment if c.kind == "paired" else gate_experiment)(rng, c, a, b)
    return c, a, b, time.process_time() - started


# ---------------------------------------------------------------------------------------------
# Output


@functools.lru_cache(maxsize=16)
def _power_curve(effect: float, k: int) -> np.ndarray:
    """The exact sign-flip test's power (p < 0.05, positive sign) on advice_rules_study's size
    grid, at this cell's truth (its own generator: the same curve whatever the order)."""
    import advice_rules_study as study  # noqa: PLC0415 (a sibling script; only the table needs it)

    up, _ = study.power_table(np.array([effect]), k, np.random.default_rng([k, int(round(effect * 1000))]))
    return up


def exact_power(c: Cell, sizes: list[int]) -> float:
    """The exact test's power at each advised size, averaged over the advised pilots."""
    import advice_rules_study as study  # noqa: PLC0415

    curve = _power_curve(c.size, c.k)
    n = np.array(sizes, dtype=float)
    return float(np.mean(study.interp_power(curve, np.array([c.size]), np.full_like(n, c.size), n)))


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


HEADER = ["advice", "setting", "planned for", "advice given / pilots", "power promised (mean)", "power reached",
          "exact test's power at the advised sizes", "within 5 points of the promise",
          "advised size: quartiles, max", f"capped (re-run at {MAX_EVALS} evals / {MAX_TRIALS} trials)"]
ORDER = {"difference": 0, "ratio gate (1.0)": 1, "min_pass_rate, evals": 2, "min_pass_rate, trials if alike": 3}


def setting_of(c: Cell) -> str:
    if c.kind == "paired":
        return f"K={c.k}, {c.n_evals} evals, effect +{c.size:g} (mean difference {mean_difference(c.size):.3f})"
    return f"K={c.k}, {c.n_evals} evals, gap {c.size:g}" + (", every eval at 0.5" if c.population == "equal" else "")


def rows(results: list[tuple[Cell, Tally, Tally, float]]) -> list[list[str]]:
    out = []
    for c, a, b, _ in results:
        names = ("difference", "ratio gate (1.0)") if c.kind == "paired" else (
            "min_pass_rate, evals", "min_pass_rate, trials if alike")
        out += [(names[0], c, a), (names[1], c, b)]
    out.sort(key=lambda r: ORDER[r[0]])
    table_rows = []
    for name, c, t in out:
        given, promised, reached, *rest = t.cells()
        # At threshold 1 the ratio gate passes only when the difference's exact test rejects (and
        # its interval clears 1 as well): that test's power is an upper bound on the gate's.
        exact_value = exact_power(c, t.sizes) if c.kind == "paired" and t.sizes else None
        exact = ("n/a" if exact_value is None
                 else f"{'' if name == 'difference' else '<= '}{exact_value * 100:.1f}%")
        table_rows.append([name, setting_of(c), f"{c.plan():.3g}", given, promised, reached, exact,
                           kept(t, exact_value if name == "difference" else None), *rest])
    return table_rows


BAND = 0.05  # the promise is kept when the power reached is within 5 points of it


def kept(t: Tally, exact: float | None) -> str:
    """Whether the power reached is within BAND of the power promised: "yes"; "within its
    interval" when the figure is outside but its 95% interval reaches the band (the
    simulation cannot tell it from a kept promise); "no, short" / "no, over" otherwise. For the
    difference the exact test's power, which has the re-runs' scatter taken out, is judged."""
    if not t.sizes:
        return "n/a"
    promised = t.promise()
    value, lo, hi = (exact, exact, exact) if exact is not None else t.reached()
    if abs(value - promised) <= BAND:
        return "yes"
    if hi >= promised - BAND and lo <= promised + BAND:
        return "within its interval"
    return "no, short" if value < promised else "no, over"


def save(path: Path, result: tuple[Cell, Tally, Tally, float]) -> None:
    """One finished cell, appended as a JSON line: a long run keeps what it has finished."""
    c, a, b, cpu = result
    with path.open("a") as f:
        f.write(json.dumps({"cell": dataclasses.asdict(c), "a": dataclasses.asdict(a),
                            "b": dataclasses.asdict(b), "cpu": cpu}) + "\n")


def load(paths: list[Path]) -> list[tuple[Cell, Tally, Tally, float]]:
    out = []
    for path in paths:
        for line in path.read_text().splitlines():
            d = json.loads(line)
            out.append((Cell(**d["cell"]), Tally(**d["a"]), Tally(**d["b"]), float(d["cpu"])))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="K = 3, 10 evals, 40 pilots per cell")
    ap.add_argument("--experiments", type=int, default=None, help="pilots per cell (default 300)")
    ap.add_argument("--k", type=int, nargs="*", default=None, help="trials per eval (default 1 3 10)")
    ap.add_argument("--evals", type=int, nargs="*", default=None, help="pilot evals (default 5 10 20)")
    ap.add_argument("--kind", nargs="*", choices=("paired", "gate", "gate-equal"), default=None,
                    help="paired: difference and ratio gate; gate: min_pass_rate on Beta(2,2) evals; "
                         "gate-equal: min_pass_rate with every eval at 0.5 (where trials can decide it)")
    ap.add_argument("--planned", type=float, default=None,
                    help="plan every cell's advice for this min_detectable_effect (default: the cell's own truth)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, default=None, help="append each finished cell to this JSON-lines file")
    ap.add_argument("--table", type=Path, nargs="*", default=None,
                    help="print the table of saved cells (files from --save) instead of running")
    args = ap.parse_args(argv)
    if args.table:
        results = load(args.table)
        print(table(HEADER, rows(results)))
        print(f"\n{sum(r[3] for r in results):.0f} CPU-s in all.")
        return
    ks = args.k or ([3] if args.quick else [1, 3, 10])
    evals = args.evals or ([10] if args.quick else [5, 10, 20])
    n = args.experiments or (40 if args.quick else 300)
    kinds = args.kind or ["paired", "gate", "gate-equal"]
    cells = [Cell("gate" if kind == "gate-equal" else kind, k, e, size,
                  "equal" if kind == "gate-equal" else "beta22", args.planned)
             for kind in kinds for k in ks for e in evals for size in (EFFECTS if kind == "paired" else GAPS)]
    started = time.perf_counter()
    work = [(c, n, args.seed) for c in cells]
    results = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for result in (pool.map(run_cell, work) if args.jobs > 1 else map(run_cell, work)):
            results.append(result)
            print(f"{result[0]}: {result[3]:.0f} CPU-s", file=sys.stderr, flush=True)
            if args.save:
                save(args.save, result)
    print(table(HEADER, rows(results)))
    print(f"\n{n} pilots per cell, seed {args.seed}; {time.perf_counter() - started:.0f} s wall, "
          f"{sum(r[3] for r in results):.0f} CPU-s over {args.jobs} process(es), load average "
          f"{os.getloadavg()[0]:.1f}.")


if __name__ == "__main__":
    main()
