"""The files of an iteration that every later stage reads (iteration.json, the benchmark
config it ran under, comparison_previous.json), found and checked in one place so the report,
the gate and the comparison read them the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.errors import InputError
from skillassay.models import BenchmarkConfig
from skillassay.models.checked import problem_at
from skillassay.models.comparison import IterationComparison
from skillassay.models.iteration import IterationRecord
from skillassay.store.jsonio import load_json_lenient, load_model, parse_model, read_json
from skillassay.store.layout import SNAPSHOT_DIR

COMPARISON_FILENAME = "comparison_previous.json"
COMPARISON_SCHEMA_VERSION = 1


def read_iteration_record(iteration: Path) -> dict[str, Any]:
    """Our own iteration.json (absent in skill-creator workspaces): a source of defaults only,
    so an unreadable one is ignored; but one that reads with wrong types is an input error, since
    its values would flow into benchmark.json and the comparisons."""
    path = iteration / "iteration.json"
    data = load_json_lenient(path)
    return checked_iteration_record(data, path) if isinstance(data, dict) else {}


def checked_iteration_record(data: Any, path: Path) -> dict[str, Any]:
    """`data` itself (a dict) once IterationRecord accepts its types; else InputError naming the field."""
    parse_model(data, IterationRecord, path)
    return dict(data)


def find_config(iteration_dir: Path, explicit: Path | None = None) -> Path | None:
    """The benchmark config that governs an iteration: --config, else the path iteration.json
    recorded (when the engine records one), else the copy in the iteration's skill snapshot,
    else the one next to the skill the iteration ran. A config that was never written is
    simply absent (no thresholds); an explicit path that does not exist is bad input."""
    if explicit is not None:
        if not explicit.is_file():
            raise InputError.one(explicit, "--config", "file not found")
        return explicit
    record = read_iteration_record(iteration_dir)
    candidates = []
    if isinstance(record.get("config_path"), str):
        candidates.append(Path(record["config_path"]))
    candidates.append(iteration_dir / SNAPSHOT_DIR / "evals" / "benchmark_config.json")
    if isinstance(record.get("skill_path"), str):
        candidates.append(Path(record["skill_path"]) / "evals" / "benchmark_config.json")
    return next((c for c in candidates if c.is_file()), None)


def load_config(path: Path | None) -> BenchmarkConfig:
    return load_model(path, BenchmarkConfig) if path is not None else BenchmarkConfig()


def load_comparison(iteration_dir: Path) -> dict[str, Any] | None:
    """comparison_previous.json if present; a file that is not ours (or damaged) is bad input."""
    path = iteration_dir / COMPARISON_FILENAME
    if not path.exists():
        return None
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError.one(path, "$", "expected a JSON object")
    if data.get("schema_version") != COMPARISON_SCHEMA_VERSION:
        raise InputError.one(path, "$.schema_version", f"expected {COMPARISON_SCHEMA_VERSION}, got {data.get('schema_version')!r}")
    rows = data.get("per_eval")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "label" in r and "eval_id" in r for r in rows):
        raise InputError.one(path, "$.per_eval", "expected an array of objects with eval_id and label")
    problem = problem_at(IterationComparison, data)  # checked, then walked as read (models/checked.py)
    if problem is not None:
        raise InputError.one(path, *problem)
    return data
