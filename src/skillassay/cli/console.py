"""The consoles every command prints to, and the wrapper that turns bad input into exit 2.

Shared by the command modules (main, improve) so that none of them imports another."""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import json
import os
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn, overload

import platformdirs
import typer
from rich.console import Console
from rich.markup import escape

from skillassay.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_RESUMABLE, InputError, disk_full

# markup off by default: printed text carries eval names, evidence and paths, which may
# contain [brackets]; calls that want styling opt in and escape what they interpolate.
err = Console(stderr=True, soft_wrap=True, markup=False)
out = Console(soft_wrap=True, markup=False)


def latest_if_workspace(folder: Path, doing: str) -> Path:
    """A workspace (iteration-N folders, no runs of its own) stands for its latest iteration,
    for every command that takes an iteration (view, report, history record): an empty page or
    report for it would look like an iteration with no runs. Says which it took."""
    from skillassay.store.discover import find_evals
    from skillassay.store.layout import existing_iterations, iteration_dir

    numbers = existing_iterations(folder)
    if not numbers or (folder / "iteration.json").is_file() or find_evals(folder)[0]:
        return folder
    latest = iteration_dir(folder, numbers[-1])
    err.print(f"{folder} is a workspace: {doing} its latest iteration, {latest.name}", highlight=False)
    return latest


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


_collector_paused = False  # set by pause_collector_for_startup: only the console script pauses it


def pause_collector_for_startup() -> None:
    """Turn the cyclic garbage collector off while the process starts.

    Why: start-up is imports, which build ~10^6 objects that live until exit, and the collector
    traverses them again and again as they pile up (145 young, 13 middle and one full collection
    in a 1-trial run): 0.15 s of its 0.95 s in-process, measured as the median of 9 interleaved
    runs with and without. end_startup turns it back on before the command's work."""
    global _collector_paused
    if gc.isenabled():
        gc.disable()
        _collector_paused = True


def end_startup(modules: Sequence[str] = ()) -> None:
    """Import the command's heavy `modules` while the collector is still paused, then freeze
    what start-up built (never traversed again: later collections are over the command's own
    objects) and turn the collector on. The garbage start-up made is kept, not collected: a
    full collection to free it would cost what the pause saved. A no-op in-process (tests)."""
    global _collector_paused
    for name in modules:
        importlib.import_module(name)
    if _collector_paused:
        _collector_paused = False
        gc.freeze()
        gc.enable()


@overload
def handles_input_errors(fn: Callable[..., Any], /) -> Callable[..., Any]: ...
@overload
def handles_input_errors(*, preload: Sequence[str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...


def handles_input_errors(fn: Callable[..., Any] | None = None, /, *,
                         preload: Sequence[str] = ()) -> Any:
    """Bad input becomes a message naming file and field, and exit 2 — never a traceback.

    The command's start-up ends here (end_startup): `preload` names the modules a command
    imports for its work, imported first with the collector still paused."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                end_startup(preload)
                return fn(*args, **kwargs)
            except InputError as exc:
                from skillassay.store.redact import redact

                for problem in exc.problems:  # a problem can quote a value: a URL's password, a key
                    err.print(f"[red]error[/red] {escape(redact(str(problem)))}", markup=True, highlight=False, soft_wrap=True)
                raise typer.Exit(EXIT_BAD_INPUT) from None

        return wrapper

    return decorate(fn) if fn is not None else decorate


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
    (EXIT_INTERNAL), so CI never reads a crash as a failed threshold (1) or a pass. A full disk
    is no bug either: it exits EXIT_RESUMABLE, saying to free space and run the command again."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if disk_full(exc):  # the machine's state, not a bug: say so, and that resuming is safe
            err.print(f"stopped: the disk is full ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). "
                      "Finished work is kept and what was cut short is redone: free some space and run the same "
                      "command again to resume.", highlight=False, soft_wrap=True)
            sys.exit(EXIT_RESUMABLE)
        try:
            where = f"traceback in {write_crash_log(exc)}"
        except Exception:  # noqa: BLE001 - cannot write anywhere: the traceback goes to stderr
            traceback.print_exc()
            where = "traceback above"
        from skillassay.store.redact import redact

        first = redact(str(exc).splitlines()[0]) if str(exc) else ""
        err.print(f"internal error (a bug in skillassay, please report it): {type(exc).__name__}: "
                  f"{first} - {where}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)


def exit_status(code: str | int | None) -> int:
    """The process status `sys.exit(code)` would give: None is 0, an int is itself, anything
    else is printed to stderr and is 1 (as the interpreter does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def exit_without_teardown(code: str | int | None) -> NoReturn:
    """End the process as `sys.exit(code)` would, minus the interpreter's teardown.

    Why: tearing down the ~500 modules a `run` imports (numpy, pydantic's schemas, scipy,
    jinja2) and freeing their heap took 0.23-0.30 s of a 1.3 s one-trial run on this VM, and
    0.05-0.1 s of `--help` (measured from outside: the process's last statement to its reaping);
    a command-line process gains nothing from it. What exit still owes is done first: the
    standard streams are flushed and the atexit handlers run (weakref finalisers such as
    TemporaryDirectory's, the local model's close, Ray's shutdown). If a non-daemon thread is
    still alive, its work may be unfinished, so the normal exit is taken whole: it joins the
    thread before the atexit handlers close what the thread may still use."""
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    status = exit_status(code)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed or broken pipe: nothing left to deliver
            stream.flush()
    atexit._run_exitfuncs()  # the stdlib's own entry to run them now; none runs twice
    os._exit(status)


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

# --allow-weak-judge of run and grade (grade/judge_check.py): one option, one help text.
AllowWeakJudgeOpt = Annotated[bool, typer.Option(
    "--allow-weak-judge",
    help="Grade with the judge even when its measured agreement with the labelled cases is below the floor "
         "(95% lower bound 80%; `skillassay judge-check` measures it); the report then says so.")]
