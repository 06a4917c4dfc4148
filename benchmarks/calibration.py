"""Calibration of skillassay's statistics: how often each gate, call and interval is wrong when
the truth is known, simulated through the library itself (group_records, build_statistics,
compare_iterations: the code `run`, `aggregate`, `compare` and `gate` use).

A/A experiments draw both arms (and the previous iteration) from the same true per-eval pass
rates, with every threshold set at the truth: then a PASS or a FAIL of a one-sided gate is a
false call, and each should happen at most 2.5% of the time (a 95% interval has 2.5% in each
tail). Known-effect experiments check the false discovery rate of regression calls and whether
advice keeps its promise: each advice is planned for the effect that is there (the true mean
difference EFFECT gives; the gate's gap), and re-running at the advised number of evals must
detect the effect or decide the gate about as often as the note states (its planned power).
benchmarks/advice_power.py measures the same promise cell by cell at 300 pilots, with the exact
test's power beside the re-runs'; the power table in docs/statistics.md is its output.

    python benchmarks/calibration.py --quick     # one setting, about 25 s
    python benchmarks/calibration.py --no-power --jobs 3 --cache /tmp/calib   # the README table
    python benchmarks/calibration.py --experiments 100 --k 3 --evals 10 20

Every rate is printed with its 95% Wilson interval (the simulation's own uncertainty).
Deterministic for a given --seed: each experiment draws from its own seed (seed, setting, kind,
index), so the tables do not depend on --jobs, and a run stopped midway and restarted with the
same --cache (or with fewer experiments) reuses what finished. A --cache holds results of the
code that made them: start a fresh one when the code changes.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import (
    REGRESSION_GATE_LEVEL,
    holm_fail_levels,
    regression_p,
    regression_result,
    thresholds_alpha,
)
from skillassay.analyze.iteration_change import compare_iterations
from skillassay.analyze.statistics import build_statistics
from skillassay.stats.binomial import wilson_interval
from skillassay.stats.means import clustered_mean
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"
CONFIGS = (SKILL, BASE)
TOKEN_MEAN = 1000.0  # per-eval mean tokens are TOKEN_MEAN * lognormal(0, 0.5), trials scatter 30%
TOKEN_POP_MEAN = TOKEN_MEAN * math.exp(0.5**2 / 2)
MAX_RERUN_EVALS = 300  # advice beyond this is re-run at it
POPULATIONS = ("beta22", "mix")
POP_LABEL = {"beta22": "Beta(2,2)", "mix": "Beta(2,2) + exact 0s/1s", "fixed": "fixed"}


# ---------------------------------------------------------------------------------------------
# Truth and data


def draw_rates(rng: np.random.Generator, population: str, n: int) -> np.ndarray:
    """True per-eval pass rates. "mix": a quarter of evals always fail, a quarter always pass
    (deterministic evals are common in practice, and they make ties and zero-width spreads).
    Both populations have mean 0.5."""
    rates = rng.beta(2, 2, n)
    if population == "mix":
        kind = rng.random(n)
        rates = np.where(kind < 0.25, 0.0, np.where(kind < 0.5, 1.0, rates))
    return rates


def trials(rng: np.random.Generator, eval_rates: dict[str, np.ndarray], k: int | np.ndarray,
           token_means: np.ndarray) -> list[TrialRecord]:
    """K Bernoulli trials per eval and configuration, with lognormal tokens around the eval's
    mean: the records a real run would have graded."""
    out = []
    ks = np.broadcast_to(np.asarray(k), token_means.shape)
    for config, rates in eval_rates.items():
        for e, (p, n, mu) in enumerate(zip(rates, ks, token_means, strict=True)):
            passed = rng.random(int(n)) < p
            tokens = mu * rng.lognormal(-0.3**2 / 2, 0.3, int(n))
            out += [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=config, run_number=i + 1,
                                status="ok", passed=bool(passed[i]), passed_count=int(passed[i]),
                                total_count=1, tokens=int(tokens[i]), duration_seconds=1.0)
                    for i in range(int(n))]
    return out


def statistics(records: list[TrialRecord], k: int, thresholds: Mapping[str, float], seed: int,
               planned: float | None = None) -> dict:
    """build_statistics; `planned`: the advice's min_detectable_effect (None: the default)."""
    extra = {} if planned is None else {"min_detectable_effect": planned}
    return build_statistics(group_records(records, CONFIGS), SKILL, BASE, k, dict(thresholds), seed=seed,
                            **extra)


