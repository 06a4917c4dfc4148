"""The command line: each command parses options, calls one library function, renders the
result. Exit codes (one table for every command): 0 pass, 1 fail, 2 bad input, 3 inconclusive,
70 a bug in skillassay, 75 stopped by a full disk (resumable), 128+N stopped by signal N (130: Ctrl-C)."""

# No `from __future__ import annotations` in the command modules: typer reads every command's
# signature at each start, and string annotations cost it a compile and an eval apiece
# (~30 ms of `--help`, measured); helpers' annotations of TYPE_CHECKING names are quoted.
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from skillassay.cli.console import (
    AllowWeakJudgeOpt,
    JudgeModelOpt,
    err,
    handles_input_errors,
    latest_if_workspace,
    out,
    parse_options,
)
from skillassay.cli.gate_output import exit_with_gate as _exit_with_gate
from skillassay.cli.gate_output import write_ci_outputs as _write_ci_outputs
from skillassay.errors import EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, InputError

if TYPE_CHECKING:  # annotations only: the gate pulls numpy, the models pydantic (0.3 s) into start-up
    from skillassay.models.benchmark import Summary

# The kinds `schema` prints, for its help text: skillassay.models.MODELS' keys (a test checks),
# spelled out because building every pydantic model would triple `skillassay --help`'s time.
SCHEMA_KINDS = ("evals", "eval_metadata", "grading", "metrics", "timing", "history", "benchmark", "comparison",
                "analysis", "feedback", "config", "triggers", "description_history", "comparison_previous",
                "iteration", "matrix")

