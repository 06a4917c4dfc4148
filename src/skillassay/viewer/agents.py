"""A matrix iteration's agents, for the viewer (issue 37): with two or more agents each one's
runs live under agents/<name>/, itself laid out as a skill-creator iteration. Which folders
count: real directories (no symlink) whose name is a valid agent name, in iteration.json's
order, so a folder a user dropped there with another name is never read."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from skillassay.store.jsonio import load_json_lenient

AGENTS_DIR = "agents"
AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")


def agent_names(iteration_dir: Path) -> list[str]:
    """The agents of a matrix iteration ([] for a single-agent one): iteration.json's `agents`
    first, in its order, then any other agent folder by name."""
    root = iteration_dir / AGENTS_DIR
    if root.is_symlink() or not root.is_dir():
        return []
    try:
        with os.scandir(root) as entries:
            present = {e.name for e in entries if e.is_dir(follow_symlinks=False) and AGENT_NAME.fullmatch(e.name)}
    except OSError:
        return []
    record = load_json_lenient(iteration_dir / "iteration.json")
    listed = record.get("agents") if isinstance(record, dict) else None
    names = [a.get("name") for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    ordered = [n for n in dict.fromkeys(names) if isinstance(n, str) and n in present]
    return ordered + sorted(present - set(ordered))


def matrix_view(iteration_dir: Path) -> dict[str, Any] | None:
    """matrix.json for the Benchmark tab: the verdict, one row per agent and the answers across
    agents in words; None without a matrix.json, a note when it cannot be read (never a 500)."""
    path = iteration_dir / "matrix.json"
    if not path.is_file():
        return None
    from pydantic import ValidationError

    from skillassay.models.matrix import MatrixSummary

    try:
        summary = MatrixSummary.model_validate(load_json_lenient(path))
    except ValidationError as exc:
        return {"note": f"matrix.json could not be read ({exc.error_count()} problem(s)): `skillassay validate` it"}
    h, pooled = summary.heterogeneity, summary.pooled
    return {
        "verdict": summary.verdict, "message": summary.message,
        "agents": [{"name": a.name, "executor": a.executor, "model": a.model, "required": a.required,
                    "verdict": a.verdict, "with_skill": a.with_skill_pass_rate, "baseline": a.baseline_pass_rate,
                    "effect": a.effect, "interval": a.effect_interval, "cost": a.cost_usd, "tokens": a.tokens,
                    "seconds": a.duration_seconds, "reasons": a.reasons} for a in summary.agents],
        "heterogeneity": h.explanation, "pairs": [f"{' vs '.join(p.agents)}: p {p.p_adjusted:.3g} (Holm)"
                                                  for p in h.pairs if p.differs and p.p_adjusted is not None],
        "pooled": {"effect": pooled.effect, "interval": pooled.interval, "reason": pooled.reason},
    }
