"""Aggregation: TrialRecords -> benchmark.json in both spec shapes (skill-creator's
metadata/runs/run_summary/notes and the benchmark process's summary/per_eval/thresholds_met),
plus estimate_meets
with the statistics beside them. Pure: reading records from disk is in `store.read`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import IO, Any

import orjson

from skillassay.analyze.advice import MIN_DETECTABLE_EFFECT
from skillassay.analyze.arms import Arms, pick_arms
from skillassay.analyze.cells import Arm, EvalCell, group_records, joined, mean_or_none
from skillassay.analyze.cost import cost_section, skill_mean_cost
from skillassay.analyze.notes import cell_notes, config_values
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading
from skillassay.analyze.statistics import build_statistics
from skillassay.analyze.triggered import trigger_split
from skillassay.analyze.turns import turn_statistics
from skillassay.models import Benchmark, ExpectationResult, Thresholds
from skillassay.stats.exact_sd import stdev
from skillassay.store.benchmark_file import RUN_INDENT, write_run_texts
from skillassay.store.records import ExpectationTally, Outcome, TrialRecord


def _std(xs: Sequence[float]) -> float | None:
    return stdev(xs) if len(xs) > 1 else (0.0 if xs else None)


def _stat(xs: Sequence[float]) -> dict[str, float | None]:
    return {"mean": _r(mean_or_none(xs)), "stddev": _r(_std(xs)), "min": _r(min(xs)) if xs else None,
            "max": _r(max(xs)) if xs else None}


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def _signed(x: float | None, fmt: str) -> str:
    return "n/a" if x is None else format(x, "+" + fmt)


def arm_summary(per_eval: list[Arm]) -> dict[str, float | int | None]:
    rates = [a.pass_rate for a in per_eval if a.pass_rate is not None]
    tokens = joined(a.tokens for a in per_eval)
    secs = joined(a.durations for a in per_eval)
    return {"pass_rate": _r(mean_or_none(rates)), "pass_rate_std": _r(_std(rates)),
            "avg_tokens": _r(mean_or_none(tokens), 1), "avg_duration_seconds": _r(mean_or_none(secs), 3),
            "ungraded_trials": sum(a.ungraded for a in per_eval)}


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else round(a / b, 4)


def ratio_unbounded(summary: dict[str, Any]) -> bool:
    """The summary's improvement ratio has no upper end: the baseline passed nothing and the skill
    something. Its figure is then null (JSON has no infinity); this says which null it is. A
    baseline with no completed trial has no pass rate at all, and so no ratio, bounded or not."""
    ws, bs = summary.get("with_skill"), summary.get("baseline")
    if summary.get("improvement_ratio") is not None or not isinstance(ws, dict) or not isinstance(bs, dict):
        return False
    skill, base = ws.get("pass_rate"), bs.get("pass_rate")
    return base == 0 and isinstance(skill, int | float) and skill > 0


def estimate_meets(summary: dict, thresholds: Thresholds, cost: dict | None = None) -> dict[str, bool]:
    """The plain comparison of each estimate with its threshold (a value exactly at it passes):
    benchmark.json's `estimate_meets`, what --point-estimate gates on. Not `thresholds_met`,
    which says what the gate decided (gated_thresholds_met). An unbounded improvement ratio
    meets any minimum; a figure that could not be computed (no pass in either arm, no baseline)
    is left out."""
    ws = summary["with_skill"]
    ratio = math.inf if ratio_unbounded(summary) else summary["improvement_ratio"]
    checks = {
        "min_pass_rate": (ws["pass_rate"], thresholds.min_pass_rate, "min"),
        "max_avg_tokens": (ws["avg_tokens"], thresholds.max_avg_tokens, "max"),
        "max_avg_duration_seconds": (ws["avg_duration_seconds"], thresholds.max_avg_duration_seconds, "max"),
        "min_improvement_ratio": (ratio, thresholds.min_improvement_ratio, "min"),
        "max_avg_cost_usd": (skill_mean_cost(cost), thresholds.max_avg_cost_usd, "max"),
    }
    met = {}
    for key, (value, limit, direction) in checks.items():
        if limit is None or value is None:
            continue
        met[key] = value >= limit if direction == "min" else value <= limit
    return met


def gated_thresholds_met(bench: Benchmark, thresholds: Thresholds) -> dict[str, bool]:
    """benchmark.json's `thresholds_met`: true only where the gate PASSES that threshold on a
    valid measurement, so a script (or skill-creator's publish step) reading it never takes an
    INCONCLUSIVE estimate that happens to sit above the bar for a pass. The keys are those the
    gate has a figure for (an unbounded improvement ratio included); the family-wise hold on
    FAIL calls and a comparison with the previous iteration change no PASS, so neither is needed."""
    from skillassay.analyze.gate import evaluate  # the gate reads this module's figures, not the reverse

    result = evaluate(bench, thresholds)
    return {t.key: t.status == "PASS" and not result.problems for t in result.thresholds if t.value is not None}


# Writes benchmark.json's runs[] entries, already serialised (see write_benchmark).
RunsWriter = Callable[[IO[str]], None]


def build_benchmark(records: list[TrialRecord], *, skill_name: str, skill_path: str | None,
                    iteration: int | None, timestamp: str, trials_requested: int | None,
                    thresholds: Thresholds, arms: Arms | None = None, executor_model: str | None = None,
                    notes: list[str] | None = None, seed: int = 0,
                    min_detectable_effect: float = MIN_DETECTABLE_EFFECT,
                    interval_reading: Reading = DEFAULT_READING) -> Benchmark:
    """summarize() for graded records held in memory (`run`, `grade`)."""
    arms = arms or pick_arms(r.configuration for r in records)
    configs = list(dict.fromkeys([arms.skill, arms.baseline] + [r.configuration for r in records]))
    bench = summarize(group_records(records, configs), configs, ExpectationTally.of(records), skill_name=skill_name,
                      skill_path=skill_path, iteration=iteration, timestamp=timestamp,
                      trials_requested=trials_requested, thresholds=thresholds, arms=arms,
                      executor_model=executor_model, notes=notes, seed=seed,
                      min_detectable_effect=min_detectable_effect, interval_reading=interval_reading)
    if (turns := turn_statistics(records, arms.skill, arms.baseline, seed, interval_reading)) is not None:
        bench.turns = turns  # set (and so written) only for a multi-turn eval set
    bench._write_runs = lambda fh: write_run_texts(fh, ((run_json(r),) for r in records))
    return bench


def summarize(cells: list[EvalCell], configs: list[str], tally: ExpectationTally, *, skill_name: str,
              skill_path: str | None, iteration: int | None, timestamp: str, trials_requested: int | None,
              thresholds: Thresholds, arms: Arms, executor_model: str | None = None,
              notes: list[str] | None = None, seed: int = 0,
              min_detectable_effect: float = MIN_DETECTABLE_EFFECT,
              interval_reading: Reading = DEFAULT_READING) -> Benchmark:
    """benchmark.json without runs[] from per-eval cells (an Arm per configuration in `configs`)
    and the expectations' verdicts: all that aggregation needs, so no run is kept in memory."""
    per_eval, skill_arms, base_arms = [], [], []
    for cell in cells:
        s, b = cell.arms[arms.skill], cell.arms[arms.baseline]
        skill_arms.append(s)
        base_arms.append(b)
        per_eval.append({
            "eval_id": cell.eval_id, "eval_name": cell.eval_name,
            "with_skill": _per_eval_arm(s, trials_requested), "baseline": _per_eval_arm(b, trials_requested),
            "trials": trials_requested or max(s.recorded, b.recorded),
        })

    ws, bs = arm_summary(skill_arms), arm_summary(base_arms)
    baseline_failed = not any(a.completed for a in base_arms)  # errored or ungraded, all of them
    summary = {
        "total_evals": len(cells),
        "with_skill": ws,
        "baseline": bs,
        "improvement_ratio": None if baseline_failed else _ratio(ws["pass_rate"], bs["pass_rate"]),
        "token_savings_ratio": _ratio(ws["avg_tokens"], bs["avg_tokens"]),
        "time_savings_ratio": _ratio(ws["avg_duration_seconds"], bs["avg_duration_seconds"]),
    }
    statistics = build_statistics(cells, arms.skill, arms.baseline, trials_requested or 0,
                                 thresholds.model_dump(), seed=seed,
                                 min_detectable_effect=min_detectable_effect, interval_reading=interval_reading)
    split = trigger_split(cells, arms.skill, arms.baseline)
    cost = cost_section(cells, arms.skill, arms.baseline, seed)
    all_notes = (list(notes or []) + _error_notes(cells, configs, arms, trials_requested, baseline_failed)
                 + cell_notes(cells, arms, tally))
    bench = Benchmark.model_validate({
        "metadata": {
            "skill_name": skill_name, "skill_path": skill_path, "executor_model": executor_model,
            "timestamp": timestamp, "evals_run": [c.eval_id for c in cells],
            "runs_per_configuration": trials_requested,
        },
        "run_summary": _run_summary(cells, configs, arms),
        "notes": all_notes,
        "skill_name": skill_name,
        "iteration": iteration,
        "timestamp": timestamp,
        "summary": summary,
        "per_eval": per_eval,
        "thresholds_met": {},
        "estimate_meets": estimate_meets(summary, thresholds, cost),
        "statistics": statistics,
        **({"trigger_conditioned": split} if split is not None else {}),
        **({"cost": cost} if cost is not None else {}),
    })
    bench.thresholds_met = gated_thresholds_met(bench, thresholds)
    return bench


_RUN_NEWLINE = ("\n" + RUN_INDENT).encode()


def run_json(r: TrialRecord) -> bytes:
    """One runs[] entry as it sits in benchmark.json (indented for its place in the array), in
    UTF-8."""
    return entry_json(run_entry(r))


def graded_run_json(eval_id: int | str, eval_name: str, configuration: str, run_number: int, passed: int,
                    total: int, duration: float | None, tokens: int | None, tool_calls: int | None,
                    errors: int, expectations: Sequence[ExpectationResult | Outcome],
                    notes: tuple[str, ...]) -> bytes:
    """run_json of the record of a completed run whose every expectation is an Outcome with a
    verdict (`aggregate`'s common case), without building the record: nothing is ungraded, so
    nothing is added to its notes, and failed is total - passed."""
    return entry_json(_entry(eval_id, eval_name, configuration, run_number, passed / total if total else 0.0,
                             passed, total - passed, total, duration, tokens, tool_calls, errors, expectations,
                             notes))


def entry_json(entry: dict) -> bytes:
    """A runs[] entry, serialised: orjson writes the same bytes as pydantic-core's encoder in
    half the time, which counts at 200,000 runs."""
    try:
        raw = orjson.dumps(entry, option=orjson.OPT_INDENT_2)
    except TypeError:  # an integer beyond 64 bits, or a lone surrogate in untrusted text
        raw = json.dumps(entry, indent=2).encode()  # ASCII with \u escapes: valid JSON either way
    return raw.replace(b"\n", _RUN_NEWLINE)


def _per_eval_arm(a: Arm, trials_requested: int | None) -> dict:
    return {"pass_rate": _r(a.pass_rate), "avg_tokens": _r(mean_or_none(a.tokens), 1),
            "avg_duration_seconds": _r(mean_or_none(a.durations), 3),
            "trials_completed": a.completed, "trials_requested": max(trials_requested or 0, a.recorded),
            "ungraded_trials": a.ungraded}


def run_entry(r: TrialRecord) -> dict:
    ungraded = r.ungraded_expectations  # neither passed nor failed
    failed = r.total_count - r.passed_count - ungraded if r.completed else r.total_count
    notes = list(r.notes) + ([f"trial {r.status}: {r.error}"] if not r.completed else [])
    if ungraded and r.ungraded:
        notes.append(f"trial ungraded: {ungraded} of {r.total_count} expectations have no verdict "
                     "(excluded from pass rates)")
    elif ungraded:
        notes.append(f"trial failed: {ungraded} of {r.total_count} expectations have no verdict, but another "
                     "failed, which fails the trial whatever they would say")
    return _entry(r.eval_id, r.eval_name, r.configuration, r.run_number, r.expectation_pass_rate or 0.0,
                  r.passed_count, failed, r.total_count, r.duration_seconds, r.tokens, r.tool_calls, r.errors,
                  r.expectations, notes)


def _entry(eval_id: int | str, eval_name: str, configuration: str, run_number: int, pass_rate: float,
           passed: int, failed: int, total: int, duration: float | None, tokens: int | None,
           tool_calls: int | None, errors: int, expectations: Sequence[ExpectationResult | Outcome],
           notes: Sequence[str]) -> dict:
    return {
        "eval_id": eval_id, "eval_name": eval_name, "configuration": configuration, "run_number": run_number,
        "result": {"pass_rate": _r(pass_rate), "passed": passed, "failed": failed, "total": total,
                   "time_seconds": _r(duration, 3), "tokens": tokens, "tool_calls": tool_calls, "errors": errors},
        "expectations": [_expectation_json(e) for e in expectations],
        "notes": notes,
    }


def _expectation_json(e: ExpectationResult | Outcome) -> dict:
    """Same dict as e.model_dump(mode="json"), without a serializer call per expectation (a big
    iteration has hundreds of thousands): text and passed are required and evidence defaults to
    "", so all three are always written; an expectation with extra fields takes the slow path."""
    if not isinstance(e, Outcome) and e.__pydantic_extra__:
        return e.model_dump(mode="json")
    return {"text": e.text, "passed": e.passed, "evidence": e.evidence}


def _run_summary(cells: list[EvalCell], configs: list[str], arms: Arms) -> dict:
    out: dict = {}
    for config in configs:
        rates, durations, tokens = config_values(cells, config)
        # skill-creator reads pass_rate here: its per-expectation mean. The same figure under the
        # name that says so, since "pass rate" everywhere else is per trial (issue 34).
        out[config] = {"pass_rate": _stat(rates), "expectation_pass_rate": _stat(rates),
                       "time_seconds": _stat(durations), "tokens": _stat(tokens),
                       "ungraded_trials": sum(c.arms[config].ungraded for c in cells)}
    s, b = out.get(arms.skill), out.get(arms.baseline)
    if s and b:
        def d(metric: str) -> float | None:
            x, y = s[metric]["mean"], b[metric]["mean"]
            return None if x is None or y is None else x - y
        out["delta"] = {"pass_rate": _signed(d("pass_rate"), ".2f"),
                        "expectation_pass_rate": _signed(d("pass_rate"), ".2f"),
                        "time_seconds": _signed(d("time_seconds"), ".1f"),
                        "tokens": _signed(d("tokens"), ".0f")}
    return out


def _error_notes(cells: list[EvalCell], configs: list[str], arms: Arms, trials_requested: int | None,
                 baseline_failed: bool) -> list[str]:
    notes = []
    if baseline_failed and any(c.arms[arms.baseline].ungraded for c in cells):
        notes.append(f"No {arms.baseline} trial was graded: with-skill results only, no improvement ratio")
    elif baseline_failed:
        notes.append(f"All {arms.baseline} trials failed: with-skill results only, no improvement ratio")
    for cell in cells:
        for config in sorted(configs):  # name order, as configuration folders are listed
            arm = cell.arms[config]
            if not arm.recorded:
                continue
            if arm.errored:
                notes.append(f"Eval {cell.eval_id} ({cell.eval_name}) {config}: {arm.errored} of "
                             f"{max(trials_requested or 0, arm.recorded)} trials "
                             f"errored or timed out (excluded; {arm.completed} completed)")
            if arm.ungraded:
                notes.append(f"Eval {cell.eval_id} ({cell.eval_name}) {config}: {arm.ungraded} of "
                             f"{max(trials_requested or 0, arm.recorded)} trials ungraded (an expectation has "
                             f"no verdict; excluded from pass rates, not failures; {arm.completed} graded)")
            if arm.completed < 2:
                notes.append(f"Eval {cell.eval_id} ({cell.eval_name}) {config}: fewer than 2 completed trials, "
                             "variance unreliable")
    return notes
