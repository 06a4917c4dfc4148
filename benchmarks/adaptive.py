"""Adaptive against fixed trials, simulated through the library (issue 19).

Each experiment draws a suite (10-30 evals; true baseline pass rates from Beta(2,2), a quarter
of them exactly 0 and a quarter exactly 1), a skill effect (none, small +0.1, medium +0.25 or
large +0.5 on every eval, clipped to [0, 1]) and max_trials_per_eval Bernoulli outcomes per eval
and arm. The fixed design uses all of them; the adaptive design runs the same outcomes in rounds
through run/adaptive.run_rounds (the engine's loop) and stops where its rule says (the
suite-level group-sequential stop of analyze/sequential). Both are then
gated by the same code `run` uses (analyze/benchmark.build_benchmark, analyze/gate.evaluate),
with thresholds at the truth of an A/A experiment (pass rate 0.5, the population mean;
improvement ratio 1.0; tokens at their population mean), so under "none" any PASS or FAIL is
a false call.

    python benchmarks/adaptive.py                      # 40 experiments per effect, 1-4 min
    python benchmarks/adaptive.py --experiments 400    # the bigger run (~40 min), to resolve 2.5% rates
    python benchmarks/adaptive.py --agree-on pass      # also the per-eval stop (off in run): both arms 3/3
    python benchmarks/adaptive.py --replay WS/iteration-1 --config CONFIG
        # the adaptive rule replayed on a fixed run's graded trials: same outcomes, only the design differs

Rates are printed with 95% Wilson intervals, trials used with a t interval over experiments;
"paired" counts the draws where only the fixed design (lost) or only the adaptive one (gained)
made the call, with a t interval of the paired difference.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from skillassay.analyze import sequential as seq
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import evaluate
from skillassay.models import Adaptive, Eval, Thresholds
from skillassay.run.adaptive import questions_for, run_rounds
from skillassay.run.plan import Trial
from skillassay.stats.binomial import wilson_interval
from skillassay.stats.means import clustered_mean
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"
EFFECTS = {"none": 0.0, "small": 0.1, "medium": 0.25, "large": 0.5}
TOKEN_MEAN = 1000.0
TOKEN_POP_MEAN = TOKEN_MEAN * math.exp(0.5**2 / 2)
THRESHOLDS = Thresholds(min_pass_rate=0.5, min_improvement_ratio=1.0, max_avg_tokens=TOKEN_POP_MEAN)
GATES = ("min_pass_rate", "min_improvement_ratio", "max_avg_tokens")


def draw_rates(rng: np.random.Generator, n: int) -> np.ndarray:
    rates = rng.beta(2, 2, n)
    kind = rng.random(n)
    return np.where(kind < 0.25, 0.0, np.where(kind < 0.5, 1.0, rates))


@dataclass
class Suite:
    """One experiment's truth and every outcome either design may use."""

    evals: list[Eval]
    records: dict[tuple[int, str, int], TrialRecord]

    @classmethod
    def draw(cls, rng: np.random.Generator, n_evals: int, effect: float, max_trials: int) -> Suite:
        base = draw_rates(rng, n_evals)
        skill = np.clip(base + effect, 0.0, 1.0)
        token_means = TOKEN_MEAN * rng.lognormal(0, 0.5, n_evals)
        evals = [Eval(id=e, prompt=f"task {e}") for e in range(n_evals)]
        recs: dict[tuple[int, str, int], TrialRecord] = {}
        for cfg, rates in ((SKILL, skill), (BASE, base)):
            for e in range(n_evals):
                passed = rng.random(max_trials) < rates[e]
                tokens = token_means[e] * rng.lognormal(-0.3**2 / 2, 0.3, max_trials)
                for k in range(max_trials):
                    recs[(e, cfg, k + 1)] = TrialRecord(
                        eval_id=e, eval_name=f"e{e}", configuration=cfg, run_number=k + 1, status="ok",
                        passed=bool(passed[k]), passed_count=int(passed[k]), total_count=1,
                        tokens=int(tokens[k]), duration_seconds=1.0)
        return cls(evals, recs)

    def plan(self, max_trials: int) -> list[Trial]:
        return [Trial(ev, f"eval-{ev.id}", cfg, k, 0, Path("."))
                for ev in self.evals for cfg in (SKILL, BASE) for k in range(1, max_trials + 1)]


