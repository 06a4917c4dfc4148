"""Small seeded A/A and known-effect experiments through the library, for the calibration
tests of the intervals, the gate and the regression calls (issue 16).

An experiment draws per-eval true pass rates, then K Bernoulli trials per eval for both arms of
two iterations, and runs the same code `run` does: build_benchmark (statistics and gates),
build_comparison (regression calls) and the gate's evaluate."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from skillassay.analyze import compare, iteration_change
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import GateResult, evaluate
from skillassay.analyze.iteration_change import compare_iterations
from skillassay.models import Benchmark, Thresholds
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"


def records(passes: dict[tuple[int, str], list[bool]]) -> list[TrialRecord]:
    return [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=cfg, run_number=i + 1, status="ok",
                        passed=bool(p), passed_count=int(p), total_count=1, tokens=1000, duration_seconds=1.0)
            for (e, cfg), outcomes in passes.items() for i, p in enumerate(outcomes)]


def draw(rng: np.random.Generator, rates_skill: np.ndarray, rates_base: np.ndarray,
         k: int) -> list[TrialRecord]:
    passes = {}
    for e, (ps, pb) in enumerate(zip(rates_skill, rates_base, strict=True)):
        passes[(e, SKILL)] = list(rng.random(k) < ps)
        passes[(e, BASE)] = list(rng.random(k) < pb)
    return records(passes)


def benchmark(recs: list[TrialRecord], k: int, thresholds: Thresholds) -> Benchmark:
    return build_benchmark(recs, skill_name="sim", skill_path=None, iteration=2, timestamp="t",
                           trials_requested=k, thresholds=thresholds)


@dataclass
class Experiment:
    bench: Benchmark
    comparison: dict[str, Any]
    gate: GateResult

    def status(self, key: str) -> str:
        return next(t.status for t in self.gate.thresholds if t.key == key)


def experiment(rng: np.random.Generator, rates: np.ndarray, k: int, thresholds: Thresholds,
               skill_rates: np.ndarray | None = None) -> Experiment:
    """Iteration 2 vs iteration 1; both iterations' baselines at `rates`, both skills at
    `skill_rates` (default: `rates`, an A/A experiment)."""
    skill = rates if skill_rates is None else skill_rates
    prev, cur = draw(rng, skill, rates, k), draw(rng, skill, rates, k)
    bench = benchmark(cur, k, thresholds)
    # The calls `compare` makes, without its trials-to-call advice (which the gate ignores).
    cmp = compare_iterations(cur, prev, SKILL)
    return Experiment(bench, cmp, evaluate(bench, thresholds, comparison=cmp))


_exact_p = iteration_change.one_sided_exact_p


@functools.cache
def _cached_exact_p(*args: Any, **kwargs: Any) -> tuple[float | None, float | None]:
    return _exact_p(*args, **kwargs)


def fast_exact_p(monkeypatch: Any) -> None:
    """Boschloo's test is a pure function of four small integers that repeat across
    experiments: caching it makes a few hundred experiments take seconds, not minutes."""
    for module in (iteration_change, compare):  # where the comparison's calls look it up
        monkeypatch.setattr(module, "one_sided_exact_p", _cached_exact_p)
