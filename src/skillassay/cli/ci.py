"""`skillassay merge`: the CI side of sharded runs (run --shard I/N in N jobs, then one merge
job gives the verdict). Registered on the main app by cli/main.py."""

# No `from __future__ import annotations`: cli/main.py says why.
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from skillassay.cli.console import err, handles_input_errors
from skillassay.cli.gate_output import exit_with_gate, write_ci_outputs


@handles_input_errors
def merge(
    workspaces: Annotated[list[Path], typer.Argument(metavar="WORKSPACES", help="The shard workspaces (or their iterations) written by `run --shard I/N`, all N of them.")],
    workspace: Annotated[Path, typer.Option(help="The workspace to merge into (its earlier iterations, e.g. restored from the base branch's cache, are compared with as `run` does).")],
    strict: Annotated[bool, typer.Option(help="Inconclusive thresholds fail the gate.")] = False,
    point_estimate: Annotated[bool, typer.Option(help="Gate on the plain comparison only.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the gate result as JSON on stdout.")] = False,
    junit: Annotated[Path | None, typer.Option(help="Also write JUnit XML here.")] = None,
) -> None:
    """Merge shard workspaces into one iteration, then aggregate, compare, report and gate it as
    `run` does (same exit codes). Shards of different plans (skill, evals, settings, seed, trial
    count or shard count differ), a missing shard or an unfinished trial: exit 2, naming which."""
    from skillassay.run.merge import merge_shards

    outcome = merge_shards(workspaces, workspace, strict=strict, point_estimate=point_estimate)
    err.print(f"merged {outcome.shards} shards ({outcome.trials} trials) -> {outcome.iteration_dir}/benchmark.json",
              highlight=False)
    write_ci_outputs(outcome.benchmark, outcome.gate, junit, outcome.comparison)
    exit_with_gate(outcome.gate, as_json)


def write_pr_comment(iteration: Path, *, output: Path | None, link: str | None, **options: Any) -> None:
    """`report --format pr-comment`: the comment on stdout (or in --output); the link defaults to this GitHub run."""
    from skillassay.store.jsonio import atomic_write_text
    from skillassay.workflows.pr_comment import comment_for_iteration

    env = os.environ
    if link is None and all(env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")):
        link = f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    text = comment_for_iteration(iteration, link=link, **options)
    if output is None:
        sys.stdout.write(text)
        return
    atomic_write_text(output, text)
    err.print(f"wrote {output} ({len(text):,} characters)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)