# ---------------------------------------------------------------------------------------------
# Tallies


def wilson(hits: int, n: int) -> tuple[float, float]:
    return wilson_interval(hits, n) or (math.nan, math.nan)


@dataclass
class Rate:
    hits: int = 0
    n: int = 0

    def add(self, hit: bool | None) -> None:
        if hit is not None:
            self.hits += bool(hit)
            self.n += 1

    def text(self) -> str:
        if not self.n:
            return "n/a"
        lo, hi = wilson(self.hits, self.n)
        return f"{self.hits / self.n * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"


@dataclass
class Mean:
    """A mean of per-experiment proportions (FDR), with a t interval over experiments."""

    values: list[float] = field(default_factory=list)

    def text(self) -> str:
        if not self.values:
            return "n/a"
        est = clustered_mean(self.values)
        lo, hi = est.interval or (est.mean, est.mean)
        return f"{est.mean * 100:.1f}% [{max(0.0, lo) * 100:.1f}, {min(1.0, hi) * 100:.1f}]"


@dataclass(frozen=True)
class Setting:
    population: str
    k: int
    n_evals: int

    def label(self) -> str:
        return f"{POP_LABEL[self.population]}, K={self.k}, {self.n_evals} evals"


# ---------------------------------------------------------------------------------------------
# A/A: false calls and coverage


GATES = ("min_pass_rate", "min_improvement_ratio", "max_avg_tokens")


@dataclass
class AATally:
    false_pass: dict[str, Rate] = field(default_factory=lambda: {g: Rate() for g in GATES})
    false_fail: dict[str, Rate] = field(default_factory=lambda: {g: Rate() for g in GATES})
    gate_false_fail: Rate = field(default_factory=Rate)
    fwer: Rate = field(default_factory=Rate)  # regression calls that fail the gate
    fwer_at_q: Rate = field(default_factory=Rate)  # evals labelled regressed (FDR q = 0.10, the report)
    cover: dict[str, Rate] = field(default_factory=lambda: {
        c: Rate() for c in ("pass rate, evals like these", "pass rate, these evals", "difference", "ratio",
                            "tokens, evals like these", "tokens, these evals", "per-eval Wilson")})


def covers(interval: list | None, truth: float) -> bool | None:
    if interval is None or None in interval:
        return None
    return interval[0] - 1e-9 <= truth <= interval[1] + 1e-9


def regression_fails_gate(comparison: dict) -> bool:
    """Whether the gate's regression check FAILS on this comparison: the gate's own rule
    (gate.regression_result: BH-adjusted p <= gate.REGRESSION_GATE_LEVEL), not the comparison's labels at FDR
    q = 0.10, which only list calls in the report and leave the check INCONCLUSIVE."""
    return regression_result(comparison, point_estimate=False).status == "FAIL"


def gate_fails(gates: dict, comparison: dict) -> bool:
    """Whether the gate as a whole FAILS: its rule (gate.hold_fails_to_family), Holm's step-down
    over the thresholds with a figure at their share of 5%, and the regression check at its own
    level, not any one check at 2.5%."""
    ps = {k: (g.get("fail_p_value") or 0.0) if g.get("decision") == "FAIL" else 1.0
          for k, g in gates.items() if g.get("value") is not None or g.get("unbounded")}
    return bool(holm_fail_levels(ps, thresholds_alpha(True))) or regression_p(comparison) <= REGRESSION_GATE_LEVEL


