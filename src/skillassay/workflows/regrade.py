"""`skillassay grade`: re-grade the finished runs of an iteration without executing anything.

Expectations are the cheap thing to iterate on and trials the expensive one, so an edited
eval set (or a judge switched on) is applied to the runs already on disk: each run's
grading.json is rewritten from its outputs, the judge's answers for unchanged pairs come
from the run's cache, and benchmark.json/benchmark.md are rebuilt from the new gradings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.analyze.arms import Arms, pick_arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import GateResult, evaluate
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading
from skillassay.errors import InputError
from skillassay.grade.grader import (
    CompiledExpectation,
    Grader,
    compile_expectations,
    grade_or_fail,
    make_grader,
    run_view,
)
from skillassay.models import Benchmark, BenchmarkConfig, Eval, EvalMetadata, EvalSet, Grading, Thresholds
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.store.benchmark_file import write_benchmark
from skillassay.store.discover import METADATA, eval_runs, find_evals
from skillassay.store.iteration_files import checked_iteration_record, find_config
from skillassay.store.jsonio import atomic_write_text, load_model, now_iso, read_json, remove_stale_temps, write_json
from skillassay.store.layout import existing_iterations, iteration_dir
from skillassay.store.lock import WorkspaceLock
from skillassay.store.read import load_metrics, load_timing, read_trial
from skillassay.store.records import TrialRecord, sort_records
from skillassay.workflows.aggregate import default_skill_name, iteration_number
from skillassay.workflows.gate_iteration import not_measured


@dataclass
class RegradeOutcome:
    iteration_dir: Path
    runs: int
    judged: int
    cached: int
    benchmark: Benchmark
    gate: GateResult


def resolve_iteration(target: Path) -> Path:
    """An iteration folder as given (ours, with iteration.json, or skill-creator's: run folders
    in any layout `aggregate` reads), or a workspace's latest iteration."""
    if (target / "iteration.json").is_file():
        return target
    numbers = existing_iterations(target)
    if numbers:
        return iteration_dir(target, numbers[-1])
    if target.is_dir() and find_evals(target)[0]:
        return target  # executed by someone else: eval folders with runs, no iteration.json
    raise InputError.one(target, "", "neither an iteration folder (iteration.json, or eval-*/ folders with runs) "
                         "nor a workspace with iteration-N folders")


def resolve_evals_path(it_dir: Path, record: dict[str, Any], override: Path | None) -> Path:
    if override is not None:
        return override
    recorded = record.get("evals_path")
    if not recorded:
        where = "$.evals_path" if (it_dir / "iteration.json").is_file() else "--evals"
        raise InputError.one(it_dir / "iteration.json", where, "no eval set recorded: pass --evals")
    return Path(recorded)


def load_config(it_dir: Path, evals_path: Path, record: dict[str, Any]) -> BenchmarkConfig:
    """The config the run was gated with (its thresholds and the effect its advice is planned
    for), found as `gate` and `report` find them (the config iteration.json recorded, the
    snapshot's, the skill's), so the re-written benchmark.json and `skillassay gate` never
    disagree; for an iteration that names none (skill-creator's), the config beside the eval set;
    none found -> the defaults (no thresholds)."""
    path = find_config(it_dir)
    if path is None and (beside := evals_path.parent / "benchmark_config.json").is_file():
        path = beside
    return load_model(path, BenchmarkConfig) if path is not None else BenchmarkConfig()


@dataclass(frozen=True)
class RunRef:
    eval: Eval
    configuration: str
    run_number: int
    run_dir: Path
    eval_dir: Path | None = None  # the eval's folder as found (skill-creator names them freely)


def find_runs(it_dir: Path, evals: dict[int, Eval]) -> list[RunRef]:
    """Every executed run (it has outputs/), in every layout discovery knows (`eval-*/<config>/
    run-K/`, legacy `runs/`, a configuration folder holding outputs/ directly), the eval's id
    from eval_metadata.json or else its folder name. An eval whose id is not in the eval set
    is an error: its runs cannot be graded."""
    refs, unknown = [], []
    for ev_dir in find_evals(it_dir)[0]:
        if (Path(ev_dir.path) / METADATA).is_file():
            load_model(Path(ev_dir.path) / METADATA, EvalMetadata)  # a broken one is bad input, named
        ev = evals.get(int(ev_dir.eval_id)) if str(ev_dir.eval_id).isdigit() else None
        runs = [r for r in eval_runs(ev_dir) if (Path(r.path) / "outputs").is_dir()]
        if ev is None:
            if runs or (Path(ev_dir.path) / METADATA).is_file():
                unknown.append(str(ev_dir.eval_id))
            continue
        refs += [RunRef(ev, r.configuration, r.run_number, Path(r.path), Path(ev_dir.path)) for r in runs]
    if unknown:
        raise InputError.one(it_dir, "eval_metadata.json", f"eval id(s) {', '.join(unknown)} are not in the eval set")
    return sorted(refs, key=lambda r: (r.eval.id, r.configuration, r.run_number))


def regrade_run(ref: RunRef, compiled: list[CompiledExpectation], grader: Grader, eval_dir: Path) -> Grading:
    metrics, timing = load_metrics(ref.run_dir), load_timing(ref.run_dir)
    view = run_view(ref.run_dir, metrics, timing, ref.eval.prompt, eval_dir)
    grading = grade_or_fail(compiled, view, metrics.status or "ok", metrics.error, grader)
    remove_stale_temps(ref.run_dir)  # a grading.json a killed run was writing
    write_json(ref.run_dir / "grading.json", grading)
    return grading


