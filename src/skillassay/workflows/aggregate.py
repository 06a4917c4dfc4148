"""`skillassay aggregate ITERATION_DIR`: turn any skill-creator iteration folder (ours or one
written by hand / by skill-creator's agents) into benchmark.json and benchmark.md.

Replaces skill-creator's aggregate script, whose failure modes motivate the rules here: an
unrecognised layout is an error, not `"runs": []` with exit 0; skill vs baseline is decided by
name and the benchmark config, never by folder order, so the delta is always skill minus
baseline; a token count that was not recorded stays missing instead of becoming output chars;
and every run that could not be read is named, by path, in the output and in `notes`."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from skillassay.analyze.arms import BASELINE_CONFIGS, SKILL_CONFIGS, Arms, pick_arms
from skillassay.analyze.benchmark import summarize
from skillassay.analyze.gate import evaluate, measurement_problems
from skillassay.analyze.turns import section_of
from skillassay.errors import InputError, Problem
from skillassay.models import Benchmark, BenchmarkConfig
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.store.benchmark_file import write_benchmark
from skillassay.store.discover import LEGACY_ROOT, LOOKED_FOR, Discovery, discover
from skillassay.store.iteration_files import read_iteration_record
from skillassay.store.jsonio import atomic_write_text, load_model, remove_stale_temps
from skillassay.store.lock import WorkspaceLock
from skillassay.store.read import RunIssue, read_trial
from skillassay.store.records import TrialRecord, sort_records
from skillassay.workflows.iteration_reader import EvalsRead, read_iteration, with_arms, write_spooled_runs

_ITERATION = re.compile(r"iteration-(\d+)")
MAX_LISTED_IN_ERROR = 20


@dataclass
class Collected:
    """Records read from an iteration, and what could not be read."""

    discovery: Discovery
    records: list[TrialRecord] = field(default_factory=list)
    skipped: list[RunIssue] = field(default_factory=list)  # runs left out (no usable grading.json)
    warnings: list[str] = field(default_factory=list)  # runs kept, a side file was unusable


@dataclass
class AggregateResult:
    benchmark: Benchmark
    json_path: Path
    md_path: Path
    arms: Arms
    runs_read: int
    configurations: list[str]
    skipped: list[RunIssue]
    warnings: list[str]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Reading builds hundreds of thousands of small, acyclic, long-lived objects; the cyclic
    collector would rescan all of them again and again (about a third of the time) and can free
    none, so it is paused while they are built."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def collect(iteration: Path) -> Collected:
    """Discover and read every run into records (`compare`, `history`; `aggregate` streams
    instead, see cell_reader). Raises InputError when nothing in it can be aggregated."""
    with gc_paused():
        return _collect(iteration)


def _collect(iteration: Path) -> Collected:
    found = discover(iteration)
    out = Collected(found, warnings=list(found.warnings))
    for run in found.runs:
        record, issues = read_trial(run.path, run.eval.eval_id, run.eval.eval_name, run.configuration,
                                    run.run_number)
        if record is None:
            out.skipped.extend(issues)
        else:
            out.records.append(record)
            out.warnings.extend(str(i) for i in issues)
    if not out.records:
        raise nothing_to_aggregate(iteration, len(found.evals), len(found.runs), out.skipped)
    out.records = sort_records(out.records)
    return out


def nothing_to_aggregate(iteration: Path, n_evals: int, n_runs: int, skipped: list[RunIssue]) -> InputError:
    """Say what was looked for where, and, when run folders exist, why each was unusable."""
    where = f"{iteration} and {iteration / LEGACY_ROOT}"
    if not n_evals:
        msg = f"no eval folder found in {where} (looked for eval-*/ or folders holding eval_metadata.json)"
    elif not n_runs:
        msg = (f"no run folder found in {n_evals} eval folder(s) under {iteration} "
               f"(looked for {LOOKED_FOR})")
    else:
        msg = (f"none of the {n_runs} run folder(s) has a usable grading.json "
               f"(looked for {LOOKED_FOR})")
    problems = [Problem(str(iteration), "", msg)]
    problems += [Problem(i.path, "", i.message) for i in skipped[:MAX_LISTED_IN_ERROR]]
    if len(skipped) > MAX_LISTED_IN_ERROR:
        problems.append(Problem(str(iteration), "", f"... and {len(skipped) - MAX_LISTED_IN_ERROR} more"))
    return InputError(problems)


def choose_arms(configurations: list[str], baseline_type: str | None, where: Path) -> Arms:
    """pick_arms, refusing to guess when no configuration name says which side it is on:
    with two unknown names any choice would be folder order, which flipped deltas before."""
    known = set(SKILL_CONFIGS) | set(BASELINE_CONFIGS)
    if len(configurations) > 1 and not known.intersection(configurations):
        raise InputError.one(
            where, "configuration",
            f"cannot tell the skill from the baseline among configuration folders {configurations}: "
            f"name them {SKILL_CONFIGS[0]}/{BASELINE_CONFIGS[0]} (or new_skill/old_skill)")
    return pick_arms(configurations, baseline_type)


def iteration_number(iteration: Path, record: dict[str, Any]) -> int | None:
    m = _ITERATION.fullmatch(iteration.name)
    if m:
        return int(m.group(1))
    n = record.get("iteration")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def default_skill_name(iteration: Path, record: dict[str, Any]) -> str:
    """skill-creator puts iterations in `<skill-name>-workspace/`, so its folder name is the
    best guess when neither the command line, the config nor iteration.json says."""
    if isinstance(record.get("skill_name"), str):
        return record["skill_name"]
    parent = iteration.resolve().parent.name
    return parent.removesuffix("-workspace") if parent.endswith("-workspace") else parent or "unknown"


def run_notes(skipped: list[RunIssue], warnings: list[str], configurations: list[str], arms: Arms) -> list[str]:
    notes = [f"Run not aggregated: {issue}" for issue in skipped]
    notes += [f"Partly read: {w}" for w in warnings]
    if arms.baseline not in configurations:
        notes.append(f"No baseline configuration folder found (configurations: {', '.join(configurations)})")
    return notes


def _spool_gone(written: Path, fh: object) -> None:
    """The returned Benchmark's runs[] lived in a spool that is gone once the file is written."""
    raise RuntimeError(f"runs[] of this aggregation are in {written}; read it from there (nothing keeps them in memory)")