def aa_experiment(rng: np.random.Generator, s: Setting, tally: AATally, seed: int) -> None:
    rates = draw_rates(rng, s.population, s.n_evals)
    mu = TOKEN_MEAN * rng.lognormal(0, 0.5, s.n_evals)
    current = trials(rng, {SKILL: rates, BASE: rates}, s.k, mu)
    previous = trials(rng, {SKILL: rates}, s.k, mu)
    thresholds = {"min_pass_rate": 0.5, "min_improvement_ratio": 1.0, "max_avg_tokens": TOKEN_POP_MEAN}
    st = statistics(current, s.k, thresholds, seed)
    gates = st["gates"]
    for g in GATES:
        decision = gates[g]["decision"] if g in gates else None
        tally.false_pass[g].add(None if decision is None else decision == "PASS")
        tally.false_fail[g].add(None if decision is None else decision == "FAIL")
    comp = compare_iterations(current, previous, SKILL, seed=seed)
    fails = regression_fails_gate(comp)
    tally.fwer.add(fails)
    tally.fwer_at_q.add(bool(comp["regressed"]))
    tally.gate_false_fail.add(gate_fails(gates, comp))
    conf = st["configurations"][SKILL]
    paired = st["paired"]
    # Each reading against its own truth: the population's mean, or the mean of the evals drawn.
    tally.cover["pass rate, evals like these"].add(covers(conf["pass_rate_intervals"]["population"], 0.5))
    tally.cover["pass rate, these evals"].add(covers(conf["pass_rate_intervals"]["these_evals"], float(rates.mean())))
    tally.cover["difference"].add(covers(paired["pass_rate_difference"]["interval"], 0.0))
    tally.cover["ratio"].add(covers(paired["improvement_ratio"]["interval"], 1.0))
    tally.cover["tokens, evals like these"].add(covers(conf["avg_tokens"]["intervals"]["population"], TOKEN_POP_MEAN))
    tally.cover["tokens, these evals"].add(covers(conf["avg_tokens"]["intervals"]["these_evals"], float(mu.mean())))
    wil = tally.cover["per-eval Wilson"]
    for pe, p in zip(st["per_eval"], rates, strict=True):
        wil.add(covers(pe["configurations"][SKILL]["wilson"], float(p)))


# ---------------------------------------------------------------------------------------------
# Known effects: FDR of regression calls, power at the advised sizes


EFFECT = 0.25  # skill = baseline + 0.25 (clipped) for the power of the evals advice
GATE_GAP = 0.1  # min_pass_rate 0.4 against a population at 0.5 (0.15: 0.5 against a fixed 0.65)
DROP = 0.5  # a third of evals regress by this much (clipped at 0) for the FDR


def true_difference(population: str) -> float:
    """The true mean skill - baseline difference EFFECT gives in a population (the clipping at 1
    makes it less than EFFECT): each advice is planned for it, as a user who set
    min_detectable_effect to the effect that is there would, so that the power promised is the
    one to reach. On Beta(2,2) it is advice_power.mean_difference's; in the mix a quarter of the
    evals sit at 0, which gain EFFECT, and a quarter at 1, which gain nothing."""
    from advice_power import mean_difference  # noqa: PLC0415 (a sibling script; only the power part needs it)

    beta = mean_difference(EFFECT)
    return beta if population != "mix" else 0.5 * beta + 0.25 * EFFECT


@dataclass
class EffectTally:
    fdr: Mean = field(default_factory=Mean)
    regressions_found: Rate = field(default_factory=Rate)
    evals_power: Rate = field(default_factory=Rate)
    evals_promised: list[float] = field(default_factory=list)  # the power each advice stated
    evals_advised: Rate = field(default_factory=Rate)
    evals_sizes: list[int] = field(default_factory=list)
    gate_evals_power: Rate = field(default_factory=Rate)
    gate_promised: list[float] = field(default_factory=list)
    gate_advised: Rate = field(default_factory=Rate)


def detected(st: dict) -> bool:
    d = st["paired"]["pass_rate_difference"]
    return d["p_value"] is not None and d["p_value"] < 0.05 and (d["mean"] or 0) > 0