def update_metadata(it_dir: Path, ev: Eval, eval_dir: Path | None = None) -> None:
    """The viewer shows expectations from eval_metadata.json: keep it in step with the grading.
    Written in the eval's own folder (a skill-creator folder is not named like our slug)."""
    meta = EvalMetadata(eval_id=ev.id, eval_name=ev.name or ev.slug, prompt=ev.prompt,
                        expectations=ev.all_expectations(), **({"turns": ev.turns} if ev.turns else {}))
    write_json((eval_dir or it_dir / ev.slug) / METADATA, meta)


def regrade_iteration(target: Path, *, evals_path: Path | None = None, judge: str | None = None,
                      judge_model: str | None = None, judge_samples: int = 1, use_cache: bool = True,
                      grader: Grader | None = None, allow_weak_judge: bool = False) -> RegradeOutcome:
    """Rewrites gradings and benchmark.json, so it holds the workspace lock (the iteration's
    parent) like `run` does: re-grading runs that a live `run` is still writing is refused."""
    with WorkspaceLock(resolve_iteration(target).parent, "grade"):
        # again under the lock: the latest iteration may have changed while it was held
        return regrade_locked(resolve_iteration(target), evals_path, judge, judge_model, judge_samples,
                              use_cache, grader, allow_weak_judge)


def regrade_locked(it_dir: Path, evals_path: Path | None, judge: str | None, judge_model: str | None,
                   judge_samples: int, use_cache: bool, grader: Grader | None,
                   allow_weak_judge: bool = False) -> RegradeOutcome:
    remove_stale_temps(it_dir)  # a killed run's or aggregation's half-written files
    # no iteration.json: a skill-creator iteration, whose runs someone else executed
    record = read_json(it_dir / "iteration.json") if (it_dir / "iteration.json").is_file() else {}
    if not isinstance(record, dict):
        raise InputError.one(it_dir / "iteration.json", "$", "expected a JSON object")
    record = checked_iteration_record(record, it_dir / "iteration.json")
    path = resolve_evals_path(it_dir, record, evals_path)
    eval_set = load_model(path, EvalSet)
    evals = {ev.id: ev for ev in eval_set.evals}
    compiled = {ev.id: compile_expectations(ev, path) for ev in eval_set.evals}
    refs = find_runs(it_dir, evals)
    grader = grader or make_grader(judge, judge_model, judge_samples, use_cache)
    if grader.judge is not None:  # measured before its verdicts count, as in `run`
        from skillassay.grade.judge_check import judge_record

        if (check := judge_record(grader, eval_set.evals, allow_weak_judge)) and (it_dir / "iteration.json").is_file():
            write_json(it_dir / "iteration.json", {**read_json(it_dir / "iteration.json"), "judge_check": check})
    eval_dir = path.resolve().parent

    for ref in {r.eval.id: r for r in refs}.values():
        update_metadata(it_dir, ref.eval, ref.eval_dir)
    for ref in refs:
        regrade_run(ref, compiled[ref.eval.id], grader, eval_dir)

    records = [rec for ref in refs if (rec := read_trial(str(ref.run_dir), ref.eval.id, ref.eval.name or ref.eval.slug,
                                                         ref.configuration, ref.run_number)[0])]
    records = sort_records(records)
    config = load_config(it_dir, path, record)
    bench, gate_result = rebuild_benchmark(it_dir, records, record, config.thresholds, config.min_detectable_effect,
                                          config.interval_reading)
    return RegradeOutcome(it_dir, len(refs), grader.counts.judged, grader.counts.cached, bench, gate_result)


def rebuild_benchmark(it_dir: Path, records: list[TrialRecord], record: dict[str, Any],
                      thresholds: Thresholds, min_detectable_effect: float,
                      interval_reading: Reading = DEFAULT_READING) -> tuple[Benchmark, GateResult]:

    configurations = record.get("configurations")
    if configurations:
        arms = Arms(configurations[0], configurations[1] if len(configurations) > 1 else "without_skill")
    else:  # skill-creator's folders: its configuration names (with_skill / old_skill / ...)
        arms = pick_arms((r.configuration for r in records), record.get("baseline_type"))
    number = record.get("iteration")
    if not isinstance(number, int):
        number = iteration_number(it_dir, record)
    trials = record.get("trials_per_eval") or max((r.run_number for r in records), default=None)
    bench = build_benchmark(
        records, skill_name=record.get("skill_name") or default_skill_name(it_dir, record),
        skill_path=record.get("skill_path"),
        iteration=number if isinstance(number, int) else None, timestamp=now_iso(),
        trials_requested=trials, thresholds=thresholds, arms=arms,
        executor_model=(record.get("executor") or {}).get("model"), min_detectable_effect=min_detectable_effect,
        interval_reading=interval_reading)
    write_benchmark(it_dir / "benchmark.json", bench)
    executor, unmeasurable = not_measured(it_dir, thresholds)
    gate_result = evaluate(bench, thresholds, not_measured=unmeasurable, executor=executor)
    atomic_write_text(it_dir / "benchmark.md", render_benchmark_md(bench, gate_result))
    return bench, gate_result


def describe(outcome: RegradeOutcome) -> str:
    """One JSON line for scripts (--json)."""
    return json.dumps({"iteration_dir": str(outcome.iteration_dir), "runs": outcome.runs,
                       "judged": outcome.judged, "from_cache": outcome.cached})
