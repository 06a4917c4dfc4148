"""What `run` and `gate` print for a matrix iteration (issue 37): one line per agent (its name,
with and without the skill, the effect with its interval, its verdict), then the matrix verdict
naming the agents; the exit code is the matrix verdict's."""

# No `from __future__ import annotations`: cli/main.py says why.
import json
import sys
from typing import TYPE_CHECKING

from rich.markup import escape

from skillassay.cli.console import err
from skillassay.wording import points_text as _points

if TYPE_CHECKING:
    from pathlib import Path

    from skillassay.models.agents import AgentConfig
    from skillassay.models.matrix import AgentSummary
    from skillassay.run.engine import RunRequest
    from skillassay.workflows.matrix_iteration import MatrixResult


def _pct(x: "float | None") -> str:
    from skillassay.wording import pct

    return pct(x)


def effect_text(agent: "AgentSummary") -> str:
    interval = agent.effect_interval or []
    low, high = (interval + [None, None])[:2]
    ends = "" if low is None and high is None else (
        f" [{_points(low) if low is not None else 'unbounded'}, {_points(high) if high is not None else 'unbounded'}]")
    return f"{_points(agent.effect)}{ends}"


def agent_line(agent: "AgentSummary") -> str:
    role = "" if agent.required else " (not required)"
    return (f"{agent.name}{role}: with skill {_pct(agent.with_skill_pass_rate)}, without "
            f"{_pct(agent.baseline_pass_rate)}, effect {effect_text(agent)}: {agent.verdict}")


def print_matrix(result: "MatrixResult", as_json: bool) -> int:
    """The lines (or matrix.json on stdout with --json); returns the exit code."""
    summary = result.summary
    if as_json:
        sys.stdout.write(json.dumps(summary.model_dump(mode="json"), indent=2) + "\n")
        return result.exit_code
    for agent in summary.agents:
        err.print(f"  {escape(agent_line(agent))}", markup=True, highlight=False, soft_wrap=True)
    het = summary.heterogeneity
    if het.p_value is not None:
        err.print(f"  effect differs between agents: {'yes' if het.called else 'not shown'} "
                  f"(p = {het.p_value:.3g})", highlight=False, soft_wrap=True)
    for problem in result.invalid:
        err.print(f"[red]measurement invalid[/red]: {escape(problem)}", markup=True, highlight=False, soft_wrap=True)
    message = summary.message.removeprefix(f"{summary.verdict}:").strip()
    err.print(f"matrix: [bold]{escape(summary.verdict)}[/bold]: {escape(message)}", markup=True,
              highlight=False, soft_wrap=True)
    return result.exit_code


def run_matrix_command(req: "RunRequest", agents: "list[AgentConfig]", as_json: bool) -> int:
    """`run` with several agents: the trials, then the lines; returns the exit code."""
    from skillassay.cli.progress import LineProgress, RichProgress
    from skillassay.run.interrupt import RunInterrupted
    from skillassay.run.matrix import run_matrix

    progress = RichProgress(err) if err.is_terminal else LineProgress(err)
    try:
        outcome = run_matrix(req, agents, progress)
    except RunInterrupted as stopped:  # Ctrl-C, SIGTERM, SIGHUP: what finished is kept
        err.print(str(stopped), highlight=False, soft_wrap=True)
        return stopped.exit_code
    executed = sum(a.executed for a in outcome.agents)
    failed = sum(a.failed for a in outcome.agents)
    skipped = sum(a.skipped for a in outcome.agents)
    err.print(f"iteration {outcome.choice.number}: {len(outcome.agents)} agents, {executed} trials run ({failed} "
              f"errored), {skipped} reused -> {outcome.result.matrix_path}, {outcome.result.report_path}",
              highlight=False, soft_wrap=True)
    for hint in outcome.hints:
        err.print(f"tip: {hint}", highlight=False, soft_wrap=True)
    return print_matrix(outcome.result, as_json)


def refuse_with_agents(**given: object) -> None:
    """Options a matrix run does not take yet: exit 2 before anything runs, not ignored."""
    from skillassay.errors import InputError

    for name, value in given.items():
        if value:
            raise InputError.one(f"--{name.replace('_', '-')}", "--agent",
                                 "is not supported with several agents yet")


def is_matrix(iteration_dir: "object") -> bool:
    from pathlib import Path

    from skillassay.store.agents_layout import is_matrix_iteration

    return isinstance(iteration_dir, Path) and iteration_dir.is_dir() and is_matrix_iteration(iteration_dir)


def aggregate_matrix_command(top: "Path", config: "Path | None", skill_name: "str | None",
                             skill_path: "str | None", output: "Path | None") -> int:
    """`aggregate` on a matrix iteration: every agent's folder, then matrix.json and report.md."""
    from skillassay.workflows.matrix_iteration import aggregate_matrix

    refuse_with_agents(output=output)
    results, matrix = aggregate_matrix(top, config, skill_name=skill_name, skill_path=skill_path)
    for name, result in zip((a.name for a in matrix.summary.agents), results, strict=True):
        for issue in result.skipped:
            err.print(f"[yellow]skipped[/yellow] {escape(name)}: {escape(str(issue))}", markup=True, highlight=False,
                      soft_wrap=True)
        err.print(f"{name}: {result.runs_read} runs aggregated ({len(result.skipped)} skipped) -> {result.json_path}",
                  highlight=False, soft_wrap=True)
    err.print(f"wrote {matrix.matrix_path}, {matrix.report_path}", highlight=False, soft_wrap=True)
    return print_matrix(matrix, False)


def report_matrix_command(top: "Path", config: "Path | None", strict: bool, point_estimate: bool,
                          format: str) -> int:
    from skillassay.cli.console import out
    from skillassay.workflows.matrix_iteration import report_matrix

    refuse_with_agents(format=format != "md")
    out.print(f"wrote {report_matrix(top, config, strict=strict, point_estimate=point_estimate)}", highlight=False)
    return 0


def gate_matrix_command(top: "Path", config: "Path | None", as_json: bool, junit: "Path | None") -> int:
    from skillassay.workflows.matrix_iteration import gate_matrix

    refuse_with_agents(junit=junit)
    return print_matrix(gate_matrix(top, config), as_json)
