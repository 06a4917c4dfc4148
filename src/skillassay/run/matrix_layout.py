"""The top `iteration.json` of a matrix iteration: what resumes it (its fingerprint) and the
agents it measures (name, executor, model, a hash of the options, required). Each agent's own
settings and provenance are in `agents/<name>/iteration.json`, written as a one-agent run's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillassay.models.agents import AgentConfig
from skillassay.run.plan import hash_value
from skillassay.store.agents_layout import AGENTS_DIR, agent_dir
from skillassay.store.jsonio import now_iso, read_json, write_json

if TYPE_CHECKING:
    from skillassay.run.engine import Prepared

__all__ = ["AGENTS_DIR", "agent_dir", "write_matrix_record"]


def agent_entry(agent: AgentConfig, identity: dict[str, Any]) -> dict[str, Any]:
    """An agent as recorded: its options only as a hash (they may hold keys or paths; its own
    iteration.json has what ran, masked as every run record is)."""
    return {"name": agent.name, "executor": agent.executor, "model": identity.get("model") or agent.model,
            "options_sha256": hash_value(agent.options), "required": agent.required}


def write_matrix_record(top: Path, number: int, fingerprint: dict[str, str], p: Prepared,
                        agents: list[tuple[AgentConfig, dict[str, Any]]], trials: int) -> str | None:
    """Written before any trial runs, so a killed run resumes this iteration; returns the skill
    snapshot hash it recorded before (write_snapshot keeps a snapshot that still matches it)."""
    path = top / "iteration.json"
    previous = read_json(path) if path.is_file() else {}
    previous = previous if isinstance(previous, dict) else {}
    started = previous.get("started_at")
    recorded = previous.get("snapshot_sha256")
    write_json(path, {
        "schema_version": 1, "iteration": number, "started_at": started if isinstance(started, str) else now_iso(),
        "fingerprint": fingerprint, "skill_name": p.skill.name, "skill_path": str(p.skill.path),
        "evals_path": str(p.evals_path.resolve()), "trials_per_eval": trials, "seed": p.seed,
        "baseline_type": p.config.baseline_type, "config_path": str(p.config_path) if p.config_path else None,
        "snapshot_sha256": recorded if isinstance(recorded, str) else None,
        "agents": [agent_entry(agent, identity) for agent, identity in agents],
    })
    return recorded if isinstance(recorded, str) else None


def record_snapshot(top: Path, snapshot_hash: str) -> None:
    path = top / "iteration.json"
    record = read_json(path)
    if isinstance(record, dict) and record.get("snapshot_sha256") != snapshot_hash:
        write_json(path, {**record, "snapshot_sha256": snapshot_hash})
