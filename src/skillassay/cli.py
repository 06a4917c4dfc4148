"""The command line: each command parses options, calls one library function, renders the
result. Exit codes (one table for every command): 0 pass, 1 fail, 2 bad input, 3 inconclusive."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skillassay.errors import EXIT_BAD_INPUT, InputError

app = typer.Typer(
    name="skillassay",
    help="Does this Agent Skill really help? Benchmark it with and without, with honest statistics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
out = Console()


def handles_input_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input becomes a message naming file and field, and exit 2 — never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                err.print(f"[red]error[/red] {problem}", markup=True, highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper


def not_built(command: str) -> None:
    err.print(f"skillassay {command}: not built yet")
    raise typer.Exit(EXIT_BAD_INPUT)


PathArg = Annotated[Path, typer.Argument(help="Path.")]


@app.command()
@handles_input_errors
def validate(
    paths: Annotated[list[Path], typer.Argument(help="JSON files or skill folders to validate.")],
    kind: Annotated[str | None, typer.Option(help="Force the file kind (see `skillassay schema`).")] = None,
) -> None:
    """Validate spec files (kind from the file name, or --kind) and skill folders' SKILL.md."""
    from skillassay.validate import validate_paths

    problems = validate_paths(paths, kind)
    for problem in problems:
        err.print(f"[red]error[/red] {problem}", markup=True, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(EXIT_BAD_INPUT)
    out.print(f"{len(paths)} valid")


@app.command()
@handles_input_errors
def schema(name: Annotated[str | None, typer.Argument(help="One kind; all when omitted.")] = None) -> None:
    """Print the JSON Schema of our files, for editors and other tools."""
    from skillassay.validate import json_schemas

    sys.stdout.write(json_schemas(name))


@app.command()
@handles_input_errors
def init(skill_dir: Annotated[Path, typer.Argument(help="An existing skill folder.")]) -> None:
    """Scaffold evals/evals.json and a benchmark config next to an existing skill."""
    from skillassay.scaffold import init_skill

    for path in init_skill(skill_dir):
        out.print(f"wrote {path}")


@app.command()
def grade() -> None:
    """Grade (or re-grade) the runs of an iteration without executing anything."""
    not_built("grade")


@app.command()
def aggregate() -> None:
    """Aggregate graded runs into benchmark.json and benchmark.md."""
    not_built("aggregate")


@app.command()
def compare() -> None:
    """Compare an iteration with the previous one: deltas, regressions, improvements."""
    not_built("compare")


@app.command()
def report() -> None:
    """Write report.md for an iteration."""
    not_built("report")


@app.command()
def gate() -> None:
    """Check thresholds; exit 0 pass, 1 fail, 3 inconclusive."""
    not_built("gate")


@app.command()
def view() -> None:
    """Open the review viewer for an iteration (or write a static HTML file)."""
    not_built("view")


def main() -> None:  # pragma: no cover
    app()
