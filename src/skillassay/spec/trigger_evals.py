"""The trigger eval set: skill-creator's `evals/trigger_evals.json`, a JSON list of
`{"query": ..., "should_trigger": true|false}`. Read once, checked whole: every bad entry is
named by file and field (exit 2) before a single run is spent. Here, below `triggers/` and
`run/`, so `skillassay validate` checks the file with the very reader `triggers` uses."""

from __future__ import annotations

from pathlib import Path

from skillassay.errors import InputError, Problem
from skillassay.models.triggers import TriggerEvalSet, TriggerQuery
from skillassay.store.jsonio import parse_model, read_json

TRIGGER_EVALS_FILE = Path("evals") / "trigger_evals.json"
KIND = "trigger_evals"  # validate's kind for the file, from its name or --kind


def load_trigger_queries(path: Path) -> list[TriggerQuery]:
    """The queries in file order (their index is their identity in every output)."""
    data = read_json(Path(path))
    if not isinstance(data, list):
        raise InputError.one(path, "", 'expected a JSON list of {"query": ..., "should_trigger": true|false}')
    queries = parse_model(data, TriggerEvalSet, path).root
    seen: dict[str, int] = {}
    for i, q in enumerate(queries):
        if q.query in seen:
            raise InputError.one(path, f"$[{i}].query", f"repeats query [{seen[q.query]}]: each query must be "
                                 "distinct (its runs are one cluster in the statistics)")
        seen[q.query] = i
    return queries


def trigger_eval_problems(path: Path) -> list[Problem]:
    """load_trigger_queries' refusals as a list ([]: `triggers` will read the file)."""
    try:
        load_trigger_queries(path)
    except InputError as exc:
        return exc.problems
    except RecursionError:  # json.loads on e.g. 100000 nested "[": not an InputError there
        return [Problem(str(path), "", "invalid JSON: nested too deeply to read")]
    return []


__all__ = ["KIND", "TRIGGER_EVALS_FILE", "load_trigger_queries", "trigger_eval_problems"]
