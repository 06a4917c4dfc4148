"""The consoles every command prints to, and the wrapper that turns bad input into exit 2.

Shared by the command modules (main, improve) so that none of them imports another."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from skillassay.errors import EXIT_BAD_INPUT, InputError

# markup off by default: printed text carries eval names, evidence and paths, which may
# contain [brackets]; calls that want styling opt in and escape what they interpolate.
err = Console(stderr=True, soft_wrap=True, markup=False)
out = Console(soft_wrap=True, markup=False)


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