app = typer.Typer(
    name="skillassay",
    help="Does this Agent Skill really help? Benchmark it with and without, with honest statistics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help and error layout: typer's rich layout imports rich.markdown, markdown_it,
    # pygments and rich.traceback (about 0.1 CPU-s) before it prints a line, a third of the
    # start-up budget of `skillassay --help` (issue 17); llm's help is laid out the same way.
    rich_markup_mode=None,
)
@app.command()
@handles_input_errors
def validate(
    paths: Annotated[list[Path], typer.Argument(metavar="PATHS", help="JSON files or skill folders to validate.")],
    kind: Annotated[str | None, typer.Option(help="Force the file kind: one `skillassay schema` lists, or trigger_evals (the list `skillassay triggers` reads).")] = None,
    judge: Annotated[str | None, typer.Option(help="The judge `run` will use for plain-string expectations: none, local, openai or anthropic (default: none, and then plain strings are refused, as `run` refuses them without --judge).")] = None,
) -> None:
    """Validate spec files (kind from the file name, or --kind) and skill folders (SKILL.md, evals, config, trigger evals)."""
    from skillassay.run.preflight import validate_paths

    notes: list[str] = []
    problems = validate_paths(paths, kind, judge, notes)
    for note in notes:
        err.print(f"[yellow]warning[/yellow] {escape(note)}", markup=True, highlight=False, soft_wrap=True)
    for problem in problems:
        err.print(f"[red]error[/red] {escape(str(problem))}", markup=True, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(EXIT_BAD_INPUT)
    out.print(f"{len(paths)} valid")


@app.command()
@handles_input_errors
def schema(
    name: Annotated[str | None, typer.Argument(metavar="NAME", help=f"The kind to print: {', '.join(SCHEMA_KINDS)}. All kinds, keyed by kind, when omitted.")] = None,
) -> None:
    """Print the JSON Schema of our files, for editors and other tools."""
    from skillassay.spec.validate import json_schemas

    sys.stdout.write(json_schemas(name))


@app.command()
@handles_input_errors
def init(skill_dir: Annotated[Path, typer.Argument(metavar="SKILL_DIR", help="An existing skill folder.")]) -> None:
    """Scaffold evals/evals.json and a benchmark config next to an existing skill."""
    from skillassay.spec.scaffold import init_skill

    for path in init_skill(skill_dir):
        out.print(f"wrote {path}")




def _print_next_steps(steps: list[str]) -> None:
    for step in steps:
        err.print(f"  next: {step}", highlight=False, soft_wrap=True)


@app.command()
@handles_input_errors(preload=("skillassay.cli.progress",))  # the engine, the statistics, the models
def run(
    skill_dir: Annotated[Path, typer.Argument(metavar="SKILL_DIR", help="The skill folder (with SKILL.md).")],
    evals: Annotated[Path | None, typer.Option(help="Eval set (default SKILL_DIR/evals/evals.json).")] = None,
    config: Annotated[Path | None, typer.Option(help="Benchmark config JSON (default: evals/benchmark_config.json in SKILL_DIR, if present): trials_per_eval, baseline_type, thresholds, eval_set_path, previous_benchmark, executor settings; options override it.")] = None,
    trials: Annotated[int | None, typer.Option(min=1, help="Trials per eval and configuration.")] = None,
    executor: Annotated[str | None, typer.Option(help="Executor plugin; `skillassay executors` lists them (default: the config's executor, else local, the embedded model).")] = None,
    workspace: Annotated[Path | None, typer.Option(help="Workspace (default <skill>-workspace beside it).")] = None,
    iteration: Annotated[int | None, typer.Option(min=1, help="Use iteration N instead of choosing one: start it, or resume it if it was run with the same skill, evals and settings (otherwise exit 2: its trials would mix two versions).")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Trials run at once.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Per-trial timeout in seconds.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for the executor.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Max generated tokens per trial.")] = None,
    seed: Annotated[int | None, typer.Option(help="Base seed (trial k of eval e: seed + 1000e + k).")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="Executor option KEY=VALUE (JSON values allowed).")] = None,
    strict: Annotated[bool, typer.Option(help="Inconclusive thresholds fail the gate.")] = False,
    point_estimate: Annotated[bool, typer.Option(help="Gate on the plain comparison only.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the gate result as JSON on stdout.")] = False,
    junit: Annotated[Path | None, typer.Option(help="Also write JUnit XML here (one testcase per eval and threshold).")] = None,
    judge: Annotated[str | None, typer.Option(help="Judge for plain-string expectations: none, local (embedded model), openai or anthropic (default: none, and then an eval set with plain strings is refused before any trial runs).")] = None,
    judge_model: JudgeModelOpt = None,
    judge_samples: Annotated[int, typer.Option(min=1, help="Ask the judge K times; majority vote, ties ungraded.")] = 1,
    allow_weak_judge: AllowWeakJudgeOpt = False,
    baseline_from: Annotated[str | None, typer.Option(help="Reuse this iteration's baseline runs (folder or number); refused if settings differ; with a changed eval set, only the unchanged evals' runs are reused.")] = None,
    fail_fast: Annotated[int, typer.Option(min=0, help="Stop the run (exit 2) when its first N failures all have the same error before any trial succeeds: a dead provider or a broken setup. An agent CLI's own retries of its provider count, and until a trial succeeds one that gets no answer in 30 s gives up. 0: never stop.")] = 5,
    adaptive: Annotated[bool, typer.Option(help="Adaptive trials: rounds until every gate is decided or settled (group-sequential: Haybittle-Peto bounds, curtailment), min 3 / max 10 per arm unless the config's `adaptive` block says otherwise; --trials sets the maximum. On by default when the config has `adaptive`.")] = False,
    backend: Annotated[str | None, typer.Option(help="Where trials run: local (a thread pool on this machine) or ray (one long-lived Ray actor per node, running that node's share of the trials in threads; needs the `ray` extra: pip install -e '.[ray]' in a skillassay checkout; see docs/distributed.md). Default: the config's backend, else local.")] = None,
    ray_address: Annotated[str | None, typer.Option(help="With --backend ray: the cluster, as ray.init(address=...) takes it (auto, ray://host:10001, host:6379). Default: the config's ray_address, else a local Ray instance.")] = None,
    sandbox: Annotated[str | None, typer.Option(help="Where each trial's agent and commands run: auto (bwrap where it works, else none with a warning), none, bwrap (host read-only, only the trial's folder writable, homes hidden, no API key inside) or docker (a container per trial; image from --sandbox-image or the config's `sandbox`). See docs/sandbox.md. Default: the config's sandbox, else auto.")] = None,
    sandbox_image: Annotated[str | None, typer.Option(help="With --sandbox docker: the image each trial's container starts from.")] = None,
    max_cost: Annotated[float | None, typer.Option(min=0.0, metavar="USD", help="A budget the iteration never passes: a trial starts only if the spend so far plus the worst case of the trials in flight stays within it. Reached: what finished is graded, the gate is INCONCLUSIVE (exit 3) naming what would finish the plan; run again with a higher budget to resume. Default: the config's max_cost_usd.")] = None,
    dry_run: Annotated[bool, typer.Option(help="Print the plan (trials per eval and arm, how many are reused) and a cost range; run and write nothing.")] = False,
    shard: Annotated[str | None, typer.Option(metavar="I/N", help="Run only share I of N of the planned trials (deterministic, balanced across evals and arms), e.g. for N parallel CI jobs, each with its own --workspace; no verdict from a share: `skillassay merge` the N workspaces.")] = None,
    agent: Annotated[list[str] | None, typer.Option("--agent", metavar="EXECUTOR[:MODEL]", help="Measure this agent too (repeatable): two or more make a matrix run, every agent with and without the skill in one iteration (agents/<name>/ each, matrix.json, one verdict per agent and one for the matrix). Replaces the config's `agents`; its name comes from the model (or executor).")] = None,
) -> None:
    """Run every eval N times with the skill and N times without, grade, aggregate, gate.

    Resumes the latest iteration when nothing changed; starts the next one (and says why)
    when the skill, the evals or the executor settings changed. Ctrl-C (or SIGTERM, SIGHUP)
    stops it: no trial starts after it, the agents running are ended, what finished is
    aggregated, exit 130 (143, 129); a second Ctrl-C ends it at once. Run the same command
    again to resume. A full disk stops it with exit 75, resumable likewise."""
    from skillassay.cli.progress import LineProgress, RichProgress
    from skillassay.run.engine import RunRequest, run_benchmark
    from skillassay.run.shard import parse_shard

    req = RunRequest(skill_dir=skill_dir, evals_path=evals, config_path=config, trials=trials,
                     executor=executor, workspace=workspace, iteration=iteration,
                     concurrency=concurrency, timeout_seconds=timeout, model=model,
                     temperature=temperature, max_tokens=max_tokens, seed=seed,
                     executor_options=parse_options(option or []), strict=strict,
                     point_estimate=point_estimate, judge=judge, judge_samples=judge_samples,
                     judge_model=judge_model, allow_weak_judge=allow_weak_judge, baseline_from=baseline_from,
                     stop_after_same_errors=fail_fast, adaptive=adaptive, backend=backend,
                     ray_address=ray_address, sandbox=sandbox, sandbox_image=sandbox_image, max_cost=max_cost,
                     shard=parse_shard(shard), agents=agent or [])
    if max_cost is not None and max_cost <= 0:  # before anything is read or written
        raise InputError.one("--max-cost", str(max_cost), "must be more than 0 USD")
    from skillassay.run.agents import run_agents

    req, agents = run_agents(req)  # one agent: the run it always was
    if agents:
        from skillassay.cli.matrix_output import refuse_with_agents, run_matrix_command

        refuse_with_agents(dry_run=dry_run, junit=junit)
        raise typer.Exit(run_matrix_command(req, agents, as_json))
    if dry_run:
        from skillassay.cli.dry_run import print_dry_run

        raise typer.Exit(print_dry_run(req, err))
    from skillassay.run.interrupt import RunInterrupted

    progress = RichProgress(err) if err.is_terminal else LineProgress(err)
    try:
        outcome = run_benchmark(req, progress)
    except RunInterrupted as stopped:  # Ctrl-C, SIGTERM, SIGHUP: what finished is kept
        err.print(str(stopped), highlight=False, soft_wrap=True)
        raise typer.Exit(stopped.exit_code) from None
    s = outcome.benchmark.summary
    err.print(f"iteration {outcome.choice.number}: {outcome.executed} trials run "
              f"({outcome.failed} errored), {outcome.skipped} reused -> {outcome.iteration_dir}/benchmark.json",
              highlight=False)
    if outcome.shard is not None:  # a share's figures are no verdict: merge gives it
        err.print(f"shard {req.shard}: wrote {outcome.shard}; nothing gated: `skillassay merge` the "
                  f"{req.shard.count if req.shard else ''} shard workspaces for the verdict", highlight=False)
        raise typer.Exit(0)
    if s is not None:
        err.print(f"pass rate with skill {_pct(s.with_skill.pass_rate)}, baseline "
                  f"{_pct(s.baseline.pass_rate)}, improvement ratio {_ratio_text(s)}", highlight=False)
        _print_ungraded(s)
        if (cost := outcome.benchmark.cost) is not None:
            from skillassay.analyze.cost import cost_summary

            err.print(cost_summary(cost), highlight=False, soft_wrap=True)
        from skillassay.analyze.compare import design_limit

        err.print(f"what this design can detect: {design_limit(outcome.benchmark.statistics, outcome.comparison)}",
                  highlight=False)
    if (design := outcome.benchmark.adaptive) is not None:
        err.print(f"adaptive: {design.get('trials_recorded')} trials recorded of the fixed design's "
                  f"{design.get('trials_fixed_design')} ({design.get('method')})", highlight=False)
    for hint in outcome.hints:
        err.print(f"tip: {hint}", highlight=False, soft_wrap=True)
    _write_ci_outputs(outcome.benchmark, outcome.gate, junit, outcome.comparison)
    if not as_json:
        from skillassay.workflows.gate_iteration import next_steps

        gates = {} if point_estimate else (outcome.benchmark.statistics or {}).get("gates") or {}
        _print_next_steps(next_steps(outcome.gate, gates))
    _exit_with_gate(outcome.gate, as_json)


def _print_ungraded(s: "Summary") -> None:
    if ungraded := s.with_skill.ungraded_trials + s.baseline.ungraded_trials:
        err.print(f"{ungraded} trials ungraded (an expectation has no verdict): excluded from the pass rates, "
                  "not counted as failures; the reason is in their grading.json evidence", highlight=False)


def _pct(x: float | None) -> str:
    from skillassay.wording import pct

    return pct(x)


def _ratio_text(s: Any) -> str:
    from skillassay.wording import improvement_text

    return improvement_text(s.improvement_ratio, s.baseline.pass_rate, s.with_skill.pass_rate)


@app.command()
@handles_input_errors
def grade(
    target: Annotated[Path, typer.Argument(metavar="TARGET", help="A workspace (its latest iteration) or an iteration folder.")],
    evals: Annotated[Path | None, typer.Option(help="Eval set (default: the one recorded in iteration.json; required for an iteration without one, e.g. skill-creator's runs executed elsewhere).")] = None,
    judge: Annotated[str | None, typer.Option(help="Judge for plain-string expectations: none, local (embedded model), openai or anthropic (default: none, which leaves them ungraded, even if the run used a judge).")] = None,
    judge_model: JudgeModelOpt = None,
    judge_samples: Annotated[int, typer.Option(min=1, help="Ask the judge K times; majority vote, ties ungraded.")] = 1,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ask the judge again even for unchanged pairs.")] = False,
    allow_weak_judge: AllowWeakJudgeOpt = False,
) -> None:
    """Grade (or re-grade) the runs of an iteration without executing anything."""
    from skillassay.workflows.regrade import regrade_iteration

    remember_iterations(target)
    outcome = regrade_iteration(target, evals_path=evals, judge=judge, judge_model=judge_model,
                                judge_samples=judge_samples, use_cache=not no_cache, allow_weak_judge=allow_weak_judge)
    s = outcome.benchmark.summary
    err.print(f"re-graded {outcome.runs} runs ({outcome.judged} expectations judged, {outcome.cached} from cache) "
              f"-> {outcome.iteration_dir}/benchmark.json", highlight=False)
    if s is not None:
        err.print(f"pass rate with skill {_pct(s.with_skill.pass_rate)}, baseline {_pct(s.baseline.pass_rate)}",
                  highlight=False)
        _print_ungraded(s)
    if outcome.gate.problems:  # re-grading is not a verdict, but figures that are no measurement are said so
        err.print(f"[yellow]measurement invalid[/yellow]: {escape('; '.join(outcome.gate.problems))}", markup=True,
                  highlight=False, soft_wrap=True)


@app.command()
@handles_input_errors(preload=("skillassay.workflows.aggregate",))
def aggregate(
    iteration_dir: Annotated[Path, typer.Argument(metavar="ITERATION_DIR", help="An iteration folder (e.g. <skill>-workspace/iteration-1).")],
    skill_name: Annotated[str | None, typer.Option(help="Skill name (default: config, iteration.json or workspace name).")] = None,
    skill_path: Annotated[str | None, typer.Option(help="Path of the skill, recorded as given in the metadata (default: config, else iteration.json).")] = None,
    config: Annotated[Path | None, typer.Option(help="Benchmark config JSON: trials_per_eval, baseline_type, thresholds, skill_name, skill_path; options override it. Without it: iteration.json's values, no thresholds.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="benchmark.json to write (default ITERATION_DIR/benchmark.json); benchmark.md goes beside it.")] = None,
) -> None:
    """Aggregate graded runs into benchmark.json and benchmark.md.

    Reads eval-*/<config>/run-K/, runs/eval-*/... and eval-*/<config>/outputs/ layouts; lists
    every run it could not read. Exit 2 when nothing in the folder can be aggregated; exit 3
    when the figures are no measurement (an arm with no completed trial, ungraded expectations)."""
    from skillassay.cli.console import count_bar
    from skillassay.cli.matrix_output import aggregate_matrix_command, is_matrix

    if is_matrix(iteration_dir):  # a matrix iteration (issue 37): each agent's folder, then the matrix
        raise typer.Exit(aggregate_matrix_command(iteration_dir, config, skill_name, skill_path, output))
    from skillassay.workflows.aggregate import aggregate_iteration

    with count_bar(err, "evals read") as on_eval:
        result = aggregate_iteration(iteration_dir, skill_name=skill_name, skill_path=skill_path,
                                     config_path=config, output=output, on_eval=on_eval)
    for issue in result.skipped:
        err.print(f"[yellow]skipped[/yellow] {escape(str(issue))}", markup=True, highlight=False, soft_wrap=True)
    for warning in result.warnings:
        err.print(f"[yellow]warning[/yellow] {escape(warning)}", markup=True, highlight=False, soft_wrap=True)
    s = result.benchmark.summary
    err.print(f"{result.runs_read} runs aggregated ({len(result.skipped)} skipped), skill {result.arms.skill} vs "
              f"baseline {result.arms.baseline} -> {result.json_path}, {result.md_path}", highlight=False)
    if s is not None:
        arms = result.benchmark.run_summary.configs() if result.benchmark.run_summary else {}
        per_expectation = [_pct(a.pass_rate.mean) if (a := arms.get(c)) else "n/a"
                           for c in (result.arms.skill, result.arms.baseline)]  # skill-creator's run_summary figure
        err.print(f"pass rate with skill {_pct(s.with_skill.pass_rate)}, baseline {_pct(s.baseline.pass_rate)}; "
                  f"expectation pass rate with skill {per_expectation[0]}, baseline {per_expectation[1]}", highlight=False)
        _print_ungraded(s)
    from skillassay.analyze.gate import measurement_problems

    problems = measurement_problems(result.benchmark)
    if problems:  # the figures were written, but they are no measurement: never exit 0 on them
        err.print(f"[red]measurement invalid[/red]: {escape('; '.join(problems))}", markup=True, highlight=False,
                  soft_wrap=True)
        raise typer.Exit(EXIT_INCONCLUSIVE)


@app.command()
@handles_input_errors
def compare(
    current: Annotated[Path, typer.Argument(metavar="CURRENT", help="The iteration folder to compare (e.g. WORKSPACE/iteration-2).")],
    previous: Annotated[Path | None, typer.Argument(metavar="PREVIOUS", help="Iteration folder or benchmark.json to compare with (default: iteration-(N-1) beside CURRENT, else the config's previous_benchmark).")] = None,
    config: Annotated[Path | None, typer.Option(help="Benchmark config (for previous_benchmark; default: the iteration's).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
) -> None:
    """Compare an iteration with the previous one: deltas, regressions, improvements.

    Per eval: the raw flip and the statistical call (regressed / possible regression /
    improved / unchanged). Writes CURRENT/comparison_previous.json; exit 2 when there is
    nothing to compare with."""
    from skillassay.analyze.compare import FILENAME
    from skillassay.analyze.compare_text import summary_lines
    from skillassay.workflows.compare_on_disk import compare as compare_iterations

    remember_iterations(current, previous if previous is not None and previous.is_dir() else None)
    result = compare_iterations(current, previous, config)
    if result is None:
        raise InputError.one(current, "PREVIOUS", "nothing to compare with: no iteration-(N-1) beside it and no "
                             "previous_benchmark in its config; give PREVIOUS explicitly")
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    for line in summary_lines(result):
        out.print(line, highlight=False, soft_wrap=True)
    err.print(f"wrote {current / FILENAME}", highlight=False)


@app.command()
@handles_input_errors
def report(
    iteration_dir: Annotated[Path, typer.Argument(metavar="ITERATION_DIR", help="An iteration folder (with benchmark.json); a workspace: its latest iteration.")],
    config: Annotated[Path | None, typer.Option(help="Benchmark config with thresholds (default: the iteration's).")] = None,
    strict: Annotated[bool, typer.Option(help="Inconclusive thresholds fail the gate shown.")] = False,
    point_estimate: Annotated[bool, typer.Option(help="Show the gate on the plain comparison only.")] = False,
    format: Annotated[str, typer.Option("--format", help="md: write report.md; pr-comment: print a pull-request comment (verdict, effect, change against --base, cost, collapsed per-eval table; under GitHub's 65,536-character limit) on stdout, or to --output.")] = "md",
    base: Annotated[Path | None, typer.Option(help="With --format pr-comment: the base branch's iteration to compare with (default: the previous iteration `run` compared with).")] = None,
    head_sha: Annotated[str | None, typer.Option(help="With --format pr-comment: the commit the comment is stamped with.")] = None,
    link: Annotated[str | None, typer.Option(help="With --format pr-comment: where the full report is (default: the GitHub run's page, from GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID).")] = None,
    warn_only: Annotated[bool, typer.Option(help="With --format pr-comment: say that this verdict does not fail the check.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="With --format pr-comment: write the comment here instead of stdout.")] = None,
) -> None:
    """Write report.md for an iteration: findings, recommendations and caveats.

    Sections: summary, regressions, improvements, per-eval breakdown, variance analysis,
    recommendations, and what the figures can and cannot show. Compares with the previous
    iteration first when comparison_previous.json is missing."""
    from skillassay.workflows.report_iteration import report_iteration

    if iteration_dir.is_dir():
        iteration_dir = latest_if_workspace(iteration_dir, "reporting on")
    remember_iterations(iteration_dir, base)
    from skillassay.cli.matrix_output import is_matrix, report_matrix_command

    if is_matrix(iteration_dir):
        raise typer.Exit(report_matrix_command(iteration_dir, config, strict, point_estimate, format))
    if format == "pr-comment":
        from skillassay.cli.ci import write_pr_comment

        write_pr_comment(iteration_dir, base=base, head_sha=head_sha, link=link, warn_only=warn_only, config=config,
                         strict=strict, point_estimate=point_estimate, output=output)
        return
    if format != "md":
        raise InputError.one("--format", format, "expected md or pr-comment")
    out.print(f"wrote {report_iteration(iteration_dir, config, strict=strict, point_estimate=point_estimate)}",
              highlight=False)


@app.command()
@handles_input_errors
def gate(
    iteration_dir: Annotated[Path, typer.Argument(metavar="ITERATION_DIR", help="An iteration folder (with benchmark.json); a workspace: its latest iteration.")],
    config: Annotated[Path | None, typer.Option(help="Benchmark config with thresholds (default: the iteration's skill snapshot).")] = None,
    strict: Annotated[bool, typer.Option(help="Inconclusive thresholds fail the gate.")] = False,
    point_estimate: Annotated[bool, typer.Option(help="Gate on the plain comparison only.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the gate result as JSON on stdout.")] = False,
    junit: Annotated[Path | None, typer.Option(help="Also write JUnit XML here.")] = None,
) -> None:
    """Check thresholds and regressions; exit 0 pass, 1 fail, 3 inconclusive or invalid.

    Thresholds come from --config, else the iteration's recorded config, its skill snapshot's,
    or the one next to its skill; comparison_previous.json, when present, fails the gate on a
    called regression. Failures name the evals responsible and the next step."""
    from skillassay.workflows.gate_iteration import check_iteration

    iteration_dir = latest_if_workspace(iteration_dir, "gating")
    from skillassay.cli.matrix_output import gate_matrix_command, is_matrix

    if is_matrix(iteration_dir):
        raise typer.Exit(gate_matrix_command(iteration_dir, config, as_json, junit))
    check = check_iteration(iteration_dir, config, strict=strict, point_estimate=point_estimate)
    _write_ci_outputs(check.benchmark, check.result, junit, check.comparison)
    if as_json:
        sys.stdout.write(json.dumps(check.to_dict(), indent=2) + "\n")
        raise typer.Exit(check.result.exit_code)
    _print_next_steps(check.next_steps)
    _exit_with_gate(check.result, False)


@app.command()
@handles_input_errors
def view(
    iteration_dir: Annotated[Path, typer.Argument(metavar="ITERATION_DIR", help="An iteration folder, e.g. WORKSPACE/iteration-2 (a workspace: its latest iteration).")],
    previous: Annotated[Path | None, typer.Option(help="The previous iteration folder: its outputs and feedback shown beside each run.")] = None,
    static: Annotated[Path | None, typer.Option(help="Write one self-contained HTML file here instead of serving.")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = False,
    no_outputs: Annotated[bool, typer.Option("--no-outputs", help="With --static: leave out output files (contents and names) and transcripts; grades, their evidence and metrics stay.")] = False,
) -> None:
    """Open the review viewer for an iteration (or write a static HTML file); given a workspace,
    its latest iteration."""
    for label, path in (("ITERATION_DIR", iteration_dir), ("--previous", previous)):
        if path is not None and not path.is_dir():
            raise InputError.one(path, label, "not a folder")
    iteration_dir = latest_if_workspace(iteration_dir, "opening")
    remember_iterations(iteration_dir, previous)
    if static is not None:
        from skillassay.store.remembered import too_weak_to_remember
        from skillassay.viewer.static_html import write_static

        if (weak := too_weak_to_remember(iteration_dir)) and not no_outputs:
            err.print(f"warning: {weak} secret value(s) the run masked were too short or simple to remember safely "
                      "(a hash of them could be guessed): where the agent wrote one into its outputs, this page "
                      "shows it unless its variable is set now; --no-outputs leaves outputs out", highlight=False)
        out.print(f"wrote {write_static(iteration_dir, static, previous, outputs=not no_outputs)}", highlight=False)
        return
    if no_outputs:
        raise InputError.one("--no-outputs", "", "only applies with --static")
    from skillassay.viewer.server import serve

    serve(iteration_dir, previous, port, open_browser=not no_browser, announce=lambda m: err.print(m, highlight=False))


def remember_iterations(*folders: Path | None) -> None:
    """What the iterations' runs masked stays masked in what this command writes or shows."""
    from skillassay.store.remembered import remember_iterations as load

    load(*folders)


@app.command("executors")
@handles_input_errors  # no input to check: it ends start-up, as every command's wrapper does
def executors_cmd() -> None:
    """List installed executors and whether each can run here (keys, servers, binaries)."""
    from rich.table import Table

    from skillassay.errors import InputError
    from skillassay.executors import executor_names, load_executor_class, required_extra

    table = Table("name", "usable", "reason", "extra")
    for name in executor_names():
        try:
            usable, reason = load_executor_class(name).availability()
        except InputError as exc:  # its extra is not installed: the message says which
            usable, reason = False, exc.problems[0].message
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the others
            usable, reason = False, f"failed to load: {type(exc).__name__}: {exc}"
        extra = required_extra(name)
        table.add_row(name, "yes" if usable else "no", reason, f"skillassay[{extra}]" if extra else "-")
    out.print(table)


# Improve mode (history, compare-blind, analyze) lives in cli/improve.py; imported here, after the
# app and its helpers exist, because its commands use them.
from skillassay.cli.improve import register as _register_improve  # noqa: E402  (after this module's commands: help lists them first)

_register_improve(app)
from skillassay.cli.triggers import register as _register_triggers  # noqa: E402  (same reason)

_register_triggers(app)
from skillassay.cli.judge_check import register as _register_judge_check  # noqa: E402  (same reason)

_register_judge_check(app)
from skillassay.cli.plugins_cmd import register as _register_plugins  # noqa: E402  (same reason)

_register_plugins(app)
from skillassay.cli.ci import register as _register_ci  # noqa: E402  (same reason)

_register_ci(app)


def main() -> None:
    """The app behind the crash handler; ends with SystemExit, as a caller in-process expects."""
    from skillassay.cli.console import run_app

    run_app(app)


def script() -> None:
    """The console script and `python -m skillassay`: main, then the process ends without the
    interpreter's teardown (console.exit_without_teardown says why)."""
    from skillassay.cli.console import exit_without_teardown, pause_collector_for_startup

    pause_collector_for_startup()
    try:
        main()
    except SystemExit as exc:
        exit_without_teardown(exc.code)
    exit_without_teardown(0)
