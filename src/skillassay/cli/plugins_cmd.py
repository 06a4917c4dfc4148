"""`skillassay plugins`: every plugin of every kind (plugins.py), with the distribution and
version it comes from, without importing any of them (it stays as quick as `executors`).
Registered on the main app by cli/main.py."""

# No `from __future__ import annotations`: cli/main.py says why.
from typing import Annotated

import typer

from skillassay.cli.console import handles_input_errors, out


@handles_input_errors
def plugins_cmd(
    kind: Annotated[str | None, typer.Argument(metavar="KIND", help="Only this kind: executors, assertions, judges, proposers, backends or sandboxes.")] = None,
) -> None:
    """List the installed plugins of every kind (or of KIND): name, distribution, entry point,
    the extra it needs. SKILLASSAY_PLUGINS, when set, limits them to the distributions it names."""
    from rich.table import Table

    from skillassay import plugins
    from skillassay.errors import InputError

    if kind is not None and kind not in plugins.KINDS:
        raise InputError.one("KIND", kind, f"unknown plugin kind; one of: {', '.join(plugins.KINDS)}")
    table = Table("kind", "name", "distribution", "entry point", "extra")
    table.columns[3].overflow = "fold"  # a module path is read whole
    for each in [kind] if kind else plugins.KINDS:
        for _, plugin in sorted(plugins.registered(each).items()):
            table.add_row(each, plugin.name, f"{plugin.distribution} {plugin.version}".strip(), plugin.value,
                          ", ".join(plugin.extras) or "-")
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins_cmd)
