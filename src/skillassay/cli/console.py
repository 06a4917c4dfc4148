"""The consoles every command prints to, and the wrapper that turns bad input into exit 2.

Shared by the command modules (main, improve) so that none of them imports another."""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import platformdirs
import typer
from rich.console import Console
from rich.markup import escape

from skillassay.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, InputError

# markup off by default: printed text carries eval names, evidence and paths, which may
# contain [brackets]; calls that want styling opt in and escape what they interpolate.
err = Console(stderr=True, soft_wrap=True, markup=False)
out = Console(soft_wrap=True, markup=False)


def parse_options(items: list[str]) -> dict[str, Any]:
    """`-o KEY=VALUE` executor options; a VALUE that parses as JSON is taken as JSON."""
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


def handles_input_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input becomes a message naming file and field, and exit 2 — never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                err.print(f"[red]error[/red] {escape(str(problem))}", markup=True, highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper


def crash_log_dir() -> Path:
    return platformdirs.user_log_path("skillassay")


def write_crash_log(exc: BaseException) -> Path:
    """The traceback, redacted (exception text can carry a key), in our user log folder, else in
    the temp folder: the user gets a file to attach to a bug report, not a screenful."""
    from skillassay.store.redact import redact

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    text = redact(f"skillassay {' '.join(sys.argv[1:])}\n\n" + "".join(traceback.format_exception(exc)))
    for folder in (crash_log_dir(), Path(tempfile.gettempdir())):
        path = folder / f"crash-{stamp}-{os.getpid()}.log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    raise exc


def run_app(app: Callable[[], Any]) -> None:
    """Run the CLI. An exception that reaches here is a bug in skillassay, not a verdict and not
    bad input: one line says so, the traceback goes to a log file, and the exit code is our own
    (EXIT_INTERNAL), so CI never reads a crash as a failed threshold (1) or a pass."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        try:
            where = f"traceback in {write_crash_log(exc)}"
        except Exception:  # noqa: BLE001 - cannot write anywhere: the traceback goes to stderr
            traceback.print_exc()
            where = "traceback above"
        err.print(f"internal error (a bug in skillassay, please report it): {type(exc).__name__}: "
                  f"{str(exc).splitlines()[0] if str(exc) else ''} - {where}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)


# --judge-model of run, grade, compare-blind and analyze: one option, one help text.
JudgeModelOpt = Annotated[str | None, typer.Option(
    "--judge-model",
    help="Model for the openai/anthropic judge (default: $SKILLASSAY_JUDGE_MODEL, else gpt-4o-mini / claude-sonnet-4-5).")]


@contextmanager
def count_bar(console: Console, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """An update(done, total) callback drawing a bar that vanishes when done; None when the
    console is not a terminal, so logs only get the command's result lines."""
    if not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