def effect_experiment(rng: np.random.Generator, s: Setting, tally: EffectTally, seed: int,
                      fixed: tuple[float, float] | None = None, power: bool = True) -> None:
    """fixed=(skill, baseline): every eval has these true rates (the issue's 0.7 vs 0.3);
    otherwise baseline rates from the population and skill = baseline + EFFECT. power=False:
    the regression calls only, not the re-runs at the advised sizes (most of the cost)."""
    if not power:
        if fixed is None:
            regression_experiment(rng, s, tally, seed)
        return

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        if fixed is not None:
            return np.full(n, fixed[0]), np.full(n, fixed[1])
        base = draw_rates(rng, s.population, n)
        return np.clip(base + EFFECT, 0, 1), base

    skill, base = draw(s.n_evals)
    mu = TOKEN_MEAN * np.ones(s.n_evals)
    planned = 0.4 if fixed is not None else true_difference(s.population)
    st = statistics(trials(rng, {SKILL: skill, BASE: base}, s.k, mu), s.k, {}, seed, planned)
    n = st["power"]["evals_needed"]
    tally.evals_advised.add(n is not None)
    if n is not None:
        tally.evals_sizes.append(n)
        tally.evals_promised.append(st["power"]["planned_power"])
        # Beyond the cap, re-run at the cap: power only grows with evals, so this is a lower
        # bound on the power at the advised size (and keeps the simulation affordable).
        n = min(n, MAX_RERUN_EVALS)
        skill2, base2 = draw(n)
        again = statistics(trials(rng, {SKILL: skill2, BASE: base2}, s.k, np.ones(n) * TOKEN_MEAN),
                           s.k, {}, seed, planned)
        tally.evals_power.add(detected(again))

    if fixed is None:
        regression_experiment(rng, s, tally, seed)
    gate_experiment(rng, s, tally, seed, draw_rates(rng, s.population, s.n_evals) if fixed is None
                    else None)


def regression_experiment(rng: np.random.Generator, s: Setting, tally: EffectTally, seed: int) -> None:
    """A third of the evals drop by DROP between iterations: the FDR of the regression calls
    and how many true regressions are called."""
    mu = TOKEN_MEAN * np.ones(s.n_evals)
    before = draw_rates(rng, s.population, s.n_evals)
    hit = rng.random(s.n_evals) < 1 / 3
    after = np.where(hit, np.clip(before - DROP, 0, 1), before)
    truly = after < before
    prev = trials(rng, {SKILL: before}, s.k, mu)
    cur = trials(rng, {SKILL: after}, s.k, mu)
    comp = compare_iterations(cur, prev, SKILL, seed=seed)
    calls = set(comp["regressed"])
    false = sum(1 for e in calls if not truly[e])
    tally.fdr.values.append(false / max(1, len(calls)))
    for e in np.flatnonzero(truly):
        tally.regressions_found.add(int(e) in calls)


def gate_experiment(rng: np.random.Generator, s: Setting, tally: EffectTally, seed: int,
                    rates: np.ndarray | None) -> None:
    """min_pass_rate 0.4 against a true 0.5 (population) or 0.5 against a fixed 0.65 (the issue's
    case), planned for that gap: when the gate is undecided, re-run at the advised evals (fresh
    evals), which should then PASS about as often as the note states. (min_pass_rate gives no
    trials advice, only what trials would do if the evals share one rate: benchmarks/
    advice_power.py measures that where they do.)"""
    fixed = rates is None
    threshold = 0.5 if fixed else 0.5 - GATE_GAP
    true = np.full(s.n_evals, 0.65) if fixed else rates
    assert true is not None
    ones = np.ones(s.n_evals) * TOKEN_MEAN
    th = {"min_pass_rate": threshold}
    planned = 0.15 if fixed else GATE_GAP
    g = statistics(trials(rng, {SKILL: true, BASE: true}, s.k, ones), s.k, th, seed,
                   planned)["gates"]["min_pass_rate"]
    if g["decision"] != "INCONCLUSIVE":
        return
    tally.gate_advised.add(bool(g["evals_to_decide"]))
    # Advice beyond the cap is re-run at the cap: a lower bound on its power, as above.
    if e2 := g["evals_to_decide"]:
        tally.gate_promised.append(g["planned_power"])
        e2 = min(e2, MAX_RERUN_EVALS)
        fresh = np.full(e2, 0.65) if fixed else draw_rates(rng, s.population, e2)
        again = statistics(trials(rng, {SKILL: fresh, BASE: fresh}, s.k, np.ones(e2) * TOKEN_MEAN),
                           s.k, th, seed, planned)
        tally.gate_evals_power.add(again["gates"]["min_pass_rate"]["decision"] == "PASS")


