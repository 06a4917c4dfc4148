"""`skillassay triggers`: does the description make the agent load the skill?

Load and check every input (exit 2 before any run), run each query K times with the skill (and
any --with-skills distractors) installed where the agent discovers skills, read from each run's
transcript which skills it loaded, and write triggers.json + triggers.md atomically."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillassay.analyze.gate import GateResult
from skillassay.errors import InputError
from skillassay.executors import Executor, ExecutorSettings, check_executor, load_executor_class
from skillassay.executors.base import TrialResult
from skillassay.models.triggers import TRIGGERS_SCHEMA_VERSION, QueryResult, TriggerGate, TriggerQuery, TriggerReport
from skillassay.run.stop import DEFAULT_LIMIT
from skillassay.sandbox import SandboxSpec
from skillassay.spec.skill import Skill, load_skill
from skillassay.store.jsonio import atomic_write_text, now_iso, write_json
from skillassay.store.layout import default_workspace
from skillassay.store.lock import WorkspaceLock
from skillassay.triggers import figures
from skillassay.triggers.gate import gate_triggers, headline
from skillassay.triggers.queries import default_queries_path, load_queries
from skillassay.triggers.report_md import render_triggers_md
from skillassay.triggers.runner import RunSpec, as_run, execute_runs, plan_runs

TRIGGERS_DIR = "triggers"
DEFAULT_RUNS = 3
DEFAULT_CONCURRENCY = 4


@dataclass
class TriggerRequest:
    skill_dir: Path
    queries_path: Path | None = None
    executor: str = "local"
    runs: int = DEFAULT_RUNS
    with_skills: Sequence[Path] = ()
    workspace: Path | None = None
    seed: int = 0
    concurrency: int = DEFAULT_CONCURRENCY
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: float = 300.0
    options: dict[str, Any] = field(default_factory=dict)
    min_recall: float | None = None
    max_false_rate: float | None = None
    strict: bool = False
    fail_fast: int = DEFAULT_LIMIT  # the stop rule's limit (run/stop.py); 0: never stop
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)  # resolved by the caller (auto: on first use)
    agents: list[str] = field(default_factory=list)  # --agent EXECUTOR[:MODEL]: two or more, triggers/agents.py


def load_others(paths: Sequence[Path], skill: Skill) -> tuple[Skill, ...]:
    others = tuple(load_skill(Path(p)) for p in paths)
    names = [skill.name, *(o.name for o in others)]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InputError.one(f"--with-skills {paths[i - 1]}", "name",
                                 f"a second skill named {name!r}: installed skills need distinct names")
    return others


def make_executor(req: TriggerRequest) -> Executor:
    """The executor, refused (exit 2) when it cannot run here or cannot tell which skill a run
    loaded: a trigger figure it would have to guess is no measurement."""
    cls = load_executor_class(req.executor)
    settings = ExecutorSettings(model=req.model, temperature=req.temperature, max_tokens=req.max_tokens,
                                timeout_seconds=req.timeout_seconds, options=dict(req.options), sandbox=req.sandbox)
    executor = cls(settings)
    check_executor(executor)
    if executor.skills_loaded(TrialResult(), ["probe"]) is None:
        raise InputError.one(f"--executor {req.executor}", "",
                             "this executor cannot report which skill a run loaded, so trigger evals cannot use it")
    return executor


def triggers_folder(req: TriggerRequest, skill: Skill) -> Path:
    workspace = Path(req.workspace) if req.workspace else default_workspace(req.skill_dir, skill.name)
    return workspace / TRIGGERS_DIR


def evaluate(executor: Executor, skills: tuple[Skill, ...], queries: list[TriggerQuery], indexes: Sequence[int],
             runs: int, seed: int, store: Path, concurrency: int,
             on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None,
             fail_fast: int = DEFAULT_LIMIT) -> list[QueryResult]:
    """Run (or resume) `indexes` of `queries` and summarise each, records under `store`."""
    specs = plan_runs(queries, indexes, runs, seed)
    done = execute_runs(executor, skills, specs, store, concurrency, on_done, fail_fast=fail_fast)
    name = skills[0].name
    results = []
    for i in indexes:
        found = [done[(i, k)] for k in range(1, runs + 1)]
        trial_runs = [as_run(rec, name, str(path.relative_to(store))) for rec, path in found]
        results.append(figures.query_result(i, queries[i], trial_runs, name))
    return results


def build_report(skill: Skill, others: tuple[Skill, ...], queries_path: Path, executor: Executor, runs: int,
                 seed: int, results: list[QueryResult], req: TriggerRequest) -> tuple[TriggerReport, GateResult]:
    counts = [figures.counts_of(q.runs, q.should_trigger) for q in results]
    recall, false_rate = figures.recall(counts), figures.false_trigger_rate(counts)
    gate = gate_triggers(recall, false_rate, results, min_recall=req.min_recall,
                         max_false_rate=req.max_false_rate, strict=req.strict)
    completed = sum(c.completed for c in counts)
    report = TriggerReport(
        schema_version=TRIGGERS_SCHEMA_VERSION, skill_name=skill.name, description=skill.description, queries_path=str(queries_path),
        executor=executor.identity(), runs_per_query=runs, seed=seed, other_skills=[o.name for o in others],
        generated_at=now_iso(), recall=recall, false_trigger_rate=false_rate, precision=figures.precision(counts),
        accuracy=figures.accuracy(counts), runs_completed=completed,
        runs_failed=sum(len(q.runs) for q in results) - completed, queries=results,
        misses=[q.index for q in results if q.outcome == "miss"],
        false_triggers=[q.index for q in results if q.outcome == "false_trigger"],
        shadowed_by=figures.shadowing(results, skill.name),
        gate=TriggerGate(**{**gate.to_dict(), "headline": headline(gate)}))
    return report, gate


def measure_triggers(req: TriggerRequest,
                     on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None,
                     ) -> tuple[TriggerReport, Path, GateResult]:
    """Returns (report, folder written to, gate)."""
    skill = load_skill(Path(req.skill_dir))
    others = load_others(req.with_skills, skill)
    queries_path = Path(req.queries_path) if req.queries_path else default_queries_path(req.skill_dir)
    queries = load_queries(queries_path)
    executor = make_executor(req)
    folder = triggers_folder(req, skill)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with WorkspaceLock(folder, "triggers"):
            results = evaluate(executor, (skill, *others), queries, range(len(queries)), req.runs, req.seed, folder,
                               req.concurrency, on_done, req.fail_fast)
            report, gate = build_report(skill, others, queries_path, executor, req.runs, req.seed, results, req)
            write_json(folder / "triggers.json", report)
            atomic_write_text(folder / "triggers.md", render_triggers_md(report))
    finally:
        executor.close()
    return report, folder, gate


__all__ = ["TriggerRequest", "build_report", "evaluate", "load_others", "make_executor", "measure_triggers"]