def gate_decisions(records: list[TrialRecord], max_trials: int) -> dict[str, str]:
    bench = build_benchmark(records, skill_name="sim", skill_path=None, iteration=1, timestamp="t",
                            trials_requested=max_trials, thresholds=THRESHOLDS)
    gate = evaluate(bench, THRESHOLDS)
    return {t.key: t.status for t in gate.thresholds}


def fixed(suite: Suite, max_trials: int) -> tuple[int, dict[str, str]]:
    records = list(suite.records.values())
    return len(records), gate_decisions(records, max_trials)


def adaptive(suite: Suite, settings: Adaptive) -> tuple[int, dict[str, str]]:
    def execute(batch: list[Trial]) -> list[TrialRecord]:
        return [suite.records[(t.eval.id, t.configuration, t.run_number)] for t in batch]

    result = run_rounds(suite.plan(settings.max_trials_per_eval), [], settings, questions_for(THRESHOLDS),
                        (SKILL, BASE), execute)
    return len(result.executed), gate_decisions(result.executed, settings.max_trials_per_eval)


# ---------------------------------------------------------------------------------------------
# Tallies


@dataclass
class Rate:
    hits: int = 0
    n: int = 0

    def add(self, hit: bool) -> None:
        self.hits += hit
        self.n += 1

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else math.nan

    def text(self) -> str:
        if not self.n:
            return "n/a"
        lo, hi = wilson_interval(self.hits, self.n) or (math.nan, math.nan)
        return f"{self.value * 100:5.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"


@dataclass
class Tally:
    """Per design: trials used per experiment, and per effect and gate how often it said PASS / FAIL."""

    trials: list[float] = field(default_factory=list)
    calls: dict[tuple[str, str, str], Rate] = field(default_factory=dict)
    decisions: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # per experiment, for pairing

    def add(self, effect: str, used: int, most: int, decisions: dict[str, str]) -> None:
        self.trials.append(used / most)
        self.decisions.append((effect, decisions))
        for gate in GATES:
            for call in ("PASS", "FAIL"):
                self.calls.setdefault((effect, gate, call), Rate()).add(decisions.get(gate) == call)

    def rate(self, effect: str, gate: str, call: str) -> Rate:
        return self.calls.get((effect, gate, call), Rate())

    def trials_text(self) -> str:
        est = clustered_mean(self.trials)
        lo, hi = est.interval or (est.mean, est.mean)
        return f"{est.mean * 100:5.1f}% [{lo * 100:.1f}, {hi * 100:.1f}] of the fixed design's trials"


def simulate(experiments: int, seed: int, settings: Adaptive, effects: list[str],
             min_evals: int = 10, max_evals: int = 30) -> dict[str, Tally]:
    rng = np.random.default_rng(seed)
    tallies = {"fixed": Tally(), "adaptive": Tally()}
    for effect in effects:
        for _ in range(experiments):
            n_evals = int(rng.integers(min_evals, max_evals + 1))
            suite = Suite.draw(rng, n_evals, EFFECTS[effect], settings.max_trials_per_eval)
            most = 2 * n_evals * settings.max_trials_per_eval
            for name, run in (("fixed", lambda s=suite: fixed(s, settings.max_trials_per_eval)),
                              ("adaptive", lambda s=suite: adaptive(s, settings))):
                used, decisions = run()
                tallies[name].add(effect, used, most, decisions)
    return tallies