def planned_trials(config: BenchmarkConfig | None, record: dict[str, Any], found: int) -> int:
    """Trials per eval the iteration planned: iteration.json's (what `run` used, --trials
    included), else a trials_per_eval the config states, else the most any eval ran. Never the
    config's default: K = 10 data read with a config that omits it would report 3 and drop
    pass@5 and pass@10. Never fewer than ran, since pass@k needs k <= what was planned."""
    planned = record.get("trials_per_eval")
    if not (isinstance(planned, int) and not isinstance(planned, bool) and planned > 0):
        planned = config.trials_per_eval if config and "trials_per_eval" in config.model_fields_set else 0
    return max(planned, found)


def aggregate_iteration(iteration_dir: Path, *, skill_name: str | None = None, skill_path: str | None = None,
                        config_path: Path | None = None, output: Path | None = None,
                        timestamp: str | None = None, on_eval: EvalsRead | None = None) -> AggregateResult:
    """Read an iteration in any supported layout and write benchmark.json (both spec shapes)
    and benchmark.md atomically. The gate is not applied here (that is `skillassay gate`);
    benchmark.md shows it when the config has thresholds. It holds the workspace lock (the
    iteration's parent) like `run`, and removes the temp files a killed aggregation left."""
    if not iteration_dir.is_dir():  # no lock (it would create the folder): the reader says what is wrong
        return aggregate_locked(iteration_dir, skill_name, skill_path, config_path, output, timestamp, on_eval)
    with WorkspaceLock(iteration_dir.parent, "aggregate"):
        return aggregate_locked(iteration_dir, skill_name, skill_path, config_path, output, timestamp, on_eval)


def aggregate_locked(iteration_dir: Path, skill_name: str | None, skill_path: str | None,
                     config_path: Path | None, output: Path | None, timestamp: str | None,
                     on_eval: EvalsRead | None) -> AggregateResult:
    config = load_model(config_path, BenchmarkConfig) if config_path else None
    record = read_iteration_record(iteration_dir)
    json_path = output or iteration_dir / "benchmark.json"
    md_path = json_path.with_suffix(".md")
    if json_path.exists() and json_path.is_dir():
        raise InputError.one(json_path, "-o", "is a folder: give the path of the benchmark.json to write")
    remove_stale_temps(json_path.parent)
    with gc_paused(), read_iteration(iteration_dir, json_path.parent, on_eval) as read:
        if not read.runs_read:
            raise nothing_to_aggregate(iteration_dir, len(read.evals), read.run_folders, read.skipped)
        baseline_type = config.baseline_type if config else record.get("baseline_type")
        arms = choose_arms(read.configurations, baseline_type, iteration_dir)
        trials = planned_trials(config, record, read.trials_found)
        executor: dict[str, Any] = record["executor"] if isinstance(record.get("executor"), dict) else {}
        thresholds = config.thresholds if config else BenchmarkConfig().thresholds
        configs = list(dict.fromkeys([arms.skill, arms.baseline, *read.graded_configurations]))
        bench = summarize(
            with_arms(read.cells, configs), configs, read.tally,
            skill_name=skill_name or (config.skill_name if config else None)
            or default_skill_name(iteration_dir, record),
            skill_path=skill_path or (config.skill_path if config else None) or record.get("skill_path"),
            iteration=iteration_number(iteration_dir, record),
            timestamp=timestamp or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            trials_requested=trials, thresholds=thresholds, arms=arms,
            executor_model=executor.get("model"),
            notes=run_notes(read.skipped, read.warnings, read.configurations, arms),
            min_detectable_effect=(config or BenchmarkConfig()).min_detectable_effect,
            interval_reading=(config or BenchmarkConfig()).interval_reading)
        if (turns := section_of(read.turns, arms.skill, arms.baseline,
                                reading=(config or BenchmarkConfig()).interval_reading)) is not None:
            bench.turns = turns  # a multi-turn eval set's per-turn figures, as `run` writes them
        bench._write_runs = lambda fh: write_spooled_runs(fh, read.spooled)
        write_benchmark(json_path, bench)
    bench._write_runs = partial(_spool_gone, json_path)
    has_thresholds = any(v is not None for v in thresholds.model_dump().values())
    gate = evaluate(bench, thresholds) if has_thresholds or measurement_problems(bench) else None
    atomic_write_text(md_path, render_benchmark_md(bench, gate))
    return AggregateResult(bench, json_path, md_path, arms, read.runs_read, read.configurations,
                           read.skipped, read.warnings)