# ---------------------------------------------------------------------------------------------
# Running and printing


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


SETTING_CODES = {"beta22": 1, "mix": 2}
AA, EFFECT_KIND, FIXED_KIND = 0, 1, 2
CHUNK = 10  # experiments per work unit: small enough to spread over --jobs, big enough to amortise


def experiment_rng(seed: int, s: Setting, kind: int, i: int) -> np.random.Generator:
    """Experiment i's own stream, from (seed, setting, kind, i) alone: what an experiment draws
    does not depend on the order in which experiments run, nor on how many processes run them,
    so `--jobs 1` and `--jobs 8` print the same table."""
    return np.random.default_rng([seed, SETTING_CODES[s.population], s.k, s.n_evals, kind, i])


Unit = tuple[Setting, int, int, int]  # setting, kind, first experiment, last + 1


def run_unit(unit: Unit, seed: int, power: bool = True) -> tuple[Unit, AATally | EffectTally]:
    """Experiments [start, stop) of one kind in one setting, tallied: a unit of work for a worker."""
    s, kind, start, stop = unit
    tally: AATally | EffectTally = AATally() if kind == AA else EffectTally()
    for i in range(start, stop):
        rng = experiment_rng(seed, s, kind, i)
        if isinstance(tally, AATally):
            aa_experiment(rng, s, tally, seed + i)
        else:
            effect_experiment(rng, s, tally, seed + i, fixed=(0.7, 0.3) if kind == FIXED_KIND else None,
                              power=power)
    return unit, tally


def unit_path(cache: Path, unit: Unit, seed: int, power: bool) -> Path:
    """A unit's cache file. A/A experiments do not depend on --no-power (only the known-effect
    ones re-run advice), so runs with and without it share them."""
    s, kind, start, stop = unit
    suffix = "" if power or kind == AA else "r"
    return cache / f"{seed}-{s.population}-k{s.k}-e{s.n_evals}-{kind}{suffix}-{start}-{stop}.pkl"


def _timed(args: tuple[Unit, int, bool, Path | None]) -> tuple[Unit, AATally | EffectTally, float]:
    """Run one unit, or read it back from --cache: a long run that is stopped keeps its finished
    units, and a run with more experiments reuses the first ones (each has its own seed)."""
    unit, seed, power, cache = args
    path = unit_path(cache, unit, seed, power) if cache else None
    if path is not None and path.exists():
        with path.open("rb") as f:
            return unit, pickle.load(f), 0.0
    started = time.process_time()
    _, tally = run_unit(unit, seed, power)
    if path is not None:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            pickle.dump(tally, f)
        tmp.replace(path)  # atomic: a unit file is whole or absent
    return unit, tally, time.process_time() - started


def merge(into: Any, other: Any) -> None:
    """Add one tally's counts to another's (every field is a count, or a list of values whose
    summaries ignore their order): merged tallies do not depend on how the work was split."""
    for f in fields(into):
        a, b = getattr(into, f.name), getattr(other, f.name)
        if isinstance(a, Rate):
            merge_rate(a, b)
        elif isinstance(a, Mean):
            a.values.extend(b.values)
        elif isinstance(a, dict):
            for key, rate in b.items():
                merge_rate(a[key], rate)
        else:
            a.extend(b)


def merge_rate(a: Rate, b: Rate) -> None:
    a.hits += b.hits
    a.n += b.n