def paired(tallies: dict[str, Tally], effect: str, gate: str, call: str) -> str:
    """On the same draws: experiments where only the fixed design made the call (lost by the
    adaptive one) and where only the adaptive one did (gained), with the paired difference's
    95% interval (a t interval of the per-experiment differences, clustered_mean)."""
    pairs = [(f[gate] == call if gate in f else False, a[gate] == call if gate in a else False)
             for (e, f), (_, a) in zip(tallies["fixed"].decisions, tallies["adaptive"].decisions, strict=True)
             if e == effect]
    lost, gained = sum(f and not a for f, a in pairs), sum(a and not f for f, a in pairs)
    est = clustered_mean([float(a) - float(f) for f, a in pairs])
    lo, hi = est.interval or (est.mean, est.mean)
    return f"paired: lost {lost}, gained {gained}, difference {est.mean * 100:+.1f} [{lo * 100:+.1f}, {hi * 100:+.1f}] points"


def trials_by_effect(t: Tally, effect: str) -> str:
    used = [u for u, (e, _) in zip(t.trials, t.decisions, strict=True) if e == effect]
    return f"{effect} {float(np.mean(used)) * 100:.1f}%"


def report(tallies: dict[str, Tally], effects: list[str]) -> list[str]:
    lines = []
    for name, t in tallies.items():
        lines.append(f"{name}: trials used {t.trials_text()}")
    lines.append("adaptive trials by effect: " + ", ".join(trials_by_effect(tallies["adaptive"], e) for e in effects))
    if "none" in effects:
        lines.append("A/A false calls (thresholds at the truth; each one-sided call should stay at or under 2.5%):")
        for gate in GATES:
            for call in ("PASS", "FAIL"):
                lines.append(f"  {gate:22s} false {call}: " + "   ".join(
                    f"{name} {t.rate('none', gate, call).text()}" for name, t in tallies.items())
                    + "   " + paired(tallies, "none", gate, call))
    for effect in (e for e in effects if e != "none"):
        lines.append(f"power, {effect} effect (+{EFFECTS[effect]:g}): improvement-ratio gate PASS, pass-rate gate PASS")
        for gate in ("min_improvement_ratio", "min_pass_rate"):
            lines.append(f"  {gate:22s} " + "   ".join(
                f"{name} {t.rate(effect, gate, 'PASS').text()}" for name, t in tallies.items())
                + "   " + paired(tallies, effect, gate, "PASS"))
    return lines


