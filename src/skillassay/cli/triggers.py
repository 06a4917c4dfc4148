"""Trigger-eval commands: `triggers` and `optimize-description`. Registered on the main app by
cli/main.py; each parses options, calls one library function and renders the result."""

# No `from __future__ import annotations`: cli/main.py says why.
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from skillassay.cli.console import err, handles_input_errors, parse_options

QueriesOpt = Annotated[Path | None, typer.Option(help="Trigger eval set: a JSON list of {\"query\": ..., \"should_trigger\": true|false} (default SKILL_DIR/evals/trigger_evals.json).")]
ExecutorOpt = Annotated[str, typer.Option(help="Executor plugin that plays the agent; `skillassay executors` lists them (default local, the embedded model).")]
WithSkillsOpt = Annotated[list[Path] | None, typer.Option("--with-skills", help="Another skill folder to install beside this one (repeatable): shows which skill fires instead on a miss.")]
WorkspaceOpt = Annotated[Path | None, typer.Option(help="Workspace (default <skill>-workspace beside the skill); files go to its triggers/ folder.")]
OptionOpt = Annotated[list[str] | None, typer.Option("--option", "-o", help="Executor option KEY=VALUE (JSON values allowed).")]
SandboxOpt = Annotated[str | None, typer.Option(help="Where each run's agent runs: auto (default: bwrap where it works, else none with a warning), none, bwrap, docker (with --sandbox-image). See docs/sandbox.md.")]
SandboxImageOpt = Annotated[str | None, typer.Option(help="With --sandbox docker: the image each run's container starts from.")]


def _sandbox(kind: str | None, image: str | None, executor: str) -> Any:
    """The sandbox decided once, before any run (docker's daemon and image checked: exit 2);
    auto's fallback to none said here, once."""
    from skillassay.executors import load_executor_class
    from skillassay.sandbox import resolve, sandbox_spec

    binary = getattr(load_executor_class(executor), "binary", None)
    resolved = resolve(sandbox_spec(kind, {"image": image} if image else None), [binary, "--version"] if binary else None)
    if resolved.warning:
        err.print(f"warning: {resolved.warning}", highlight=False, soft_wrap=True)
    return resolved.spec


