"""The trigger eval set `triggers` and `optimize-description` read: spec.trigger_evals reads
and checks it (there, so `validate` checks it with the same code)."""

from __future__ import annotations

from pathlib import Path

from skillassay.spec.trigger_evals import TRIGGER_EVALS_FILE, load_trigger_queries

DEFAULT_QUERIES = TRIGGER_EVALS_FILE
load_queries = load_trigger_queries


def default_queries_path(skill_dir: Path) -> Path:
    return Path(skill_dir) / DEFAULT_QUERIES


__all__ = ["DEFAULT_QUERIES", "default_queries_path", "load_queries"]