def replay(iteration: Path, config: Path, settings: Adaptive) -> list[str]:
    """The rule run on a fixed iteration's own trials (its outcomes in place of new ones), and
    both designs' gates: what the adaptive design would have decided, and at what cost, on
    exactly the data the fixed one saw (a live model may not repeat an answer to the same seed)."""
    from skillassay.models import BenchmarkConfig
    from skillassay.store.jsonio import parse_model, read_json
    from skillassay.workflows.compare_on_disk import load_iteration_records

    cfg = parse_model(read_json(config), BenchmarkConfig, config)
    recs = {(r.eval_id, r.configuration, r.run_number): r for r in load_iteration_records(iteration)}
    evals = [Eval(id=int(e), prompt="replayed") for e in dict.fromkeys(k[0] for k in recs)]
    plan = [Trial(ev, f"eval-{ev.id}", cfg_name, k, 0, Path("."))
            for ev in evals for cfg_name in (SKILL, BASE) for k in range(1, settings.max_trials_per_eval + 1)]
    result = run_rounds([t for t in plan if (t.eval.id, t.configuration, t.run_number) in recs], [], settings,
                        questions_for(cfg.thresholds), (SKILL, BASE),
                        lambda batch: [recs[(t.eval.id, t.configuration, t.run_number)] for t in batch])
    lines = []
    for name, rs in (("fixed", list(recs.values())), ("adaptive", result.executed)):
        bench = build_benchmark(rs, skill_name="replay", skill_path=None, iteration=1, timestamp="t",
                                trials_requested=settings.max_trials_per_eval, thresholds=cfg.thresholds)
        gate = evaluate(bench, cfg.thresholds)
        lines.append(f"{name}: {len(rs)} trials, gate {gate.status}: " + "; ".join(
            f"{t.key} {t.status}" for t in gate.thresholds))
    lines.append("adaptive stops: " + ", ".join(f"eval {e} {s.status} at {s.trials}" for e, s in result.states.items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiments", type=int, default=40, help="experiments per effect")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-trials", type=int, default=3)
    ap.add_argument("--max-trials", type=int, default=10)
    ap.add_argument("--round-size", type=int, default=1)
    ap.add_argument("--effects", nargs="+", default=list(EFFECTS), choices=list(EFFECTS))
    ap.add_argument("--agree-on", choices=["none", "pass", "both"], default="none",
                    help="also stop an eval at its first look when both arms passed (pass) or passed / failed "
                         "(both) every trial: the per-eval stop measured against the suite rule alone")
    ap.add_argument("--replay", type=Path, help="a fixed run's iteration folder to replay the rule on")
    ap.add_argument("--config", type=Path, help="with --replay: the benchmark config (thresholds)")
    ap.add_argument("--gates", nargs="+", default=list(GATES), choices=list(GATES),
                    help="the thresholds configured (and so watched by the rule): e.g. only min_improvement_ratio")
    ap.add_argument("--futility-from", type=float, default=None,
                    help="information fraction before which no gate is settled for futility (default: the rule's)")
    ap.add_argument("--no-futility", action="store_true", help="never settle a gate for futility (the default now)")
    ap.add_argument("--futility-power", type=float, default=None,
                    help="settle a gate for futility below this conditional power (off by default; 0.2 was the old rule)")
    ap.add_argument("--save", type=Path, default=None,
                    help="add this run's report to a results file (benchmarks/results/calibration.json: "
                         "docs/calibration.md is rendered from it)")
    args = ap.parse_args(argv)
    global THRESHOLDS  # noqa: PLW0603 (a script's setting, read by gate_decisions and adaptive)
    THRESHOLDS = Thresholds(**{g: getattr(THRESHOLDS, g) for g in args.gates})
    if args.futility_from is not None:
        seq.FUTILITY_FROM_INFORMATION = args.futility_from
    if args.futility_power is not None:
        seq.FUTILITY_POWER = args.futility_power
    if args.no_futility:
        seq.FUTILITY_POWER = 0.0
    seq.AGREE_ON = {"none": (), "pass": (True,), "both": (True, False)}[args.agree_on]
    settings = Adaptive(min_trials_per_eval=args.min_trials, max_trials_per_eval=args.max_trials,
                        round_size=args.round_size)
    if args.replay:
        if not args.config:
            ap.error("--replay needs --config")
        print("\n".join(replay(args.replay, args.config, settings)))
        return 0
    start = time.perf_counter()
    tallies = simulate(args.experiments, args.seed, settings, args.effects)
    text = [f"{args.experiments} experiments per effect, 10-30 evals, Beta(2,2) + exact 0s/1s, "
          f"adaptive {settings.min_trials_per_eval}..{settings.max_trials_per_eval} trials per arm in rounds of "
          f"{settings.round_size}, fixed {settings.max_trials_per_eval}; seed {args.seed}",
            f"rule: {seq.METHOD}; interim one-sided alpha {seq.INTERIM_ALPHA}, curtailment at conditional power "
          f"{seq.CURTAIL_POWER} under no effect, futility below {seq.FUTILITY_POWER} at the trend + "
          f"{seq.FUTILITY_OPTIMISM} SE from information {seq.FUTILITY_FROM_INFORMATION:g}; per-eval stop when both "
          f"arms agreed at the first look: {args.agree_on}; gates watched: {', '.join(args.gates)}",
            *report(tallies, args.effects)]
    print("\n".join(text))
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.save is not None:
        import calibration_page  # noqa: PLC0415 (a sibling script: only --save needs it)

        words = [a for a in (argv if argv is not None else sys.argv[1:])]
        if "--save" in words:
            del words[words.index("--save"):words.index("--save") + 2]
        calibration_page.save_adaptive(args.save, " ".join(["python benchmarks/adaptive.py", *words]), "\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
