"""What `triggers --agent ...` prints with two or more agents: one line per agent (recall,
false-trigger rate, its gate) and the gate over the agents (issue 37)."""

# No `from __future__ import annotations`: cli/main.py says why.
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from skillassay.cli.console import err

if TYPE_CHECKING:
    from skillassay.models.triggers import TriggerReport


def print_agent_triggers(report: "TriggerReport", folder: Path, as_json: bool) -> None:
    from skillassay.triggers.report_md import fmt_rate

    if as_json:
        data = report.to_json_dict()
        sys.stdout.write(json.dumps({k: data.get(k) for k in ("skill_name", "recall", "false_trigger_rate",
                                                              "agents", "gate")}, indent=2) + "\n")
        return
    for agent in report.agents or []:
        status = agent.gate.status if agent.gate else "n/a"
        err.print(f"  {escape(agent.name)}: recall {fmt_rate(agent.recall)}; false-trigger rate "
                  f"{fmt_rate(agent.false_trigger_rate)}: {status}", markup=True, highlight=False, soft_wrap=True)
    err.print(f"wrote {folder / 'triggers.json'} and triggers.md (each agent's under {folder / 'agents'})",
              highlight=False, soft_wrap=True)
    if report.gate is not None:
        err.print(f"gate: [bold]{escape(report.gate.headline)}[/bold]", markup=True, highlight=False, soft_wrap=True)
