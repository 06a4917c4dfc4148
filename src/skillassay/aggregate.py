"""Aggregation: TrialRecords -> benchmark.json in both spec shapes (skill-creator's
metadata/runs/run_summary/notes and the benchmark process's summary/per_eval/thresholds_met),
with the statistics beside them. Pure: reading records from disk is in `records_io`."""

from __future__ import annotations

import json
import statistics as pystats
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_core import to_json

from skillassay.jsonio import atomic_open
from skillassay.models import Benchmark, ExpectationResult, Thresholds
from skillassay.notes import analyst_notes
from skillassay.records import ExpectationTally, Outcome, TrialRecord
from skillassay.records_io import read_details
from skillassay.statistics import build_statistics

SKILL_CONFIGS = ("with_skill", "new_skill")
BASELINE_CONFIGS = ("without_skill", "old_skill", "baseline", "no_skill")


@dataclass(frozen=True)
class Arms:
    """Which configuration is the skill under test and which the baseline: decided by name
    (and the benchmark config), never by alphabetical order, so deltas are skill - baseline."""

    skill: str
    baseline: str


def pick_arms(configurations: Iterable[str], baseline_type: str | None = None) -> Arms:
    configs = list(dict.fromkeys(configurations))
    skill = next((c for c in SKILL_CONFIGS if c in configs), None)
    preferred = ("old_skill",) if baseline_type == "previous_version" else BASELINE_CONFIGS
    baseline = next((c for c in preferred + BASELINE_CONFIGS if c in configs), None)
    rest = [c for c in configs if c not in {skill, baseline}]
    if skill is None and rest:
        skill = rest.pop(0)
    if baseline is None and rest:
        baseline = rest.pop(0)
    return Arms(skill or "with_skill", baseline or "without_skill")


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _std(xs: list[float]) -> float | None:
    return pystats.stdev(xs) if len(xs) > 1 else (0.0 if xs else None)


def _stat(xs: list[float]) -> dict[str, float | None]:
    return {"mean": _r(_mean(xs)), "stddev": _r(_std(xs)), "min": _r(min(xs)) if xs else None,
            "max": _r(max(xs)) if xs else None}


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def _signed(x: float | None, fmt: str) -> str:
    return "n/a" if x is None else format(x, "+" + fmt)


@dataclass
class EvalArm:
    """Per eval and configuration: the completed trials' figures."""

    requested: int
    completed: list[TrialRecord]
    errored: int

    @property
    def pass_rate(self) -> float | None:
        n = len(self.completed)
        return sum(1 for r in self.completed if r.passed) / n if n else None

    def avg(self, attr: str) -> float | None:
        return _mean([getattr(r, attr) for r in self.completed if getattr(r, attr) is not None])


