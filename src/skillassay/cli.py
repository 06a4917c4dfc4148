"""The command line: each command parses options, calls one library function, renders the
result. Exit codes (one table for every command): 0 pass, 1 fail, 2 bad input, 3 inconclusive."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skillassay.errors import EXIT_BAD_INPUT, InputError
from skillassay.gate import GateResult

app = typer.Typer(
    name="skillassay",
    help="Does this Agent Skill really help? Benchmark it with and without, with honest statistics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)


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


def _exit_with_gate(gate_result: GateResult, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(gate_result.to_dict(), indent=2) + "\n")
    else:
        for t in gate_result.thresholds:
            err.print(f"  {t.line()}", highlight=False, soft_wrap=True)
        err.print(f"gate: [bold]{gate_result.status}[/bold]")
    raise typer.Exit(gate_result.exit_code)


@app.command()
@handles_input_errors
def run(
    skill_dir: Annotated[Path, typer.Argument(help="The skill folder (with SKILL.md).")],
    evals: Annotated[Path | None, typer.Option(help="Eval set (default SKILL_DIR/evals/evals.json).")] = None,
    config: Annotated[Path | None, typer.Option(help="Benchmark config JSON (trials, baseline, thresholds).")] = None,
    trials: Annotated[int | None, typer.Option(min=1, help="Trials per eval and configuration.")] = None,
    executor: Annotated[str | None, typer.Option(help="Executor plugin (default: local embedded model).")] = None,
    workspace: Annotated[Path | None, typer.Option(help="Workspace (default <skill>-workspace beside it).")] = None,
    iteration: Annotated[int | None, typer.Option(min=1, help="Use this iteration number.")] = None,
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
) -> None:
    """Run every eval N times with the skill and N times without, grade, aggregate, gate.

    Resumes the latest iteration when nothing changed; starts the next one (and says why)
    when the skill, the evals or the executor settings changed."""
    from skillassay.engine import RunRequest, run_benchmark
    from skillassay.progress import LineProgress, RichProgress

    req = RunRequest(skill_dir=skill_dir, evals_path=evals, config_path=config, trials=trials,
                     executor=executor, workspace=workspace, iteration=iteration,
                     concurrency=concurrency, timeout_seconds=timeout, model=model,
                     temperature=temperature, max_tokens=max_tokens, seed=seed,
                     executor_options=parse_options(option or []), strict=strict,
                     point_estimate=point_estimate)
    progress = RichProgress(err) if err.is_terminal else LineProgress(err)
    outcome = run_benchmark(req, progress)
    s = outcome.benchmark.summary
    err.print(f"iteration {outcome.choice.number}: {outcome.executed} trials run "
              f"({outcome.failed} failed), {outcome.skipped} reused -> {outcome.iteration_dir}/benchmark.json",
              highlight=False)
    if s is not None:
        err.print(f"pass rate with skill {_pct(s.with_skill.pass_rate)}, baseline "
                  f"{_pct(s.baseline.pass_rate)}, improvement ratio "
                  f"{'n/a' if s.improvement_ratio is None else f'{s.improvement_ratio:.2f}x'}",
                  highlight=False)
    _exit_with_gate(outcome.gate, as_json)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.0f}%"


def parse_options(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError.one("--option", item, "expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


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


@app.command("executors")
def executors_cmd() -> None:
    """List installed executors and whether each can run here (keys, servers, binaries)."""
    from rich.table import Table

    from skillassay.executors import executor_names, load_executor_class

    table = Table("name", "usable", "reason")
    for name in executor_names():
        try:
            usable, reason = load_executor_class(name).availability()
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the others
            usable, reason = False, f"failed to load: {type(exc).__name__}: {exc}"
        table.add_row(name, "yes" if usable else "no", reason)
    out.print(table)


def main() -> None:  # pragma: no cover
    app()
