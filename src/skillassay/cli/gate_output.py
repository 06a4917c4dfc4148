"""What `run`, `gate` and `merge` print and write once a gate is evaluated: the thresholds and the
verdict (or the gate as JSON), JUnit XML and the GitHub job summary, then the exit code."""

# No `from __future__ import annotations`: cli/main.py says why.
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from skillassay.cli.console import err

if TYPE_CHECKING:
    from skillassay.analyze.gate import GateResult


def exit_with_gate(gate_result: "GateResult", as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(gate_result.to_dict(), indent=2) + "\n")
    else:
        for t in gate_result.thresholds:
            err.print(f"  {t.line()}", highlight=False, soft_wrap=True)
        err.print(f"gate: [bold]{escape(gate_result.headline())}[/bold]", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(gate_result.exit_code)


def write_ci_outputs(bench: Any, gate_result: "GateResult", junit: Path | None,
                      comparison: dict | None = None) -> None:
    """JUnit XML when asked; the job summary whenever $GITHUB_STEP_SUMMARY is set. Neither is
    built (nor their module, with its XML library, imported) when there is nowhere to put it."""
    if junit is None and not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    from skillassay.report.ci_outputs import append_step_summary, github_step_summary, write_junit

    if junit is not None:
        err.print(f"wrote {write_junit(junit, bench, gate_result, comparison)}", highlight=False)
    append_step_summary(github_step_summary(bench, gate_result, comparison))
