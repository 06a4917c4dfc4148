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
* pass-rate gate by trials: its `trials_to_decide`; success is PASS on the same evals (same
  true rates) at the advised trials per eval. With Beta(2,2) evals the spread between evals
  (sd 0.22) seldom lets trials alone decide it, so cells with every eval at 0.5 test this one.

The trials-to-call advice for a possible regression (compare) promises no power ("would be
called if the pass rates held"), so it is not measured here.

**What the 80% is averaged over.** The advice is sized by assurance: the chance of success
averaged over the truths the pilot allows (the posterior under a prior flat over the values a
pass rate allows: statistics.difference_range, gap_range). That is a Bayesian promise:
among the runs given advice, averaged over the truths that produce such pilots, 80% succeed; for
each pilot E[success | pilot] = its assurance, so the promise holds whatever selects the pilots
that get advice (only undecided gates; only pilots sure enough of the side). The default mode
checks something else, the frequentist power at one fixed truth averaged over pilots; there a
pilot that overstated a weak effect, or an undecided gate pilot that understated a clear one,
gets advice sized for a truth that is not the one simulated, and the fixed-truth rate can miss
80% without the advice breaking its promise. `--truth prior` checks the promise itself: every
experiment draws its own truth from a stated prior, then runs the same pipeline (pilot,
build_statistics, the same selection, the same success criteria and cap), and the table puts
the mean assurance promised, at the size actually re-run (below 80% when capped), beside the
success rate. Success is the verdict in the direction the pilot saw (a significant difference
of its sign; PASS or FAIL as the pilot's estimate lies above or below the threshold), since that
is what the assurance is the probability of.

The priors: paired cells draw the effect from Uniform(-0.1, 0.5) (baselines Beta(2,2), skill
clipped to [0, 1]: from a small harm to the largest effect Beta(2,2) baselines leave room for;
the clipping makes the true mean difference -0.099 to 0.41); gate cells draw the population
mean from Uniform(0.25, 0.75) around a threshold of 0.5, with per-eval rates
Beta(4 mu, 4 (1 - mu)) (Beta(2,2) at mu = 0.5) or all at mu. The assurance's prior is flat
over the values a pass rate allows (a mean difference in [-mu_b, 1 - mu_b], about 1 wide; a
mean pass rate in [0, 1]), wider than these priors (0.51 and 0.5 wide), so E[success | pilot] =
assurance only where the generating prior is flat across the pilot's likelihood, in the mean
and in log sigma. These priors are 2.4 pilot SEs wide at K = 1 with 5 evals, 5.6 at K = 3 with
10, 14 at K = 10 with 20 (paired; the gates' 2.3-8.5), where the pass-rate range is about twice
that: where they are narrow the true posterior is cut off by their edges before the range's, so
a pilot that saw an extreme effect is promised more than its truth delivers. (Before the advice's
prior was cut to that range it was flat everywhere, and promised more still.) The column
"pilots 2 SE inside the prior" keeps the re-runs whose pilot estimate lies
two of its SEs inside the support of the true mean, where the edges do not bind (read it at
10-20 pilot evals: at 5 the filter, on the pilot's own SE, admits mostly pilots whose spread came
out small, which are the over-promised ones). The spread
sigma is not drawn from a prior at all: it is what Beta(2,2) evals and K trials give (mostly
trial noise), so the flat prior on log sigma, which at 5-10 pilot evals leaves sigma uncertain
by a factor of 1.5-2, is part of what is checked, as is the normal model of bounded,
lattice-valued per-eval differences. `--effect-prior` / `--mean-prior` change the priors.

Advice beyond MAX_EVALS evals or MAX_TRIALS trials is re-run at the cap (a lower bound on its
power: power only grows with size), and the number capped is printed. Every rate carries its
95% Wilson interval (the simulation's own uncertainty); "sizes" gives the advised sizes'
quartiles and maximum.

    python benchmarks/advice_power.py --quick       # one setting per advice kind, ~1 min
    python benchmarks/advice_power.py               # the README table (300 per cell)
    python benchmarks/advice_power.py --experiments 100 --k 3 --evals 10 --jobs 2
    python benchmarks/advice_power.py --truth prior  # the promise averaged over truths

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

from skillassay.analyze import assurance
from skillassay.analyze import numerics as stats
from skillassay.analyze import statistics as statistics_module
from skillassay.analyze.statistics import MetricSeries, build_statistics, group_records
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"
MAX_EVALS, MAX_TRIALS = 200, 200  # re-runs beyond these are run at them (a lower bound)
EFFECTS = (0.15, 0.3)  # with_skill - baseline, per eval (clipped): small, large
GAPS = (0.1, 0.2)  # population mean pass rate (0.5) minus the min_pass_rate threshold
TARGET = 0.8
# --truth prior: each experiment's truth drawn from these (see the module docstring).
EFFECT_PRIOR = (-0.1, 0.5)  # the paired cells' effect ~ Uniform(lo, hi)
MEAN_PRIOR = (0.25, 0.75)  # the gate cells' population mean ~ Uniform(lo, hi)
GATE_THRESHOLD = 0.5  # min_pass_rate in the prior-averaged gate cells
CONCENTRATION = 4.0  # per-eval rates ~ Beta(4 mu, 4 (1 - mu)): Beta(2,2) at mu = 0.5


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


def statistics(records: list[TrialRecord], k: int, thresholds: dict[str, float | None]) -> dict:
    return build_statistics(group_records(records, (SKILL, BASE)), SKILL, BASE, k, thresholds, seed=0)


# ---------------------------------------------------------------------------------------------
# The assurance each piece of advice promised, at the size it is re-run at


def paired_assurance(records: list[TrialRecord], n: int) -> tuple[float, float, float]:
    """The assurance the paired advice (the difference's evals_needed; the ratio gate's at
    threshold 1, whose z_e is the same difference) holds at n fresh evals, with the pilot's mean
    difference and the SE the advice was sized on: recomputed from the pilot with the library's
    own planning sd and lattice (statistics' private helpers, so the figure is the one the
    advice was sized on, not a re-derivation of it)."""
    used = group_records(records, (SKILL, BASE))
    d = np.array([c.arms[SKILL].pass_rate - c.arms[BASE].pass_rate for c in used], dtype=float)
    sd = statistics_module._planning_sd(float(d.std(ddof=1)),
                                        statistics_module._trial_noise(used, SKILL, BASE))
    step = statistics_module._lattice_step(used, SKILL, BASE) / sd
    se = sd / math.sqrt(len(d))
    base = float(np.mean([c.arms[BASE].pass_rate for c in used]))
    bounds = statistics_module._scaled(statistics_module.difference_range(base), se)
    return assurance.signflip_assurance(float(d.mean()) / se, len(d), n, step, bounds=bounds), float(d.mean()), se


@functools.lru_cache(maxsize=64)
def mean_difference(effect: float) -> float:
    """The true mean difference an effect gives: E[clip(b + effect, 0, 1)] - E[b], b ~ Beta(2,2)
    (a midpoint rule on 20,000 points; the clipping makes it smaller than the effect)."""
    b = (np.arange(20_000) + 0.5) / 20_000
    w = 6 * b * (1 - b) / 20_000
    return float(np.sum(w * (np.clip(b + effect, 0, 1) - b)))


def interior(estimate: float, se: float, support: tuple[float, float], margin: float = 2.0) -> bool:
    """Whether the pilot's estimate lies `margin` SEs inside the prior's support of the true
    mean: there the generating prior is flat across most of the likelihood, so the flat-prior
    posterior the assurance averages over is the true one (near an edge the true posterior is
    cut off by it and the flat one is not)."""
    return support[0] + margin * se <= estimate <= support[1] - margin * se


def gate_series(records: list[TrialRecord]) -> tuple[MetricSeries, float, float]:
    """The pass-rate gate's per-eval series, its estimate and its SE (what _gap_advice sizes on)."""
    series = MetricSeries.build(group_records(records, (SKILL, BASE)), SKILL, "pass")
    est = series.estimate(pooled=False)
    assert est is not None and est.se is not None
    return series, est.mean, est.se


def gate_evals_assurance(records: list[TrialRecord], thr: float, n: int) -> tuple[float, float, float]:
    """The assurance `min_pass_rate`'s evals_to_decide holds at n fresh evals, with the pilot's
    estimate and SE."""
    series, mean, se = gate_series(records)
    bounds = statistics_module._scaled(statistics_module.gap_range("min_pass_rate", thr), se)
    return assurance.fresh_assurance((mean - thr) / se, len(series.means), n, bounds=bounds), mean, se


def gate_trials_assurance(records: list[TrialRecord], thr: float, k: int) -> tuple[float, float, float]:
    """The assurance `min_pass_rate`'s trials_to_decide holds at k trials on the same evals,
    with the pilot's estimate and SE."""
    series, mean, se = gate_series(records)
    noise = series.noise_of_means()  # as _gap_advice sized it
    return assurance.trials_assurance(abs(mean - thr), float(np.var(series.means, ddof=1)), noise,
                                      len(series.means), float(np.mean(series.counts)), k), mean, se


# ---------------------------------------------------------------------------------------------
# Tallies


@dataclass
class Tally:
    """One advice kind in one cell: how often advice was given, its sizes, and the re-runs;
    `promised` is the assurance the advice holds at the size re-run (below 80% when capped)."""

    pilots: int = 0
    sizes: list[int] = field(default_factory=list)
    capped: int = 0
    hits: int = 0
    promised: list[float] = field(default_factory=list)
    outcomes: list[bool] = field(default_factory=list)  # with `promised`: each re-run's success
    inside: list[bool] = field(default_factory=list)  # and whether its pilot was interior()

    def add(self, size: int | None, cap: int) -> int | None:
        """Record the advice; the size to re-run at (None: no advice to test)."""
        self.pilots += 1
        if size is None:
            return None
        self.sizes.append(size)
        self.capped += size > cap
        return min(size, cap)

    def result(self, hit: bool, promised: float | None = None, inside: bool = False) -> None:
        self.hits += bool(hit)
        if promised is not None:
            self.promised.append(promised)
            self.outcomes.append(bool(hit))
            self.inside.append(inside)

    def interior_cell(self) -> str:
        """Success rate vs mean promise among the re-runs whose pilot was interior()."""
        got = [(h, p) for h, p, i in zip(self.outcomes, self.promised, self.inside, strict=True) if i]
        if not got:
            return "n/a"
        hits = sum(h for h, _ in got)
        lo, hi = stats.wilson_interval(hits, len(got)) or (math.nan, math.nan)
        return (f"{len(got)}: {hits / len(got) * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}] vs "
                f"{np.mean([p for _, p in got]) * 100:.1f}%")

    def cells(self, with_promise: bool = False) -> list[str]:
        n = len(self.sizes)
        given = f"{n}/{self.pilots}"
        if not n:
            return [given, "n/a", *(["n/a", "n/a"] if with_promise else []), "n/a", "0"]
        lo, hi = stats.wilson_interval(self.hits, n) or (math.nan, math.nan)
        q1, med, q3 = (int(round(float(x))) for x in np.percentile(self.sizes, [25, 50, 75]))
        promise = [f"{np.mean(self.promised) * 100:.1f}%" if self.promised else "n/a",
                   self.interior_cell()] if with_promise else []
        return [given, f"{self.hits / n * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]", *promise,
                f"{q1} / {med} / {q3}, max {max(self.sizes):,}", str(self.capped)]


KINDS = ("difference", "ratio gate", "pass-rate gate, evals", "pass-rate gate, trials")


@dataclass(frozen=True)
class Cell:
    kind: str  # "paired" (difference and ratio gate) or "gate" (min_pass_rate)
    k: int
    n_evals: int
    size: float  # the effect (paired) or the gap to the threshold (gate); 0 with truth "prior"
    population: str = "beta22"  # per-eval rates ~ Beta(2,2), or "equal": every eval at 0.5
    truth: str = "fixed"  # "prior": each experiment draws its effect or mean from the prior
    prior: tuple[float, float] = (0.0, 0.0)  # with truth "prior": Uniform(lo, hi) of it


# ---------------------------------------------------------------------------------------------
# Experiments


def paired_experiment(rng: np.random.Generator, c: Cell, diff: Tally, ratio: Tally) -> None:
    # With truth "prior" the effect is this experiment's own, drawn before its pilot; success is
    # then the verdict in the direction the pilot saw (what assurance promises), which with a
    # fixed positive effect is the PASS / positive difference counted below.
    effect = float(rng.uniform(*c.prior)) if c.truth == "prior" else c.size

    def draw(n: int) -> dict[str, np.ndarray]:
        base = rng.beta(2, 2, n)
        return {SKILL: np.clip(base + effect, 0, 1), BASE: base}

    th = {"min_improvement_ratio": 1.0}
    records = trials(rng, draw(c.n_evals), c.k)
    pilot = statistics(records, c.k, th)
    g = pilot["gates"]["min_improvement_ratio"]
    up = c.truth != "prior" or (pilot["power"]["observed_difference"] or 0) > 0
    n_diff = diff.add(pilot["power"]["evals_needed"], MAX_EVALS)
    # A decided pilot gets no advice: only an undecided gate is advised.
    n_ratio = ratio.add(g["evals_to_decide"], MAX_EVALS) if g["decision"] == "INCONCLUSIVE" else None
    done: dict[int, dict] = {}
    for n, tally in ((n_diff, diff), (n_ratio, ratio)):
        if n is None:
            continue
        if n not in done:
            done[n] = statistics(trials(rng, draw(n), c.k), c.k, th)
        st = done[n]
        promised, est, se = paired_assurance(records, n)
        inside = interior(est, se, (mean_difference(c.prior[0]), mean_difference(c.prior[1])))
        if tally is diff:
            d = st["paired"]["pass_rate_difference"]
            tally.result(d["p_value"] is not None and d["p_value"] < 0.05
                         and ((d["mean"] or 0) > 0 if up else (d["mean"] or 0) < 0), promised, inside)
        else:
            tally.result(st["gates"]["min_improvement_ratio"]["decision"] == ("PASS" if up else "FAIL"),
                         promised, inside)


def gate_experiment(rng: np.random.Generator, c: Cell, by_evals: Tally, by_trials: Tally) -> None:
    # With truth "prior" the population mean mu is this experiment's own and the threshold is
    # fixed; per-eval rates ~ Beta(4 mu, 4 (1 - mu)) (Beta(2,2) at mu = 0.5) or all at mu.
    mu = float(rng.uniform(*c.prior)) if c.truth == "prior" else 0.5
    thr = GATE_THRESHOLD if c.truth == "prior" else 0.5 - c.size
    th: dict[str, float | None] = {"min_pass_rate": thr}

    def draw(n: int) -> np.ndarray:
        if c.population == "equal":
            return np.full(n, mu)
        return rng.beta(2, 2, n) if c.truth != "prior" else rng.beta(CONCENTRATION * mu, CONCENTRATION * (1 - mu), n)

    rates = draw(c.n_evals)
    records = trials(rng, {SKILL: rates}, c.k)
    g = statistics(records, c.k, th)["gates"]["min_pass_rate"]
    if g["decision"] != "INCONCLUSIVE":
        return  # decided already: no advice
    want = "PASS" if c.truth != "prior" or (g["value"] or 0) > thr else "FAIL"
    if (e := by_evals.add(g["evals_to_decide"], MAX_EVALS)) is not None:
        again = statistics(trials(rng, {SKILL: draw(e)}, c.k), c.k, th)
        promised, est, se = gate_evals_assurance(records, thr, e)
        by_evals.result(again["gates"]["min_pass_rate"]["decision"] == want, promised,
                        interior(est, se, c.prior))
    if (k := by_trials.add(g["trials_to_decide"], MAX_TRIALS)) is not None:
        again = statistics(trials(rng, {SKILL: rates}, k), k, th)
        promised, est, se = gate_trials_assurance(records, thr, k)
        by_trials.result(again["gates"]["min_pass_rate"]["decision"] == want, promised,
                         interior(est, se, c.prior))


def run_cell(args: tuple[Cell, int, int]) -> tuple[Cell, Tally, Tally, float]:
    """`experiments` pilots of one cell, on a generator of its own (so cells run in parallel
    and the output does not depend on their order)."""
    c, experiments, seed = args
    key = [seed, c.k, c.n_evals, int(round(c.size * 1000)), c.kind == "gate", c.population == "equal"]
    if c.truth == "prior":  # its own streams, leaving the fixed-truth cells' as they were
        key += [7, *(int(round(x * 1000)) + 1000 for x in c.prior)]
    rng = np.random.default_rng(key)
    a, b = Tally(), Tally()
    started = time.process_time()
    for _ in range(experiments):
        (paired_experiment if c.kind == "paired" else gate_experiment)(rng, c, a, b)
    return c, a, b, time.process_time() - started


# ---------------------------------------------------------------------------------------------
# Output


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


HEADER = ["advice", "setting", "advice given / pilots", "promise kept (target 80%)",
          "advised size: quartiles, max", f"capped (re-run at {MAX_EVALS} evals / {MAX_TRIALS} trials)"]
PRIOR_HEADER = [*HEADER[:4], "assurance promised (mean, at the size re-run)",
                "pilots 2 SE inside the prior: re-runs, kept vs promised", *HEADER[4:]]
ORDER = {"difference": 0, "ratio gate (1.0)": 1, "min_pass_rate, evals": 2, "min_pass_rate, trials": 3}


def setting_of(c: Cell) -> str:
    if c.truth == "prior":
        lo, hi = c.prior
        what = (f"effect ~ U({lo:g}, {hi:g})" if c.kind == "paired"
                else f"mean ~ U({lo:g}, {hi:g}), threshold {GATE_THRESHOLD:g}")
        return f"K={c.k}, {c.n_evals} evals, {what}" + (", every eval at the mean" if c.population == "equal" else "")
    if c.kind == "paired":
        return f"K={c.k}, {c.n_evals} evals, effect +{c.size:g}"
    return f"K={c.k}, {c.n_evals} evals, gap {c.size:g}" + (", every eval at 0.5" if c.population == "equal" else "")


def labelled(results: list[tuple[Cell, Tally, Tally, float]]) -> list[tuple[str, Cell, Tally]]:
    """(advice, cell, tally) for both advice kinds of every cell, in the table's order."""
    out = []
    for c, a, b, _ in results:
        names = ("difference", "ratio gate (1.0)") if c.kind == "paired" else (
            "min_pass_rate, evals", "min_pass_rate, trials")
        out += [(names[0], c, a), (names[1], c, b)]
    return sorted(out, key=lambda r: ORDER[r[0]])


def rows(results: list[tuple[Cell, Tally, Tally, float]]) -> list[list[str]]:
    prior = any(c.truth == "prior" for c, *_ in results)
    out = [[name, setting_of(c), *t.cells(prior)] for name, c, t in labelled(results)]
    if prior:  # every cell of an advice kind together: the promise averaged over all of them
        for name in ORDER:
            tallies = [t for n, _, t in labelled(results) if n == name]
            if tallies:
                pooled = Tally(sum(t.pilots for t in tallies), [x for t in tallies for x in t.sizes],
                               sum(t.capped for t in tallies), sum(t.hits for t in tallies),
                               [x for t in tallies for x in t.promised],
                               [x for t in tallies for x in t.outcomes], [x for t in tallies for x in t.inside])
                out.append([name, "all these cells", *pooled.cells(True)])
    return out


def tables(results: list[tuple[Cell, Tally, Tally, float]]) -> str:
    """The fixed-truth table as before, and the prior-averaged cells' table (with the assurance
    promised beside the success rate) after it."""
    fixed = [r for r in results if r[0].truth != "prior"]
    prior = [r for r in results if r[0].truth == "prior"]
    parts = [table(HEADER, rows(fixed))] if fixed else []
    parts += [table(PRIOR_HEADER, rows(prior))] if prior else []
    return "\n\n".join(parts)


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
            cell = {**d["cell"], "prior": tuple(d["cell"].get("prior", (0.0, 0.0)))}
            out.append((Cell(**cell), Tally(**d["a"]), Tally(**d["b"]), float(d["cpu"])))
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
    ap.add_argument("--truth", choices=("fixed", "prior"), default="fixed",
                    help="fixed: the effects and gaps above, the same truth for every pilot; prior: each "
                         "experiment draws its truth from --effect-prior / --mean-prior (the Bayesian check)")
    ap.add_argument("--effect-prior", type=float, nargs=2, default=EFFECT_PRIOR, metavar=("LO", "HI"),
                    help="with --truth prior: the paired cells' effect ~ Uniform(LO, HI)")
    ap.add_argument("--mean-prior", type=float, nargs=2, default=MEAN_PRIOR, metavar=("LO", "HI"),
                    help=f"with --truth prior: the gate cells' population mean ~ Uniform(LO, HI), "
                         f"threshold {GATE_THRESHOLD:g}")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, default=None, help="append each finished cell to this JSON-lines file")
    ap.add_argument("--table", type=Path, nargs="*", default=None,
                    help="print the table of saved cells (files from --save) instead of running")
    args = ap.parse_args(argv)
    if args.table:
        results = load(args.table)
        print(tables(results))
        print(f"\n{sum(r[3] for r in results):.0f} CPU-s in all.")
        return
    ks = args.k or ([3] if args.quick else [1, 3, 10])
    evals = args.evals or ([10] if args.quick else [5, 10, 20])
    n = args.experiments or (40 if args.quick else 300)
    kinds = args.kind or ["paired", "gate", "gate-equal"]
    if args.truth == "prior":
        cells = [Cell("gate" if kind == "gate-equal" else kind, k, e, 0.0,
                      "equal" if kind == "gate-equal" else "beta22", "prior",
                      tuple(args.effect_prior if kind == "paired" else args.mean_prior))
                 for kind in kinds for k in ks for e in evals]
    else:
        cells = [Cell("gate" if kind == "gate-equal" else kind, k, e, size,
                      "equal" if kind == "gate-equal" else "beta22")
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
    print(tables(results))
    print(f"\n{n} pilots per cell, seed {args.seed}; {time.perf_counter() - started:.0f} s wall, "
          f"{sum(r[3] for r in results):.0f} CPU-s over {args.jobs} process(es), load average "
          f"{os.getloadavg()[0]:.1f}.")


if __name__ == "__main__":
    main()