Tallies = tuple[dict[Setting, "AATally"], dict[Setting, "EffectTally"], "EffectTally", Setting]


def run(settings: list[Setting], n_aa: int, n_effect: int, seed: int,
        progress: Callable[[str], None], jobs: int = 1, power: bool = True,
        cache: Path | None = None) -> str:
    return tables(*tally_all(settings, n_aa, n_effect, seed, progress, jobs, power, cache), power)


def tally_all(settings: list[Setting], n_aa: int, n_effect: int, seed: int,
              progress: Callable[[str], None], jobs: int = 1, power: bool = True,
              cache: Path | None = None) -> Tallies:
    """Every setting's A/A and known-effect tallies (from --cache where a unit is there)."""
    aa: dict[Setting, AATally] = {s: AATally() for s in settings}
    eff: dict[Setting, EffectTally] = {s: EffectTally() for s in settings}
    fixed = EffectTally()
    fixed_setting = next((s for s in settings if s.k == 3 and s.n_evals == 10), settings[0])
    units: list[Unit] = []
    for s in settings:
        for kind, n in ((AA, n_aa), (EFFECT_KIND, n_effect),
                        (FIXED_KIND, n_effect if s == fixed_setting and power else 0)):
            units += [(s, kind, a, min(n, a + CHUNK)) for a in range(0, n, CHUNK)]
    # Experiments 0, 1, ... of every setting before the later ones of any (so a run stopped
    # early has, in --cache, the first experiments of every setting), the costly ones first.
    units.sort(key=lambda u: (u[2] / (n_aa if u[1] == AA else n_effect), -u[0].k * u[0].n_evals))
    left = {s: sum(1 for u in units if u[0] == s) for s in settings}
    cpu = dict.fromkeys(settings, 0.0)

    def collect(done: Iterable[tuple[Unit, AATally | EffectTally, float]]) -> None:
        for (s, kind, _, _), tally, seconds in done:
            merge(aa[s] if kind == AA else eff[s] if kind == EFFECT_KIND else fixed, tally)
            cpu[s] += seconds
            left[s] -= 1
            if not left[s]:
                progress(f"{s.label()}: {cpu[s]:.0f} CPU-s")

    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    work = [(u, seed, power, cache) for u in units]
    if jobs <= 1:
        collect(map(_timed, work))
    else:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            collect(pool.imap_unordered(_timed, work))
    progress(f"total {sum(cpu.values()):.0f} CPU-s")
    return aa, eff, fixed, fixed_setting