def group(records: list[TrialRecord], trials_requested: int | None) -> dict[tuple, dict[str, EvalArm]]:
    """(eval_id, eval_name) -> configuration -> EvalArm."""
    cells: dict[tuple, dict[str, list[TrialRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        cells[(r.eval_id, r.eval_name)][r.configuration].append(r)
    out: dict[tuple, dict[str, EvalArm]] = {}
    for key, by_config in cells.items():
        out[key] = {}
        for config, rs in by_config.items():
            done = [r for r in rs if r.completed]
            out[key][config] = EvalArm(max(trials_requested or 0, len(rs)), done, len(rs) - len(done))
    return out


def arm_summary(per_eval: list[EvalArm]) -> dict[str, float | None]:
    rates = [a.pass_rate for a in per_eval if a.pass_rate is not None]
    tokens = [r.tokens for a in per_eval for r in a.completed if r.tokens is not None]
    secs = [r.duration_seconds for a in per_eval for r in a.completed if r.duration_seconds is not None]
    return {"pass_rate": _r(_mean(rates)), "pass_rate_std": _r(_std(rates)),
            "avg_tokens": _r(_mean(tokens), 1), "avg_duration_seconds": _r(_mean(secs), 3)}


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else round(a / b, 4)


def thresholds_met(summary: dict, thresholds: Thresholds) -> dict[str, bool]:
    """The spec's plain comparison: a value exactly at the threshold passes. A figure that
    could not be computed (e.g. no improvement ratio without a baseline) is left out."""
    ws = summary["with_skill"]
    checks = {
        "min_pass_rate": (ws["pass_rate"], thresholds.min_pass_rate, "min"),
        "max_avg_tokens": (ws["avg_tokens"], thresholds.max_avg_tokens, "max"),
        "max_avg_duration_seconds": (ws["avg_duration_seconds"], thresholds.max_avg_duration_seconds, "max"),
        "min_improvement_ratio": (summary["improvement_ratio"], thresholds.min_improvement_ratio, "min"),
    }
    met = {}
    for key, (value, limit, direction) in checks.items():
        if limit is None or value is None:
            continue
        met[key] = value >= limit if direction == "min" else value <= limit
    return met


def build_benchmark(records: list[TrialRecord], *, skill_name: str, skill_path: str | None,
                    iteration: int | None, timestamp: str, trials_requested: int | None,
                    thresholds: Thresholds, arms: Arms | None = None, executor_model: str | None = None,
                    notes: list[str] | None = None, seed: int = 0,
                    expectation_tally: ExpectationTally | None = None) -> Benchmark:
    """`expectation_tally`: required when records are light (details_dir), for the notes."""
    arms = arms or pick_arms(r.configuration for r in records)
    cells = group(records, trials_requested)
    configs = list(dict.fromkeys([arms.skill, arms.baseline] + [r.configuration for r in records]))
    empty = EvalArm(trials_requested or 0, [], 0)

    per_eval, skill_arms, base_arms = [], [], []
    for (eval_id, eval_name), by_config in cells.items():
        s, b = by_config.get(arms.skill, empty), by_config.get(arms.baseline, empty)
        skill_arms.append(s)
        base_arms.append(b)
        per_eval.append({
            "eval_id": eval_id, "eval_name": eval_name,
            "with_skill": _per_eval_arm(s), "baseline": _per_eval_arm(b),
            "trials": trials_requested or max(s.requested, b.requested),
        })

    ws, bs = arm_summary(skill_arms), arm_summary(base_arms)
    baseline_failed = not any(a.completed for a in base_arms)
    summary = {
        "total_evals": len(cells),
        "with_skill": ws,
        "baseline": bs,
        "improvement_ratio": None if baseline_failed else _ratio(ws["pass_rate"], bs["pass_rate"]),
        "token_savings_ratio": _ratio(ws["avg_tokens"], bs["avg_tokens"]),
        "time_savings_ratio": _ratio(ws["avg_duration_seconds"], bs["avg_duration_seconds"]),
    }
    run_summary = _run_summary(records, configs, arms)
    statistics = build_statistics(records, arms.skill, arms.baseline, trials_requested or 0,
                                  thresholds.model_dump(), seed=seed)
    all_notes = list(notes or []) + _error_notes(cells, arms, baseline_failed) + analyst_notes(records, arms, expectation_tally)
    bench = Benchmark.model_validate({
        "metadata": {
            "skill_name": skill_name, "skill_path": skill_path, "executor_model": executor_model,
            "timestamp": timestamp, "evals_run": [k[0] for k in cells],
            "runs_per_configuration": trials_requested,
        },
        "run_summary": run_summary,
        "notes": all_notes,
        "skill_name": skill_name,
        "iteration": iteration,
        "timestamp": timestamp,
        "summary": summary,
        "per_eval": per_eval,
        "thresholds_met": thresholds_met(summary, thresholds),
        "statistics": statistics,
    })
    bench._run_records = records
    return bench


def run_entries(bench: Benchmark) -> Iterator[dict]:
    """runs[] of benchmark.json, one dict at a time."""
    if bench._run_records is not None:  # light records' details are re-read from disk
        return (_run_entry(r, *read_details(r)) for r in bench._run_records)
    return (r.to_json_dict() for r in bench.runs or [])


def _indented(value: Any, prefix: str) -> str:
    text = to_json(value, indent=2).decode("utf-8")
    return text.replace("\n", "\n" + prefix)


def write_benchmark(path: Path, bench: Benchmark) -> None:
    """benchmark.json, pretty-printed like write_json, with runs[] streamed to the file one run
    at a time (flat memory on huge iterations). Key order: skill-creator's shape first
    (metadata, runs, run_summary, notes), then the benchmark process's, then ours."""
    data = bench.to_json_dict()
    data.pop("runs", None)
    keys = list(data)
    keys.insert(1 if "metadata" in data else 0, "runs")
    with atomic_open(path) as fh:
        fh.write("{\n")
        for i, key in enumerate(keys):
            fh.write(f"  {json.dumps(key)}: ")
            if key == "runs":
                _write_runs(fh, run_entries(bench))
            else:
                fh.write(_indented(data[key], "  "))
            fh.write(",\n" if i < len(keys) - 1 else "\n")
        fh.write("}\n")


def _write_runs(fh: Any, entries: Iterator[dict]) -> None:
    first = True
    for entry in entries:
        fh.write("[\n    " if first else ",\n    ")
        fh.write(_indented(entry, "    "))
        first = False
    fh.write("[]" if first else "\n  ]")


def _per_eval_arm(a: EvalArm) -> dict:
    return {"pass_rate": _r(a.pass_rate), "avg_tokens": _r(a.avg("tokens"), 1),
            "avg_duration_seconds": _r(a.avg("duration_seconds"), 3),
            "trials_completed": len(a.completed), "trials_requested": a.requested}


def _run_entry(r: TrialRecord, expectations: tuple[Any, ...], notes: tuple[str, ...]) -> dict:
    failed = r.total_count - r.passed_count if r.completed else r.total_count
    return {
        "eval_id": r.eval_id, "eval_name": r.eval_name, "configuration": r.configuration,
        "run_number": r.run_number,
        "result": {"pass_rate": _r(r.expectation_pass_rate or 0.0), "passed": r.passed_count,
                   "failed": failed, "total": r.total_count, "time_seconds": _r(r.duration_seconds, 3),
                   "tokens": r.tokens, "tool_calls": r.tool_calls, "errors": r.errors},
        "expectations": [_expectation_json(e) for e in expectations],
        "notes": list(notes) + ([f"trial {r.status}: {r.error}"] if not r.completed else []),
    }


def _expectation_json(e: ExpectationResult | Outcome) -> dict:
    """Same dict as e.model_dump(mode="json"), without a serializer call per expectation (a big
    iteration has hundreds of thousands): text and passed are required and evidence defaults to
    "", so all three are always written; an expectation with extra fields takes the slow path."""
    if type(e) is not Outcome and e.__pydantic_extra__:
        return e.model_dump(mode="json")
    return {"text": e.text, "passed": e.passed, "evidence": e.evidence}


def _run_summary(records: list[TrialRecord], configs: list[str], arms: Arms) -> dict:
    out: dict = {}
    for config in configs:
        done = [r for r in records if r.configuration == config and r.completed]
        out[config] = {
            "pass_rate": _stat([r.expectation_pass_rate or 0.0 for r in done]),
            "time_seconds": _stat([r.duration_seconds for r in done if r.duration_seconds is not None]),
            "tokens": _stat([r.tokens for r in done if r.tokens is not None]),
        }
    s, b = out.get(arms.skill), out.get(arms.baseline)
    if s and b:
        def d(metric: str) -> float | None:
            x, y = s[metric]["mean"], b[metric]["mean"]
            return None if x is None or y is None else x - y
        out["delta"] = {"pass_rate": _signed(d("pass_rate"), ".2f"),
                        "time_seconds": _signed(d("time_seconds"), ".1f"),
                        "tokens": _signed(d("tokens"), ".0f")}
    return out


def _error_notes(cells: dict[tuple, dict[str, EvalArm]], arms: Arms, baseline_failed: bool) -> list[str]:
    notes = []
    if baseline_failed:
        notes.append(f"All {arms.baseline} trials failed: with-skill results only, no improvement ratio")
    for (eval_id, name), by_config in cells.items():
        for config, arm in by_config.items():
            if arm.errored:
                notes.append(f"Eval {eval_id} ({name}) {config}: {arm.errored} of {arm.requested} trials "
                             f"errored or timed out (excluded; {len(arm.completed)} completed)")
            if len(arm.completed) < 2:
                notes.append(f"Eval {eval_id} ({name}) {config}: fewer than 2 completed trials, "
                             "variance unreliable")
    return notes
