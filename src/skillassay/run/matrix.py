"""A matrix run (issue 37): several agents (executor + model + options) measured in one
iteration. A thin layer over the one-agent machinery: each agent is prepared as a run of its own
(engine.prepare: its own Executor), planned and resumed in its own folder
`iteration-N/agents/<name>/` (a complete skill-creator iteration), and all agents' trials go
through ONE queue (schedule.execute_all) on the run's backend. Then each agent is aggregated
and gated as a one-agent run is, and the matrix is summarized across them (matrix.json,
report.md at the iteration's top)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from skillassay.analyze.arms import Arms
from skillassay.analyze.gate import GateResult, evaluate
from skillassay.errors import InputError
from skillassay.models import Benchmark
from skillassay.models.agents import AgentConfig
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.report.report_charts import ChartDrawer
from skillassay.run.backends import Backend
from skillassay.run.engine import (
    Prepared,
    Progress,
    RunRequest,
    TrialRunner,
    aggregate_and_write,
    baseline_skill,
    config_path,
    eval_name,
    interrupted_note,
    prepare,
    write_eval_metadata,
    write_iteration_record,
    write_snapshot,
)
from skillassay.run.interrupt import RunInterrupted, StopSignals, stop_requested
from skillassay.run.matrix_layout import AGENTS_DIR, agent_dir, record_snapshot, write_matrix_record
from skillassay.run.matrix_reuse import reuse_unchanged_agent
from skillassay.run.plan import IterationChoice, Trial, check_same_design, choose_iteration, hash_value, plan_trials
from skillassay.run.resume import split_finished
from skillassay.run.schedule import execute_all
from skillassay.run.stop import SameErrorStreak, stopped_early
from skillassay.store.jsonio import atomic_write_text, remove_stale_temps
from skillassay.store.layout import iteration_dir, linked_folders
from skillassay.store.lock import WorkspaceLock
from skillassay.store.records import TrialRecord, sort_records
from skillassay.store.writebehind import trial_file_sink
from skillassay.workflows.matrix_iteration import MatrixResult, summarize_and_write
from skillassay.workflows.report_iteration import Gated, write_report


@dataclass
class AgentOutcome:
    agent: AgentConfig
    dir: Path
    benchmark: Benchmark
    gate: GateResult
    executed: int
    skipped: int
    failed: int


@dataclass
class MatrixOutcome:
    iteration_dir: Path
    choice: IterationChoice
    agents: list[AgentOutcome]
    result: MatrixResult  # the summary across agents, matrix.json and report.md written
    hints: list[str] = field(default_factory=list)


@dataclass
class AgentPlan:
    agent: AgentConfig
    p: Prepared
    dir: Path
    arms: Arms
    runner: TrialRunner
    done: list[TrialRecord]
    todo: list[Trial]
    again: int
    reused: int = 0


class MatrixInterrupted(RunInterrupted):  # noqa: N818 - what happened, as RunInterrupted
    def message(self) -> str:
        kept = (f"{self.finished} finished trials are kept and aggregated in each agent's benchmark.json under "
                f"{self.iteration_dir / AGENTS_DIR}" if self.aggregated else
                "no trial had finished, so nothing was aggregated")
        return (f"interrupted: {kept}; {self.left} trials did not run or were stopped. Run the same command again "
                "to resume this iteration: finished trials are not run again")


UNSUPPORTED = (("adaptive", "--adaptive (or the config's `adaptive`)"), ("shard", "--shard"),
               ("baseline_from", "--baseline-from"), ("max_cost", "--max-cost (or the config's max_cost_usd)"))


def refuse_unsupported(req: RunRequest, p: Prepared) -> None:
    """What a matrix run does not do yet, refused before any trial runs (exit 2) rather than
    done for one agent and silently not for the others."""
    given = {"adaptive": req.adaptive or p.config.adaptive is not None, "shard": req.shard is not None,
             "baseline_from": req.baseline_from is not None,
             "max_cost": req.max_cost is not None or p.config.max_cost_usd is not None}
    for key, words in UNSUPPORTED:
        if given[key]:
            raise InputError.one(words.split(" ")[0], "agents", f"{words} is not supported with several agents yet: "
                                 "run each agent on its own (--executor/--model) for it")


def matrix_fingerprint(prepared: list[tuple[AgentConfig, Prepared]]) -> dict[str, str]:
    """What resumes a matrix iteration: the skill, the evals, and every agent's name, gate role
    and settings (its own fingerprint's). Another agent list is a new iteration, whose agents
    that did not change reuse their finished trials (run/matrix_reuse.py)."""
    first = prepared[0][1].fingerprint
    return {"skill": first["skill"], "evals": first["evals"],
            "agents": hash_value([[a.name, a.required, p.fingerprint["settings"]] for a, p in prepared])}


def run_matrix(req: RunRequest, agents: list[AgentConfig], progress: Progress | None = None,
               on_choice: Callable[[IterationChoice], None] | None = None) -> MatrixOutcome:
    progress = progress or Progress()
    prepared: list[tuple[AgentConfig, Prepared]] = []
    try:
        for i, agent in enumerate(agents):  # the inputs' notes once, not once per agent
            # each agent checked here; on Ray, one backend for all of them is opened below
            local = replace(agent_request(req, agent), backend="local", ray_address=None)
            prepared.append((agent, prepare(local, progress.notice if i == 0 else None)))
            if i == 0:
                refuse_unsupported(req, prepared[0][1])
        open_shared_backend(req, prepared)
    except BaseException:
        close_all(prepared)
        raise
    workspace = prepared[0][1].workspace
    lock = WorkspaceLock(workspace, "run")
    try:
        lock.acquire()
    except BaseException:
        close_all(prepared)
        raise
    drawer = ChartDrawer()
    try:
        return run_matrix_locked(req, prepared, progress, on_choice, drawer)
    finally:
        drawer.close()
        lock.release()
        close_all(prepared)


def open_shared_backend(req: RunRequest, prepared: list[tuple[AgentConfig, Prepared]]) -> None:
    """The run's backend, one for all agents: the local pool, or one Ray pool whose node actors
    run every agent's trials (run/ray_matrix.py), checked on every node for every agent."""
    config = prepared[0][1].config
    name = req.backend or config.backend or "local"
    if req.ray_address and name != "ray":
        raise InputError.one("--ray-address", req.ray_address,
                             "is only used with --backend ray (or `backend: ray` in the config)")
    if name == "local":
        return
    if name != "ray":
        raise InputError.one("--backend", name, "several agents run on the local pool or on Ray only")
    from skillassay.run.ray_matrix import open_matrix_ray

    shared = open_matrix_ray(req.ray_address or config.ray_address, [p.executor for _, p in prepared])
    for _, p in prepared:
        p.backend = shared


def backends_of(prepared: list[tuple[AgentConfig, Prepared]]) -> list[Backend]:
    """Each backend once (on Ray the agents share one)."""
    return list({id(p.backend): p.backend for _, p in prepared}.values())


def close_all(prepared: list[tuple[AgentConfig, Prepared]]) -> None:
    for _, p in prepared:
        p.executor.close()
    for backend in backends_of(prepared):
        backend.close()


def agent_request(req: RunRequest, agent: AgentConfig) -> RunRequest:
    from skillassay.run.agents import agent_request as make

    return make(req, agent)


def plan_agent(req: RunRequest, agent: AgentConfig, p: Prepared, top: Path, choice: IterationChoice,
               trials: int) -> AgentPlan:
    """One agent's part of the iteration, laid out and resumed as a one-agent run's: its record,
    its eval metadata, the trials its folder already holds read back, the rest to run."""
    folder = agent_dir(top, agent.name)
    base_config, base_skill = baseline_skill(p, top, choice)  # the previous iteration's top snapshot
    configurations = ["with_skill", base_config]
    slugs = [ev.slug for ev in p.evals.evals]
    if links := linked_folders(folder, slugs, configurations):
        raise InputError(links)
    if choice.resumed:
        check_same_design(folder, trials, None)
    for f in (folder, *(folder / slug for slug in slugs)):
        remove_stale_temps(f)
    write_iteration_record(folder, p, choice, trials, configurations, p.seed)
    write_eval_metadata(folder, p.evals.evals, p.input_files, p.file_hashes)
    reused = reuse_unchanged_agent(p.workspace, top, agent.name, folder, p.fingerprint, slugs, trials,
                                   configurations if p.config.baseline_type == "no_skill" else ["with_skill"])
    planned = plan_trials(p.evals.evals, configurations, trials, folder, p.seed)
    names = {ev.id: eval_name(ev) for ev in p.evals.evals}
    done, todo, again = split_finished(planned, folder, slugs, configurations, names)
    compiled = p.compiled
    runner = TrialRunner(p, {"with_skill": p.skill, base_config: base_skill}, compiled, req.retry, p.grader)
    return AgentPlan(agent, p, folder, Arms("with_skill", base_config), runner, done, todo, again, reused)


def one_queue(plans: list[AgentPlan]) -> list[Trial]:
    """Every agent's trials interleaved (one of each agent in turn): a run stopped part-way has
    measured every agent a little rather than the first ones fully."""
    lists = [plan.todo for plan in plans]
    out = [t for group in itertools.zip_longest(*lists) for t in group if t is not None]
    for plan in plans:
        plan.todo = []
    return out


class Dispatch:
    """The one queue's runner: each trial goes to its agent's TrialRunner (its Executor), found
    by the agent folder its run folder is in (run-K -> configuration -> eval -> agent)."""

    def __init__(self, plans: list[AgentPlan]) -> None:
        self.by_dir = {str(plan.dir): plan.runner for plan in plans}

    def __call__(self, trial: Trial) -> TrialRecord | None:
        return self.by_dir[str(trial.run_dir.parent.parent.parent)](trial)


def run_matrix_locked(req: RunRequest, prepared: list[tuple[AgentConfig, Prepared]], progress: Progress,
                      on_choice: Callable[[IterationChoice], None] | None, drawer: ChartDrawer) -> MatrixOutcome:
    p0 = prepared[0][1]
    for agent, p in prepared:
        if p.not_measured:
            from skillassay.executors import unmeasured_notice

            progress.notice(f"{agent.name}: {unmeasured_notice(p.executor.name, p.not_measured)}")
    if p0.sandbox_warning:
        progress.notice(p0.sandbox_warning)
    fingerprint = matrix_fingerprint(prepared)
    choice = choose_iteration(p0.workspace, fingerprint, req.iteration)
    if on_choice:
        on_choice(choice)
    top = iteration_dir(p0.workspace, choice.number)
    trials = req.trials or p0.config.trials_per_eval
    remove_stale_temps(p0.workspace)
    recorded = write_matrix_record(top, choice.number, fingerprint, p0,
                                   [(a, p.executor.identity()) for a, p in prepared], trials)
    record_snapshot(top, write_snapshot(top, p0.skill.path, recorded))  # the next iteration's previous_version
    plans = [plan_agent(req, agent, p, top, choice, trials) for agent, p in prepared]
    done = sum(len(plan.done) for plan in plans)
    todo = one_queue(plans)
    total = done + len(todo)
    again = sum(plan.again for plan in plans)
    message = (f"{choice.reason}; {len(plans)} agents ({', '.join(plan.agent.name for plan in plans)}) in one queue"
               + (f"; {again} trials that errored or timed out before run again" if again else ""))
    progress.start(len(todo), done, message)
    streak = SameErrorStreak(req.stop_after_same_errors)
    for plan in plans:
        plan.runner.streak = streak
    by_dir = {str(plan.dir): plan.agent.name for plan in plans}
    node_of = p0.backend.node_of

    def agent_of(run_dir: Path | None) -> str | None:  # the progress line's "on ...": the agent (and node)
        if run_dir is None:
            return None
        node = node_of(run_dir)
        name = by_dir.get(str(Path(run_dir).parent.parent.parent))
        return f"{name} ({node})" if node else name

    progress.node_of = agent_of
    concurrency = req.concurrency or p0.config.concurrency or max(p.backend.default_concurrency() for _, p in prepared)

    def stop_all() -> None:
        for backend in backends_of(prepared):
            backend.stop()

    dispatch = Dispatch(plans)
    with StopSignals(stop_all) as stop, trial_file_sink(len(todo), enabled=p0.backend.uses_sink) as sink:
        for plan in plans:
            plan.runner.sink = sink
        executed = execute_all(todo, dispatch, concurrency, progress, streak, None)
    for plan in plans:
        plan.runner.closed = True
    progress.finish()
    for _, p in prepared:
        p.executor.close()
    ran: dict[str, list[TrialRecord]] = {str(plan.dir): [] for plan in plans}
    for rec in executed:
        assert rec.run_dir is not None  # a record of a trial that ran names its folder
        ran[str(Path(rec.run_dir).parent.parent.parent)].append(rec)
    if stop.received is not None or stop_requested():
        kept = 0
        for plan in plans:
            records = sort_records(plan.done + ran[str(plan.dir)])
            kept += len(records)
            if records:
                aggregate_and_write(plan.dir, records, plan.p, choice.number, trials, plan.arms, req.strict,
                                    req.point_estimate, None, [interrupted_note(len(records), total // len(plans))])
        raise MatrixInterrupted(stop.received or 2, top, kept, total - kept, kept > 0)
    if streak.tripped:
        raise stopped_early(top, ", ".join(p.executor.name for _, p in prepared), streak, len(executed))
    outcomes = [finish_agent(req, plan, ran[str(plan.dir)], choice.number, trials, progress, drawer)
                for plan in plans]
    result = summarize_and_write(top)
    hints = [f"{plan.agent.name}: {plan.reused} finished trials reused from an earlier iteration with the same "
             "agent, skill and evals" for plan in plans if plan.reused]
    return MatrixOutcome(top, choice, outcomes, result, hints)


def finish_agent(req: RunRequest, plan: AgentPlan, executed: list[TrialRecord], number: int, trials: int,
                 progress: Progress, drawer: ChartDrawer) -> AgentOutcome:
    """One agent's figures, gate, benchmark.md and report.md, as a one-agent run writes them."""
    p = plan.p
    records = sort_records(plan.done + executed)
    for rec in records:
        if rec.configuration == "without_skill" and rec.skill_triggered:
            progress.notice(f"{plan.agent.name}: baseline contaminated: {rec.run_dir} loaded a skill named "
                            f"{p.skill.name} (the measurement is INVALID)")
    bench = aggregate_and_write(plan.dir, records, p, number, trials, plan.arms, req.strict, req.point_estimate)
    gate = evaluate(bench, p.config.thresholds, strict=req.strict, point_estimate=req.point_estimate,
                    not_measured=p.not_measured, executor=p.executor.name)
    atomic_write_text(plan.dir / "benchmark.md", render_benchmark_md(bench, gate))
    write_report(plan.dir, config_path(req), strict=req.strict, point_estimate=req.point_estimate, bench=bench,
                 drawer=drawer, gated=Gated(gate, p.config.thresholds))
    return AgentOutcome(plan.agent, plan.dir, bench, gate, len(executed), len(plan.done),
                        sum(1 for r in executed if not r.completed))