def _progress(total: int | None) -> Any:
    """One line per run made (runs found finished are counted, not shown)."""
    done = {"n": 0}

    def report(spec: Any, record: dict[str, Any], reused: bool) -> None:
        done["n"] += 1
        if reused:
            return
        loaded = record.get("loaded")
        what = (record.get("error") or record.get("status")) if loaded is None else (", ".join(loaded) or "no skill")
        err.print(f"[{done['n']}{'/' + str(total) if total else ''}] query {spec.index} run-{spec.run}: {what}", highlight=False, soft_wrap=True)

    return report


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C, SIGTERM, SIGHUP during the runs: what finished is kept; say so, exit 128 + signal."""
    from skillassay.run.interrupt import RunInterrupted

    try:
        yield
    except RunInterrupted as stopped:
        err.print(str(stopped), highlight=False, soft_wrap=True)
        raise typer.Exit(stopped.exit_code) from None


def triggers(
    skill_dir: Annotated[Path, typer.Argument(metavar="SKILL_DIR", help="The skill folder (with SKILL.md).")],
    queries: QueriesOpt = None,
    executor: ExecutorOpt = "local",
    runs: Annotated[int, typer.Option(min=1, help="Runs per query.")] = 3,
    with_skills: WithSkillsOpt = None,
    workspace: WorkspaceOpt = None,
    seed: Annotated[int, typer.Option(help="Base seed (run k of query i: seed + 1000i + k).")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Runs at once.")] = 4,
    model: Annotated[str | None, typer.Option(help="Model name for the executor.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    timeout: Annotated[float, typer.Option(help="Per-run timeout in seconds.")] = 300.0,
    option: OptionOpt = None,
    min_trigger_recall: Annotated[float | None, typer.Option(min=0, max=1, help="Gate: recall must be at least this (its whole 95% interval, for a PASS).")] = None,
    max_false_trigger_rate: Annotated[float | None, typer.Option(min=0, max=1, help="Gate: the false-trigger rate must be at most this.")] = None,
    strict: Annotated[bool, typer.Option(help="Inconclusive thresholds fail the gate.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print triggers.json's figures and gate as JSON on stdout.")] = False,
    fail_fast: Annotated[int, typer.Option(min=0, help="Stop (exit 2) when the first N failures all have the same error before any run succeeds: a dead provider or a broken setup (as for `run`). 0: never stop.")] = 5,
    sandbox: SandboxOpt = None,
    sandbox_image: SandboxImageOpt = None,
    agent: Annotated[list[str] | None, typer.Option("--agent", metavar="EXECUTOR[:MODEL]", help="Measure this agent too (repeatable): two or more give each agent's recall and false-trigger rate in one triggers.json (agents/<name>/ each; the gate FAILs if any agent fails). One: as --executor/--model.")] = None,
) -> None:
    """Does the description make the agent load the skill? Trigger rates, recall, false triggers.

    Runs each trigger query K times with the skill installed where the agent discovers skills
    and records, from what the agent did, whether it loaded this skill (or another). Writes triggers.json and triggers.md; re-running
    skips finished runs. Exit codes as for `run` (0 pass, 1 fail, 2 bad input, 3 inconclusive)."""
    from skillassay.triggers import TriggerRequest, measure_triggers
    from skillassay.triggers.gate import headline
    from skillassay.triggers.queries import default_queries_path, load_queries
    from skillassay.triggers.report_md import fmt_rate

    agents = []
    if agent:
        from skillassay.run.agents import parse_agent_flags

        agents = parse_agent_flags(agent)
        if len(agents) == 1:  # one agent: the trigger eval it always was
            executor, model, agents = agents[0].executor, agents[0].model or model, []
    req = TriggerRequest(skill_dir=skill_dir, queries_path=queries, executor=executor, runs=runs,
                         with_skills=list(with_skills or []), workspace=workspace, seed=seed, concurrency=concurrency,
                         model=model, temperature=temperature, timeout_seconds=timeout,
                         options=parse_options(option or []), min_recall=min_trigger_recall,
                         max_false_rate=max_false_trigger_rate, strict=strict, fail_fast=fail_fast,
                         sandbox=_sandbox(sandbox, sandbox_image, agents[0].executor if agents else executor))
    total = len(load_queries(queries or default_queries_path(skill_dir))) * runs
    if agents:
        from skillassay.cli.trigger_agents import print_agent_triggers
        from skillassay.triggers.agents import measure_agent_triggers

        with _interruptible():
            top, folder, code = measure_agent_triggers(req, agents, on_done=_progress(total * len(agents)))
        print_agent_triggers(top, folder, as_json)
        raise typer.Exit(code)
    with _interruptible():
        report, folder, gate = measure_triggers(req, on_done=_progress(total))
    if as_json:
        data = report.to_json_dict()
        sys.stdout.write(json.dumps({k: data[k] for k in ("skill_name", "recall", "false_trigger_rate", "precision",
                                                          "accuracy", "misses", "false_triggers", "shadowed_by",
                                                          "gate")}, indent=2) + "\n")
    else:
        for label, rate in (("recall", report.recall), ("false-trigger rate", report.false_trigger_rate),
                            ("precision", report.precision), ("accuracy", report.accuracy)):
            err.print(f"{label}: {fmt_rate(rate)}", highlight=False, soft_wrap=True)
        by_index = {q.index: q for q in report.queries}
        for title, idx in (("missed", report.misses), ("false trigger", report.false_triggers)):
            for i in idx:
                q = by_index[i]
                instead = f" (instead: {', '.join(q.other_skills_fired)})" if q.other_skills_fired else ""
                err.print(f"  {title}: [{i}] {q.query} — fired {q.trigger_rate.numerator}/{q.trigger_rate.denominator}"
                          f"{instead}", highlight=False, soft_wrap=True)
        err.print(f"wrote {folder / 'triggers.json'} and triggers.md", highlight=False, soft_wrap=True)
        for t in gate.thresholds:
            err.print(f"  {t.line()}", highlight=False, soft_wrap=True)
        err.print(f"gate: [bold]{escape(headline(gate))}[/bold]", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(gate.exit_code)


def optimize_description(
    skill_dir: Annotated[Path, typer.Argument(metavar="SKILL_DIR", help="The skill folder (with SKILL.md).")],
    queries: QueriesOpt = None,
    executor: ExecutorOpt = "local",
    proposer: Annotated[str, typer.Option(help="Who proposes descriptions: local (embedded model), openai, anthropic, or scripted (--proposals).")] = "local",
    proposer_model: Annotated[str | None, typer.Option(help="Model name for the proposer (openai, anthropic).")] = None,
    proposals: Annotated[Path | None, typer.Option(help="For --proposer scripted: a JSON list of descriptions, one per round.")] = None,
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Proposals to try.")] = 3,
    runs: Annotated[int, typer.Option(min=1, help="Runs per query and description.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the train/test split and of the runs.")] = 0,
    test_fraction: Annotated[float, typer.Option(min=0.1, max=0.9, help="Share of each kind of query held out for test.")] = 0.4,
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="Family-wise level of the test-split comparison (each round at alpha / rounds).")] = 0.05,
    apply: Annotated[bool, typer.Option(help="Write the winning description into SKILL.md (only when one won).")] = False,
    with_skills: WithSkillsOpt = None,
    workspace: WorkspaceOpt = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Runs at once.")] = 4,
    model: Annotated[str | None, typer.Option(help="Model name for the executor.")] = None,
    timeout: Annotated[float, typer.Option(help="Per-run timeout in seconds.")] = 300.0,
    option: OptionOpt = None,
) -> None:
    """Look for a better description; adopt one only if it wins on held-out queries beyond noise.

    Makes the agent load the skill when it should and only then. A seeded train/test split; each round a model proposes a description from the train misses
    and false triggers; a proposal replaces the current one only if it beats it on the test
    queries beyond noise (one-sided exact sign-flip test). Writes description_history.json and
    description_report.md; SKILL.md changes only with --apply. Exit 0 whether or not a
    description won (it says which); 2 on bad input."""
    from skillassay.triggers import TriggerRequest
    from skillassay.triggers.optimize import OptimizeRequest, optimize_description, power_note
    from skillassay.triggers.proposer import make_proposer

    options = parse_options(option or [])
    trig = TriggerRequest(skill_dir=skill_dir, queries_path=queries, executor=executor, runs=runs,
                          with_skills=list(with_skills or []), workspace=workspace, seed=seed,
                          concurrency=concurrency, model=model, timeout_seconds=timeout, options=options)
    prop = make_proposer(proposer, model=proposer_model, options={}, proposals=proposals, seed=seed)
    with _interruptible():
        history, folder = optimize_description(OptimizeRequest(trig, rounds=rounds, test_fraction=test_fraction,
                                                               alpha=alpha, apply=apply, proposer_name=proposer), prop,
                                               on_done=_progress(None))
    if note := power_note(len(history.test), alpha / rounds):
        err.print(f"note: {note}", highlight=False, soft_wrap=True)
    for r in history.rounds:
        te = f"test accuracy {r.test.accuracy:.2f}" if r.test and r.test.accuracy is not None else "not measured"
        err.print(f"round {r.round}: {r.status} ({te}): {r.reason}", highlight=False, soft_wrap=True)
    state = "applied to SKILL.md" if history.applied else ("not applied (use --apply)" if history.changed else "kept")
    err.print(f"best description ({state}): {history.best_description}", highlight=False, soft_wrap=True)
    err.print(f"wrote {folder / 'description_history.json'} and description_report.md", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the main app, each turning InputError into exit 2 with a message."""
    app.command("triggers")(handles_input_errors(triggers))
    app.command("optimize-description")(handles_input_errors(optimize_description))
