"""`skillassay merge WS...`: the workspaces of `run --shard I/N` jobs into one iteration, then
aggregated, compared and gated exactly as `run` does after its trials, so the merged
benchmark.json is the one an unsharded run of the same outcomes writes.

Shards of different plans are refused (exit 2, naming the file and what differs): their trials
were run with another skill, eval set, settings or seed, and one set of figures over them would
mix two experiments. Each trial is taken from the shard that owns it (run/shard.py recomputes
the split), so a trial that several shards hold (reused from a cached iteration) counts once."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import GateResult, evaluate
from skillassay.errors import InputError
from skillassay.improve.history import record_after_run
from skillassay.models import Benchmark
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.run.plan import read_fingerprint
from skillassay.run.shard import PLAN_KEYS, SHARD_FILE, owners
from skillassay.store.benchmark_file import write_benchmark
from skillassay.store.iteration_files import find_config, load_config
from skillassay.store.jsonio import atomic_write_text, load_json_lenient, now_iso, write_json
from skillassay.store.layout import SNAPSHOT_DIR, checked_child, existing_iterations, iteration_dir, run_dir
from skillassay.store.lock import WorkspaceLock
from skillassay.store.read import read_trial
from skillassay.store.records import TrialRecord, sort_records
from skillassay.store.remembered import remember_iterations
from skillassay.workflows.compare_on_disk import compare_after_run
from skillassay.workflows.gate_iteration import not_measured
from skillassay.workflows.report_iteration import Gated, write_report


@dataclass
class MergeOutcome:
    iteration_dir: Path
    benchmark: Benchmark
    gate: GateResult
    comparison: dict[str, Any] | None
    shards: int
    trials: int


@dataclass(frozen=True)
class ShardOnDisk:
    iteration: Path  # the shard's iteration folder (holds shard.json)
    record: dict[str, Any]

    @property
    def file(self) -> Path:
        return self.iteration / SHARD_FILE


def shard_iteration(folder: Path) -> Path:
    """The iteration of a shard workspace that holds shard.json (its latest such), or the folder
    itself when it is that iteration."""
    if (folder / SHARD_FILE).is_file():
        return folder
    for number in reversed(existing_iterations(folder)):
        if (iteration_dir(folder, number) / SHARD_FILE).is_file():
            return iteration_dir(folder, number)
    raise InputError.one(folder, SHARD_FILE, "no shard here: not a workspace (or iteration) written by "
                         "`skillassay run --shard I/N`")


def read_shard(folder: Path) -> ShardOnDisk:
    it = shard_iteration(folder)
    record = load_json_lenient(it / SHARD_FILE)
    if not isinstance(record, dict):
        raise InputError.one(it / SHARD_FILE, "", "not a JSON object")
    for key in ("index", "count", "iteration", "trials_per_eval"):
        if not isinstance(record.get(key), int) or isinstance(record.get(key), bool) or record[key] < 1:
            raise InputError.one(it / SHARD_FILE, key, "missing or not a positive whole number")
    configs, order = record.get("configurations"), record.get("eval_order")
    if not (isinstance(configs, list) and len(configs) == 2 and all(isinstance(c, str) for c in configs)):
        raise InputError.one(it / SHARD_FILE, "configurations", "expected the two arms' names")
    if not (isinstance(order, list) and order and all(isinstance(e, dict) and isinstance(e.get("slug"), str)
                                                      and isinstance(e.get("id"), int) for e in order)):
        raise InputError.one(it / SHARD_FILE, "eval_order", "expected a list of {id, slug}")
    if read_fingerprint(it) != {k: record.get(k) for k in ("skill", "evals", "settings")}:
        raise InputError.one(it / "iteration.json", "fingerprint", f"does not match {it / SHARD_FILE}: the "
                             "iteration was run again with other inputs after this shard")
    return ShardOnDisk(it, record)


def check_same_plan(shards: list[ShardOnDisk]) -> None:
    """Every shard of one plan, each once, all present."""
    first = shards[0]
    for other in shards[1:]:
        for key in (*PLAN_KEYS, "eval_order", "iteration"):
            if other.record.get(key) != first.record.get(key):
                raise InputError.one(other.file, key, f"{_short(other.record.get(key))} here, "
                                     f"{_short(first.record.get(key))} in {first.file}: these shards belong to "
                                     f"different plans (a different {key}), so their trials cannot make one "
                                     "iteration; run every shard from the same commit and settings")
    count = first.record["count"]
    seen = Counter(s.record["index"] for s in shards)
    if dupes := sorted(i for i, n in seen.items() if n > 1):
        raise InputError.one(first.file, "index", f"shard {dupes[0]}/{count} given more than once")
    if missing := sorted(set(range(1, count + 1)) - set(seen)):
        raise InputError.one(first.file, "count", f"shards {', '.join(f'{i}/{count}' for i in missing)} "
                             f"missing: give all {count} shard workspaces")
    if extra := sorted(i for i in seen if i > count):
        raise InputError.one(first.file, "index", f"shard {extra[0]}/{count} is past the shard count")


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


def merge_shards(folders: list[Path], workspace: Path, *, strict: bool = False,
                 point_estimate: bool = False) -> MergeOutcome:
    if not folders:
        raise InputError.one("WORKSPACES", "", "give the shard workspaces to merge")
    shards = [read_shard(f) for f in folders]
    check_same_plan(shards)
    lock = WorkspaceLock(workspace, "merge")
    lock.acquire()
    try:
        remember_iterations(*(s.iteration for s in shards))  # what a shard masked stays masked here
        return _merge_locked(sorted(shards, key=lambda s: s.record["index"]), workspace, strict, point_estimate)
    finally:
        lock.release()


def _merge_locked(shards: list[ShardOnDisk], workspace: Path, strict: bool, point_estimate: bool) -> MergeOutcome:
    plan = shards[0].record
    number, trials, configs = plan["iteration"], plan["trials_per_eval"], plan["configurations"]
    it = iteration_dir(workspace, number)
    there = read_fingerprint(it)
    if there and there != read_fingerprint(shards[0].iteration):
        raise InputError.one(it / "iteration.json", "fingerprint", f"{it} was run with other inputs than these "
                             "shards: merge into another --workspace")
    slugs = [checked_child(it, e["slug"]).name for e in plan["eval_order"]]
    for config in configs:
        checked_child(it, config)
    who = owners(slugs, configs, trials, plan["count"])
    _copy_common(shards[0], shards, it)
    records: list[TrialRecord] = []
    for e, slug in zip(plan["eval_order"], slugs, strict=True):
        name = _eval_name(it / slug, slug)
        for config in configs:
            for k in range(1, trials + 1):
                source = run_dir(shards[who[(slug, config, k)] - 1].iteration, slug, config, k)
                target = run_dir(it, slug, config, k)
                if not (source / "grading.json").is_file():
                    raise InputError.one(source, "grading.json", f"shard {who[(slug, config, k)]}/{plan['count']} "
                                         "did not finish this trial (stopped or failed?): run that shard again")
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(source, target, symlinks=True)
                rec, _ = read_trial(str(target), e["id"], name, config, k)
                if rec is None:
                    raise InputError.one(source / "grading.json", "", "unreadable: run that shard again")
                records.append(rec)
    return _gate(workspace, it, sort_records(records), plan, strict, point_estimate, len(shards))


def _copy_common(first: ShardOnDisk, shards: list[ShardOnDisk], it: Path) -> None:
    """iteration.json (with every shard's remembered secrets), the skill snapshot, eval metadata."""
    it.mkdir(parents=True, exist_ok=True)
    record = load_json_lenient(first.iteration / "iteration.json")
    record = dict(record) if isinstance(record, dict) else {}
    others = [load_json_lenient(s.iteration / "iteration.json") for s in shards[1:]]
    record["redacted_secrets_shards"] = [o.get("redacted_secrets") for o in others if isinstance(o, dict)]
    record["merged_from_shards"] = first.record["count"]
    write_json(it / "iteration.json", record)
    snap = first.iteration / SNAPSHOT_DIR
    if snap.is_dir() and not (it / SNAPSHOT_DIR).exists():
        shutil.copytree(snap, it / SNAPSHOT_DIR, symlinks=True)
    for e in first.record["eval_order"]:
        meta = first.iteration / e["slug"] / "eval_metadata.json"
        if meta.is_file():
            (it / e["slug"]).mkdir(exist_ok=True)
            shutil.copy2(meta, it / e["slug"] / "eval_metadata.json")


def _eval_name(folder: Path, slug: str) -> str:
    meta = load_json_lenient(folder / "eval_metadata.json")
    name = meta.get("eval_name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else slug


def _gate(workspace: Path, it: Path, records: list[TrialRecord], plan: dict[str, Any], strict: bool,
          point_estimate: bool, n_shards: int) -> MergeOutcome:
    """What run_locked does after its trials (aggregate, history, compare, gate, report), on the merged records."""
    record = load_json_lenient(it / "iteration.json")
    record = record if isinstance(record, dict) else {}
    cfg = find_config(it)
    config = load_config(cfg)
    executor: dict[str, Any] = record["executor"] if isinstance(record.get("executor"), dict) else {}
    bench = build_benchmark(
        records, skill_name=str(record.get("skill_name") or workspace.name), skill_path=record.get("skill_path"),
        iteration=plan["iteration"], timestamp=now_iso(), trials_requested=plan["trials_per_eval"],
        thresholds=config.thresholds, arms=Arms(*plan["configurations"]), executor_model=executor.get("model"),
        min_detectable_effect=config.min_detectable_effect)
    write_benchmark(it / "benchmark.json", bench)
    record_after_run(workspace, it, records)
    comparison = compare_after_run(it, records, cfg)
    name, unmeasurable = not_measured(it, config.thresholds)
    gate = evaluate(bench, config.thresholds, strict=strict, point_estimate=point_estimate, comparison=comparison,
                    not_measured=unmeasurable, executor=name)
    atomic_write_text(it / "benchmark.md", render_benchmark_md(bench, gate))
    write_report(it, cfg, strict=strict, point_estimate=point_estimate, bench=bench,
                 gated=Gated(gate, config.thresholds))
    return MergeOutcome(it, bench, gate, comparison, n_shards, len(records))
