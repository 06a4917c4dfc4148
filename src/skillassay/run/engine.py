"""`skillassay run`: plan -> execute -> grade -> aggregate -> gate, resumable.

The only module that chains stages; each stage is usable alone. Trials run in a bounded
thread pool; a trial's grading.json is written last, so its presence means "done" and a
killed run loses nothing that finished. A trial that errored or timed out is not a result:
the next run archives it (reuse.archive_failed_attempt) and runs it again."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import NOT_GATED, GateResult, evaluate
from skillassay.errors import InputError
from skillassay.executors import (
    Executor,
    ExecutorSettings,
    load_executor_class,
    unmeasurable_thresholds,
    unmeasured_notice,
)
from skillassay.executors.pricing import price_table
from skillassay.grade.grader import (
    CompiledExpectation,
    Grader,
    compile_expectations,
    grade_or_fail,
    make_grader,
    require_judge,
    run_view,
)
from skillassay.improve.history import record_after_run
from skillassay.models import Adaptive, Benchmark, BenchmarkConfig, Eval, EvalMetadata, EvalSet
from skillassay.models.config import SandboxConfig
from skillassay.report.benchmark_md import render_benchmark_md
from skillassay.report.report_charts import ChartDrawer
from skillassay.run.backends import Backend, open_backend
from skillassay.run.budget import budget_gate, budget_stop, open_budget
from skillassay.run.execute import RetryPolicy, token_note
from skillassay.run.interrupt import RunInterrupted, StopSignals, stop_requested
from skillassay.run.plan import (
    IterationChoice,
    Trial,
    check_same_design,
    choose_iteration,
    hash_file,
    hash_tree,
    hash_value,
    plan_trials,
)
from skillassay.run.preflight import check_inputs, find_config
from skillassay.run.resume import split_finished
from skillassay.run.reuse import (
    SKILL_PROVENANCE,
    reuse_baseline,
    reuse_hint,
    reuse_unchanged_skill_runs,
)
from skillassay.run.schedule import execute_all
from skillassay.run.shard import Shard, refuse_adaptive, shard_record, shard_share, write_shard_record
from skillassay.run.stop import DEFAULT_LIMIT, SameErrorStreak, stopped_early
from skillassay.run.turns import refuse_single_turn_executor
from skillassay.sandbox import Resolved, resolve, sandbox_spec
from skillassay.spec.skill import Skill, load_skill
from skillassay.store.benchmark_file import write_benchmark
from skillassay.store.jsonio import (
    atomic_write_text,
    json_entry,
    now_iso,
    read_json,
    remove_stale_temps,
    write_json,
)
from skillassay.store.layout import (
    SNAPSHOT_DIR,
    checked_child,
    copy_skill_tree,
    default_workspace,
    iteration_dir,
    linked_folders,
    outside_links,
    remove_tree,
)
from skillassay.store.lock import WorkspaceLock
from skillassay.store.read import make_record, read_trial
from skillassay.store.records import TrialRecord, sort_records
from skillassay.store.redact import copy_redacted, disk_redactor, known_values, register_env_option
from skillassay.store.secret_hashes import new_record
from skillassay.store.writebehind import DIRECT, Collect, FileSink, trial_file_sink
from skillassay.versions import registered_name, versions
from skillassay.workflows.compare_on_disk import compare_after_run
from skillassay.workflows.report_iteration import Gated, write_report


@dataclass
class RunRequest:
    skill_dir: Path
    evals_path: Path | None = None
    config_path: Path | None = None
    trials: int | None = None
    executor: str | None = None
    workspace: Path | None = None
    iteration: int | None = None
    concurrency: int | None = None
    timeout_seconds: float | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    executor_options: dict = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    strict: bool = False
    point_estimate: bool = False
    judge: str | None = None  # none/local/openai/anthropic: grades plain-string expectations
    judge_samples: int = 1
    judge_model: str | None = None  # openai/anthropic judge (default: SKILLASSAY_JUDGE_MODEL, then judge.py's)
    baseline_from: str | Path | None = None  # an iteration whose baseline runs are reused (reuse.py)
    stop_after_same_errors: int = DEFAULT_LIMIT  # stop.py: the first N trials failing alike stop the run (0: never)
    adaptive: bool = False  # trials in rounds until every gate is settled (run/adaptive.py); also on when the config has `adaptive`
    backend: str | None = None  # where trials run: local (thread pool, default) or ray (run/backends.py)
    ray_address: str | None = None  # what ray.init(address=...) takes; None: a local Ray instance
    sandbox: str | None = None  # auto/none/bwrap/docker (sandbox/): over the config's `sandbox`
    sandbox_image: str | None = None  # with docker: the image, over the config's
    allow_weak_judge: bool = False  # grade with a judge below judge_check.FLOOR (the report says so)
    max_cost: float | None = None  # USD the iteration never passes (run/budget.py); over the config's max_cost_usd
    shard: Shard | None = None  # run only this share of the planned trials (run/shard.py); `merge` gives the verdict
    agents: list[str] = field(default_factory=list)  # --agent EXECUTOR[:MODEL]: a matrix run (run/matrix.py)


@dataclass
class RunOutcome:
    iteration_dir: Path
    choice: IterationChoice
    benchmark: Benchmark
    gate: GateResult
    executed: int
    skipped: int
    failed: int
    records: list[TrialRecord]
    comparison: dict | None = None  # vs the previous iteration (compare.py)
    hints: list[str] = field(default_factory=list)  # what would make the next run cheaper (reuse.reuse_hint)
    shard: Path | None = None  # a shard's shard.json: its figures cover its share only, and nothing was gated


class Progress:
    """Callbacks the CLI implements (rich bar or plain lines); the engine stays UI-free."""

    node_of: Callable[[Path | None], str | None] | None = None  # the node a trial ran on (Ray), set by the engine

    def notice(self, message: str) -> None: ...
    def start(self, total: int, skipped: int, message: str) -> None: ...
    def trial_done(self, record: TrialRecord) -> None: ...
    def finish(self) -> None: ...


@dataclass
class Prepared:
    skill: Skill
    evals: EvalSet
    evals_path: Path
    config: BenchmarkConfig
    executor: Executor
    workspace: Path
    input_files: dict[int, list[Path]]
    fingerprint: dict[str, str]
    grader: Grader
    config_path: Path | None = None
    compiled: dict[int, list[CompiledExpectation]] = field(default_factory=dict)
    not_measured: list[str] = field(default_factory=list)  # thresholds the executor cannot measure
    seed: int = 0
    file_hashes: dict[Path, str] = field(default_factory=dict)  # sha256 of each input file, read once
    backend: Backend = field(default_factory=Backend)  # where each trial's executor runs
    sandbox_warning: str | None = None  # auto found no sandbox: said before the trials
    judge_check: dict[str, Any] | None = None  # the judge's measured agreement (grade/judge_check.py)


def config_path(req: RunRequest) -> Path | None:
    return find_config(req.skill_dir, req.config_path)


def prepare(req: RunRequest, notice: Callable[[str], None] | None = None) -> Prepared:
    """The inputs through the one validation path `validate` uses too (run/preflight.py),
    then the executor: built, and asked whether it can run here, before any trial is spent."""
    inputs = check_inputs(req.skill_dir, req.evals_path, req.config_path, judge=req.judge)
    assert inputs is not None  # require_evals: an eval set or an InputError
    skill, config, evals, evals_path = inputs.skill, inputs.config, inputs.evals, inputs.evals_path
    if links := outside_links(skill.path):  # before hashing or copying anything of it
        raise InputError(links)
    if notice is not None:
        for note in inputs.notes():
            notice(note)
    name = req.executor or config.executor or "local"
    register_env_option(req.executor_options)  # `-o env=...`: masked in every file from now on
    executor_class = load_executor_class(name)  # loaded once: run_sandbox asks it for its program
    refuse_single_turn_executor(executor_class, name, evals, evals_path)
    resolved = run_sandbox(req, config, executor_class, inputs.config_path)
    settings = ExecutorSettings(
        sandbox=resolved.spec, skill_under_test=skill.name,
        model=req.model or config.model,
        temperature=req.temperature if req.temperature is not None else config.temperature,
        max_tokens=req.max_tokens or config.max_tokens,
        timeout_seconds=req.timeout_seconds or config.timeout_seconds or 300.0,
        options=dict(req.executor_options), prices=price_table(config.model_dump()["prices"]),
    )
    executor = executor_class(settings)
    backend: Backend | None = None
    try:  # the executor is checked where it will run: here, or on every node (preflight)
        backend_name = req.backend or config.backend or "local"
        if req.ray_address and backend_name != "ray":  # else the trials would run here, unsaid
            raise InputError.one("--ray-address", req.ray_address,
                                 "is only used with --backend ray (or `backend: ray` in the config)")
        backend = open_backend(backend_name, req.ray_address or config.ray_address, executor)
        if settings.model and (refused := type(executor).model_problem(settings.model)):  # after a missing extra
            where = ("--model", "") if req.model else (str(inputs.config_path), "$.model")
            raise InputError.one(*where, f"{settings.model}: {refused}")  # before it is recorded as what ran
        grader = make_grader(req.judge, req.judge_model, req.judge_samples)
        require_judge(evals.evals, evals_path, grader)
        judge_check = None
        if grader.judge is not None:  # measured before its verdicts count (refused below the floor)
            from skillassay.grade.judge_check import judge_record

            judge_check = judge_record(grader, evals.evals, req.allow_weak_judge, notice)
    except BaseException:
        executor.close()
        if backend is not None:
            backend.close()
        raise
    input_files = inputs.input_files
    file_hashes = {f: hash_file(f) for files in input_files.values() for f in files}
    files_hash = hash_value({k: [str(f) + file_hashes[f][:16] for f in v] for k, v in input_files.items()})
    seed = req.seed if req.seed is not None else (config.seed or 0)
    fingerprint = {
        "skill": hash_tree(skill.path),
        "evals": hash_value(evals.model_dump(mode="json")) + ":" + files_hash[:16],
        "settings": hash_value({**executor.identity(), "seed": seed,
                                "baseline_type": config.baseline_type, **judge_identity(grader, req.judge_samples)}),
    }
    workspace = req.workspace or default_workspace(req.skill_dir, skill.name)
    return Prepared(skill, evals, evals_path, config, executor, workspace, input_files, fingerprint, grader,
                    inputs.config_path, inputs.compiled,
                    unmeasurable_thresholds(executor, config.thresholds.model_dump()), seed, file_hashes, backend,
                    resolved.warning, judge_check)


def run_sandbox(req: RunRequest, config: BenchmarkConfig, executor_class: type[Executor],
                config_path: Path | None) -> Resolved:
    """The sandbox the trials run in, decided once here (auto probed, docker's daemon, image
    and the agent's program checked: exit 2 naming what is missing, in the config file by key)."""
    given = config.sandbox.model_dump() if isinstance(config.sandbox, SandboxConfig) else config.sandbox
    spec = sandbox_spec(req.sandbox, given, str(config_path) if config_path else "config", "$.sandbox")
    if req.sandbox_image:
        spec = replace(spec, image=req.sandbox_image)
        spec = sandbox_spec(None, spec.__dict__, "--sandbox-image")
    binary = getattr(executor_class, "binary", None)  # an agent CLI's: it must run in docker
    return resolve(spec, [binary, "--version"] if binary else None)


def judge_identity(grader: Grader, samples: int) -> dict[str, object]:
    """A judge grades results, so changing it (or a hosted judge's model) starts a new
    iteration; without one the fingerprint is what it always was (existing workspaces keep
    resuming). The embedded judge's model is fixed, so it is left out, as it always was."""
    if grader.judge is None:
        return {}
    identity = grader.judge.identity()
    out: dict[str, object] = {"judge": identity["judge"], "judge_samples": samples}
    if identity["judge"] != "local":
        out["judge_model"] = identity.get("model")
    return out


def baseline_skill(p: Prepared, it_dir: Path, choice: IterationChoice) -> tuple[str, Skill | None]:
    if p.config.baseline_type == "no_skill":
        return "without_skill", None
    prev = it_dir.parent / f"iteration-{choice.number - 1}" / SNAPSHOT_DIR
    if not (prev / "SKILL.md").is_file():
        raise InputError.one("baseline_type", "previous_version",
                             f"no previous skill snapshot at {prev}: run a no_skill iteration first")
    return "old_skill", load_skill_snapshot(prev, p.skill.name)


def load_skill_snapshot(path: Path, name: str) -> Skill:
    s = load_skill(path)
    return Skill(path=s.path, name=name, description=s.description, body=s.body, frontmatter=s.frontmatter)


def adaptive_settings(req: RunRequest, config: BenchmarkConfig) -> Adaptive | None:
    """The adaptive design, or None for a fixed one: the config's `adaptive` block, or its
    defaults under --adaptive; --trials then sets the maximum (the flag's one number)."""
    if not req.adaptive and config.adaptive is None:
        return None
    settings = config.adaptive or Adaptive()
    if req.trials:
        settings = settings.model_copy(update={
            "max_trials_per_eval": req.trials,
            "min_trials_per_eval": min(settings.min_trials_per_eval, req.trials)})
    return settings


def write_iteration_record(it_dir: Path, p: Prepared, choice: IterationChoice, trials: int,
                           configurations: list[str], seed: int, adaptive: Adaptive | None = None) -> None:
    record_path = it_dir / "iteration.json"
    previous = read_json(record_path) if record_path.is_file() else {}
    previous = previous if isinstance(previous, dict) else {}
    recorded = previous.get("snapshot_sha256")
    started = previous.get("started_at")
    started = started if isinstance(started, str) else None
    record = {
        "schema_version": 1, "iteration": choice.number, "started_at": started or now_iso(),
        "fingerprint": p.fingerprint, "skill_name": p.skill.name, "skill_path": str(p.skill.path),
        "evals_path": str(p.evals_path.resolve()), "executor": p.executor.identity(),
        "trials_per_eval": trials, "configurations": configurations, "seed": seed,
        "baseline_type": p.config.baseline_type,
        "config_path": str(p.config_path) if p.config_path else None,
        "snapshot_sha256": recorded, "sandbox": p.executor.settings.sandbox.record(),
        **({"adaptive": adaptive.model_dump()} if adaptive else {}),
        # The secrets masked in this run, as salted hashes: later commands mask them too.
        "redacted_secrets": new_record(known_values(), previous.get("redacted_secrets")),
        **({"executor_runtime": runtime} if (runtime := p.executor.runtime()) else {}),
        **({"judge_check": p.judge_check} if p.judge_check else {}),
        "versions": versions(p.executor.name, (c.plugin.type_name for cs in p.compiled.values() for c in cs
                                               if c.plugin is not None), (p.grader.identity() or {}).get("judge"),
                             sandbox=p.executor.settings.sandbox.kind, backend=registered_name("backends", type(p.backend))),
    }
    write_json(record_path, record)  # first, so a run killed while copying the skill resumes this iteration
    snapshot_hash = write_snapshot(it_dir, p.skill.path, recorded)
    if snapshot_hash != recorded:
        write_json(record_path, {**record, "snapshot_sha256": snapshot_hash})


def write_snapshot(it_dir: Path, skill_path: Path, recorded: object) -> str:
    """The skill as measured, in skill-snapshot/, and its hash. It is the next iteration's
    previous_version baseline, so a copy cut short by a kill must never pass for it: the copy
    goes to a temporary folder renamed into place, and a snapshot found on resume is kept only
    when it hashes to what iteration.json recorded (else it is copied again: resuming means the
    skill's fingerprint is unchanged, so a new copy is the same version)."""
    snap = it_dir / SNAPSHOT_DIR
    if snap.is_dir() and not snap.is_symlink() and recorded == hash_tree(snap):
        return str(recorded)
    it_dir.mkdir(parents=True, exist_ok=True)
    for stale in it_dir.glob(f".{SNAPSHOT_DIR}.*.tmp"):  # a killed copy's; we hold the workspace lock
        remove_tree(stale, it_dir)
    tmp = checked_child(it_dir, f".{SNAPSHOT_DIR}.{os.getpid()}.tmp")
    copy_skill_tree(skill_path, tmp, copy_file=copy_redacted)
    if snap.exists() or snap.is_symlink():
        remove_tree(snap, it_dir)
    os.replace(tmp, snap)
    return hash_tree(snap)


def write_eval_metadata(it_dir: Path, evals: list[Eval], input_files: dict[int, list[Path]] | None = None,
                        file_hashes: dict[Path, str] | None = None) -> None:
    """`files` and their sha256 ride along (extra fields), so `compare` can tell an eval whose
    input files changed from the same eval (analyze/compare.eval_content)."""
    for ev in evals:
        path = it_dir / ev.slug / "eval_metadata.json"
        extra = {} if input_files is None else {
            "files": list(ev.files),
            "files_sha256": {rel: (file_hashes or {}).get(f) or hash_file(f)
                             for rel, f in zip(ev.files, input_files.get(ev.id, []), strict=False)}}
        meta = EvalMetadata(eval_id=ev.id, eval_name=eval_name(ev), prompt=ev.prompt,  # a conversation's: + turns
                            expectations=ev.all_expectations(), **extra, **({"turns": ev.turns} if ev.turns else {}))
        write_json(path, meta)


def eval_name(ev: Eval) -> str:
    return ev.name or ev.slug


class TrialRunner:
    """Executes and grades one trial; shared by the worker threads."""

    def __init__(self, p: Prepared, skills: dict[str, Skill | None],
                 compiled: dict[int, list[CompiledExpectation]], retry: RetryPolicy,
                 grader: Grader | None = None) -> None:
        self.p, self.skills, self.compiled, self.retry = p, skills, compiled, retry
        self.grader = grader or Grader()
        self.redactor = disk_redactor().text  # the answer graded is the answer on disk
        self.eval_dir = p.evals_path.parent
        self.streak = SameErrorStreak(0)  # run_locked's; while it is unproven, one attempt per trial
        self.sink: FileSink = DIRECT  # run_locked's trial_file_sink while trials run
        self.token_warnings: list[Path] = []  # trials whose agent's own token counts disagreed
        self.closed = False  # set when the trial phase is over: a trial left running then is never committed
        # Evals whose grading reads the run folder (a check that opens files, the judge): their
        # files are on disk before grading, whatever the sink (store/writebehind.py).
        self.reads_folder = {eval_id: any(e.plugin is None or e.plugin.reads_run_folder for e in exps)
                             for eval_id, exps in compiled.items()}

    def __call__(self, trial: Trial) -> TrialRecord | None:
        """The trial's record, or None when the run was stopped while it ran (nothing committed)."""
        retry = replace(self.retry, attempts=1) if self.streak.unproven else self.retry
        retry = replace(retry, give_up=self.streak.give_up())
        pending = Collect()
        result, metrics, timing = self.p.backend.execute(
            trial, self.p.executor, self.skills[trial.configuration],
            self.p.input_files.get(trial.eval.id, []), retry, self.redactor, pending)
        if self.closed or stop_requested():  # its agent may have been killed by the stop: not a result
            return None
        if result.usage.warning:
            self.token_warnings.append(trial.run_dir)
        if self.reads_folder[trial.eval.id] and pending.files:
            self.sink.submit(pending.files)
            self.sink.sync()
            pending.files = []
        view = run_view(trial.run_dir, metrics, timing, trial.eval.prompt, self.eval_dir,
                        final_text=result.final_text, turn_answers=[(t.prompt, t.final_text) for t in result.turns],
                        # a capped listing cannot say a file is absent: grading looks on disk then
                        listed_outputs=metrics.files_created if metrics.files_created_total is None else None)
        grading = grade_or_fail(self.compiled[trial.eval.id], view, metrics.status or "ok", result.error,
                                self.grader, timing)
        if self.closed or stop_requested():  # a check's process may have been killed by the stop
            return None
        run_s = os.fspath(trial.run_dir)  # string paths on the hot path (pathlib's joins cost more than the write)
        # grading.json last, atomically: it commits the trial
        self.sink.submit([*pending.files, json_entry(f"{run_s}/timing.json", timing, self.redactor),
                          json_entry(f"{run_s}/grading.json", grading, self.redactor, atomic=True)])
        return make_record(trial.eval.id, eval_name(trial.eval), trial.configuration, trial.run_number,
                           grading, metrics, timing, trial.run_dir)


def run_benchmark(req: RunRequest, progress: Progress | None = None,
                  on_choice: Callable[[IterationChoice], None] | None = None) -> RunOutcome:
    """Everything from choosing the iteration to the report runs under the workspace lock: a
    second run on the same workspace fails at once (exit 2) instead of executing the same trials
    into the same run folders. Taken once per command, so the per-trial path is unchanged."""
    p = prepare(req, (progress or Progress()).notice)
    lock = WorkspaceLock(p.workspace, "run")
    try:
        lock.acquire()
    except BaseException:
        p.executor.close()  # prepare built it (an HTTP client, say) and nothing else will close it
        p.backend.close()
        raise
    drawer = ChartDrawer()  # imports matplotlib while the trials run; gone when run returns
    try:
        return run_locked(req, p, progress or Progress(), on_choice, drawer)
    finally:
        drawer.close()
        lock.release()
        p.backend.close()


def run_locked(req: RunRequest, p: Prepared, progress: Progress,
               on_choice: Callable[[IterationChoice], None] | None, drawer: ChartDrawer | None = None) -> RunOutcome:
    compiled = p.compiled or {ev.id: compile_expectations(ev, p.evals_path) for ev in p.evals.evals}
    if p.not_measured:
        progress.notice(unmeasured_notice(p.executor.name, p.not_measured))
    if p.sandbox_warning:
        progress.notice(p.sandbox_warning)
    choice = choose_iteration(p.workspace, p.fingerprint, req.iteration)
    if on_choice:
        on_choice(choice)
    it_dir = iteration_dir(p.workspace, choice.number)
    adaptive = adaptive_settings(req, p.config)
    trials = adaptive.max_trials_per_eval if adaptive else req.trials or p.config.trials_per_eval
    refuse_adaptive(req.shard, adaptive)
    seed = p.seed
    base_config, base_skill = baseline_skill(p, it_dir, choice)  # reads the previous iteration only
    configurations = ["with_skill", base_config]
    if links := linked_folders(it_dir, [ev.slug for ev in p.evals.evals], configurations):
        raise InputError(links)  # before anything is written or deleted there
    if choice.resumed:
        check_same_design(it_dir, trials, adaptive.model_dump() if adaptive else None)
    for folder in (p.workspace, it_dir, *(it_dir / ev.slug for ev in p.evals.evals)):
        remove_stale_temps(folder)  # what a killed run or aggregation left half-written
    write_iteration_record(it_dir, p, choice, trials, configurations, seed, adaptive)
    write_eval_metadata(it_dir, p.evals.evals, p.input_files, p.file_hashes)
    slugs = [ev.slug for ev in p.evals.evals]
    reuse_baseline(req.baseline_from, p.workspace, it_dir, p.fingerprint, base_config, slugs, trials)
    skill_reuse = reuse_unchanged_skill_runs(p.workspace, it_dir, p.fingerprint, slugs, trials)

    planned = shard_share(plan_trials(p.evals.evals, configurations, trials, it_dir, seed), configurations, trials,
                          req.shard)
    names = {ev.id: eval_name(ev) for ev in p.evals.evals}
    done, todo, again = split_finished(planned, it_dir, slugs, configurations, names, read_trial)
    del planned  # memory stays flat on big suites: each Trial is dropped once it has run

    runner = TrialRunner(p, {"with_skill": p.skill, base_config: base_skill}, compiled, req.retry,
                         p.grader)
    message = choice.reason + (f"; {again} trials that errored or timed out before run again" if again else "")
    if adaptive:
        message += f"; adaptive: at most {len(todo)} trials, in rounds, until every gate is decided or settled"
    progress.start(len(todo), len(done), message)
    streak = runner.streak = SameErrorStreak(req.stop_after_same_errors)
    budget = open_budget(p.config.max_cost_usd if req.max_cost is None else req.max_cost, p.executor, done)
    progress.node_of = p.backend.node_of
    concurrency = req.concurrency or p.config.concurrency or p.backend.default_concurrency()
    design: dict | None = None
    total = len(done) + len(todo)
    # Every trial's files are on disk when this block ends (the sink waits for its writer).
    with StopSignals(p.backend.stop) as stop, trial_file_sink(len(todo), enabled=p.backend.uses_sink) as runner.sink:
        if adaptive:
            from skillassay.run.adaptive import (  # a fixed design needs none of it
                design_record,
                questions_for,
                run_rounds,
            )

            questions = questions_for(p.config.thresholds)
            rounds = run_rounds(todo, done, adaptive, questions, ("with_skill", base_config),
                                lambda batch: execute_all(batch, runner, concurrency, progress, streak, budget),
                                halted=lambda: streak.tripped or stop_requested() or bool(budget and budget.stopped))
            executed = rounds.executed
            design = design_record(adaptive, questions, rounds.states, names, done + executed)
        else:
            executed = execute_all(todo, runner, concurrency, progress, streak, budget)
    runner.closed = True
    progress.finish()
    p.executor.close()
    if stop.received is not None:
        kept = sort_records(done + executed)
        if kept:
            aggregate_and_write(it_dir, kept, p, choice.number, trials, Arms("with_skill", base_config), req.strict,
                                req.point_estimate, design, [interrupted_note(len(kept), total)])
        raise RunInterrupted(stop.received, it_dir, len(kept), total - len(kept), bool(kept))
    if streak.tripped:
        raise stopped_early(it_dir, p.executor.name, streak, len(executed))

    records = sort_records(done + executed)
    if req.shard is not None:  # a share: its figures (in memory only) are no verdict; `merge` gives it
        shard_file = write_shard_record(it_dir, shard_record(
            req.shard, p.fingerprint, seed=seed, trials=trials, configurations=configurations,
            baseline_type=p.config.baseline_type, evals=[(ev.id, ev.slug) for ev in p.evals.evals],
            iteration=choice.number, ran=len(records)))
        bench = build_benchmark(records, skill_name=p.skill.name, skill_path=str(p.skill.path), iteration=choice.number,
                                timestamp=now_iso(), trials_requested=trials, thresholds=p.config.thresholds)
        return RunOutcome(it_dir, choice, bench, GateResult(NOT_GATED, 0, []), len(executed), len(done),
                          sum(1 for r in executed if not r.completed), records, shard=shard_file)
    for rec in records:
        if rec.configuration == "without_skill" and rec.skill_triggered:
            progress.notice(f"baseline contaminated: {rec.run_dir} loaded a skill named {p.skill.name} "
                            "(the measurement is INVALID)")
    spent_note = budget_stop(budget, records, total)  # adaptive: total is its maximum
    bench = aggregate_and_write(it_dir, records, p, choice.number, trials, Arms("with_skill", base_config),
                                req.strict, req.point_estimate, design, [spent_note] if spent_note else None)
    record_after_run(p.workspace, it_dir, records)  # history.json; logs and carries on if it fails
    cfg = config_path(req)
    comparison = compare_after_run(it_dir, records, cfg)  # comparison_previous.json
    gate_result = evaluate(bench, p.config.thresholds, strict=req.strict, point_estimate=req.point_estimate,
                           comparison=comparison, not_measured=p.not_measured, executor=p.executor.name)
    gate_result = budget_gate(gate_result, budget, spent_note)
    atomic_write_text(it_dir / "benchmark.md", render_benchmark_md(bench, gate_result))
    # The gate just evaluated is the report's: `bench` was aggregated for these thresholds.
    write_report(it_dir, cfg, strict=req.strict, point_estimate=req.point_estimate, bench=bench,
                 drawer=drawer, gated=Gated(gate_result, p.config.thresholds))
    hint = (reuse_hint(p.workspace, it_dir, p.fingerprint, base_config, slugs, trials)
            if req.baseline_from is None and any(r.configuration == base_config for r in executed) else None)
    return RunOutcome(it_dir, choice, bench, gate_result, len(executed), len(done),
                      sum(1 for r in executed if not r.completed), records, comparison,
                      [h for h in (reused_note(skill_reuse), hint, token_note(runner.token_warnings)) if h])


def reused_note(reuse: tuple[Path, list[Path]] | None) -> str | None:
    if not reuse or not reuse[1]:
        return None
    source, copied = reuse
    return (f"{len(copied)} with_skill trials of evals unchanged since {source.name} (same skill, settings and "
            f"seed) were reused from it, not run again (listed in this iteration's {SKILL_PROVENANCE})")


def aggregate_and_write(it_dir: Path, records: list[TrialRecord], p: Prepared, iteration: int,
                        trials: int, arms: Arms, strict: bool, point_estimate: bool,
                        adaptive: dict | None = None, notes: list[str] | None = None) -> Benchmark:
    bench = build_benchmark(
        records, skill_name=p.skill.name, skill_path=str(p.skill.path), iteration=iteration,
        timestamp=now_iso(), trials_requested=trials, thresholds=p.config.thresholds, arms=arms,
        executor_model=p.executor.identity().get("model"), notes=notes,
        min_detectable_effect=p.config.min_detectable_effect, interval_reading=p.config.interval_reading)
    if adaptive is not None:
        bench.adaptive = adaptive
    write_benchmark(it_dir / "benchmark.json", bench)
    return bench


def interrupted_note(kept: int, total: int) -> str:
    return (f"interrupted: {kept} of the {total} planned trials had finished when the run was stopped; "
            "these figures cover those only. Run the same command again to resume this iteration.")