def tables(aa: dict[Setting, AATally], eff: dict[Setting, EffectTally], fixed: EffectTally,
           fixed_setting: Setting, power: bool) -> str:
    out = ["### A/A: false calls (thresholds at the truth; target <= 2.5% per one-sided call, "
           "<= 5% for the gate as a whole)", ""]
    out.append(table(
        ["setting", "min_pass_rate false PASS", "false FAIL", "min_improvement_ratio false PASS",
         "false FAIL", "max_avg_tokens false PASS", "false FAIL", "gate false FAIL",
         "FWER of regression calls failing the gate", "FWER of evals labelled regressed (q = 0.10)"],
        ([s.label(), *(r for g in GATES for r in (t.false_pass[g].text(), t.false_fail[g].text())),
          t.gate_false_fail.text(), t.fwer.text(), t.fwer_at_q.text()] for s, t in aa.items())))
    out += ["", "### A/A: interval coverage (target >= 95%)", ""]
    names = list(next(iter(aa.values())).cover)
    out.append(table(["setting", *names], ([s.label(), *(t.cover[c].text() for c in names)]
                                           for s, t in aa.items())))
    if not power:
        out += ["", f"### Known effects: regression calls (a third of evals drop by {DROP})", ""]
        out.append(table(["setting", "FDR of regression calls (q = 0.10)", "regressions called"],
                         ([s.label(), t.fdr.text(), t.regressions_found.text()] for s, t in eff.items())))
        return "\n".join(out)
    out += ["", f"### Known effects: regression calls (a third of evals drop by {DROP}) and power at "
            "the advised sizes (target: the power each note states, within 5 points)", ""]

    def sizes(t: EffectTally) -> str:
        return f"{int(np.median(t.evals_sizes))}" if t.evals_sizes else "n/a"

    def promised(values: list[float]) -> str:
        return f"{np.mean(values) * 100:.1f}%" if values else "n/a"

    rows = [[s.label(), t.fdr.text(), t.regressions_found.text(), t.evals_advised.text(), sizes(t),
             promised(t.evals_promised), t.evals_power.text(), t.gate_advised.text(), promised(t.gate_promised),
             t.gate_evals_power.text()]
            for s, t in eff.items()]
    if fixed.evals_power.n or fixed.gate_advised.n:
        rows.append([f"fixed 0.7 vs 0.3 / 0.65 vs 0.5, K={fixed_setting.k}, {fixed_setting.n_evals} evals",
                     "n/a", "n/a",
                     fixed.evals_advised.text(), sizes(fixed), promised(fixed.evals_promised),
                     fixed.evals_power.text(), fixed.gate_advised.text(), promised(fixed.gate_promised),
                     fixed.gate_evals_power.text()])
    out.append(table(["setting", "FDR of regression calls (q = 0.10)", "regressions called",
                      f"evals advice given (+{EFFECT}, planned for it)", "median advised evals",
                      "power promised (mean)", "power at advised evals", f"gate advice given (gap {GATE_GAP})",
                      "gate power promised (mean)", "gate decided at advised evals"],
                     rows))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one small setting (what the test runs)")
    ap.add_argument("--experiments", type=int, default=None, help="A/A experiments per setting (default 300)")
    ap.add_argument("--k", type=int, nargs="*", default=None, help="trials per eval (default 1 3 10)")
    ap.add_argument("--evals", type=int, nargs="*", default=None, help="evals (default 5 10 20 50)")
    ap.add_argument("--population", nargs="*", choices=POPULATIONS, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes (results do not depend on it: each experiment has its own seed)")
    ap.add_argument("--no-power", action="store_true",
                    help="known effects: the regression calls only, not the re-runs at the advised sizes "
                         "(benchmarks/advice_power.py measures those)")
    ap.add_argument("--save", type=Path, default=None,
                    help="also write the tallies to this results file (benchmarks/results/calibration.json) "
                         "and docs/calibration.md from it (benchmarks/calibration_page.py)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="keep each finished unit of experiments here and reuse it (resumable)")
    args = ap.parse_args(argv)
    quick = args.quick
    ks = args.k or ([3] if quick else [1, 3, 10])
    evals = args.evals or ([10] if quick else [5, 10, 20, 50])
    pops = args.population or (["beta22"] if quick else list(POPULATIONS))
    n_aa = args.experiments or (40 if quick else 300)
    n_effect = max(10, n_aa // 3)
    settings = [Setting(p, k, e) for p in pops for k in ks for e in evals]
    started = time.perf_counter()
    tallies = tally_all(settings, n_aa, n_effect, args.seed, lambda m: print(m, file=sys.stderr, flush=True),
                        jobs=args.jobs, power=not args.no_power, cache=args.cache)
    print(tables(*tallies, not args.no_power))
    print(f"\n{n_aa} A/A and {n_effect} known-effect experiments per setting, seed {args.seed}; "
          f"{time.perf_counter() - started:.0f} s with {args.jobs} job(s).")
    if args.save is not None:
        import calibration_page  # noqa: PLC0415 (a sibling script: only --save needs it)

        words = list(argv if argv is not None else sys.argv[1:])
        for flag in ("--cache", "--save"):  # where things were kept on this machine is no part of the result
            if flag in words:
                del words[words.index(flag):words.index(flag) + 2]
        command = " ".join(["python benchmarks/calibration.py", *words])
        calibration_page.save_calibration(args.save, tallies[0], tallies[1], {
            "command": command, "seed": args.seed,
            "experiments_aa": n_aa, "experiments_effect": n_effect, "power": not args.no_power})


if __name__ == "__main__":
    main()
