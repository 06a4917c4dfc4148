"""The trigger eval set: skill-creator's `evals/trigger_evals.json`, a JSON list of
`{"query": ..., "should_trigger": true|false}`. Read once, checked whole: every bad entry is
named by file and field (exit 2) before a single run is spent."""

from __future__ import annotations

from pathlib import Path

from skillassay.errors import InputError
from skillassay.models.triggers import TriggerEvalSet, TriggerQuery
from skillassay.store.jsonio import parse_model, read_json

DEFAULT_QUERIES = Path("evals") / "trigger_evals.json"


def default_queries_path(skill_dir: Path) -> Path:
    return Path(skill_dir) / DEFAULT_QUERIES


def load_queries(path: Path) -> list[TriggerQuery]:
    """The queries in file order (their index is their identity in every output)."""
    data = read_json(Path(path))
    if not isinstance(data, list):
        raise InputError.one(path, "", 'expected a JSON list of {"query": ..., "should_trigger": true|false}')
    queries = parse_model(data, TriggerEvalSet, path).root
    seen: dict[str, int] = {}
    for i, q in enumerate(queries):
        if q.query in seen:
            raise InputError.one(path, f"[{i}].query", f"repeats query [{seen[q.query]}]: each query must be distinct "
                                 "(its runs are one cluster in the statistics)")
        seen[q.query] = i
    return queries


__all__ = ["DEFAULT_QUERIES", "default_queries_path", "load_queries"]
