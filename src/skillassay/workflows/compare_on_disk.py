"""`skillassay compare` and the comparison `run` does after aggregating: find the previous
iteration on disk, read both sides, and write comparison_previous.json. The comparison itself
is pure (analyze/compare.build_comparison)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.analyze.compare import (
    FILENAME,
    Q,
    Side,
    build_comparison,
    eval_content,
    iteration_number,
    records_from_benchmark,
)
from skillassay.errors import InputError
from skillassay.store.discover import METADATA, find_evals
from skillassay.store.iteration_files import find_config, load_config, read_iteration_record
from skillassay.store.jsonio import parse_json_bytes, read_json, write_json
from skillassay.store.records import TrialRecord
from skillassay.workflows.aggregate import collect


def resolve_previous(current: Path, previous: Path | None,
                     config_path: Path | None) -> tuple[Path | None, str]:
    """PREVIOUS, else iteration-(N-1) beside CURRENT, else the config's previous_benchmark
    (relative to the config file; a benchmark.json or its folder). Returns (path, how found)."""
    if previous is not None:
        if not previous.exists():
            raise InputError.one(previous, "PREVIOUS", "not found: expected an iteration folder or benchmark.json")
        return previous, "given on the command line"
    n = iteration_number(current.resolve())
    if n is not None and n > 1:
        sibling = current.resolve().parent / f"iteration-{n - 1}"
        if sibling.is_dir() and has_results(sibling):
            return sibling, f"iteration-{n - 1} beside the current iteration"
    config = load_config(config_path)
    if config.previous_benchmark:
        assert config_path is not None
        target = (config_path.parent / config.previous_benchmark).resolve()
        if not target.exists():
            raise InputError.one(config_path, "$.previous_benchmark", f"{target} not found")
        return target, f"previous_benchmark in {config_path}"
    return None, "no previous iteration and no previous_benchmark in the config"


def has_results(iteration_dir: Path) -> bool:
    """A folder worth comparing against: it has a benchmark.json or at least one graded run."""
    return (iteration_dir / "benchmark.json").is_file() or any(iteration_dir.glob("*/*/run-*/grading.json"))


def has_run_folders(iteration_dir: Path) -> bool:
    return any(iteration_dir.glob("*/*/run-*")) or any(iteration_dir.glob("runs/*/*/run-*")) \
        or any(iteration_dir.glob("*/*/grading.json"))


def load_iteration_records(iteration_dir: Path) -> list[TrialRecord]:
    """Every graded trial of an iteration, in any layout discovery knows (ours, skill-creator's
    legacy `runs/`, flat config folders); eval identity comes from eval_metadata.json."""
    return collect(iteration_dir).records


def read_eval_contents(folder: Path) -> dict[Any, dict[str, str]]:
    """eval id -> eval_content, for the evals of an iteration folder that have an
    eval_metadata.json; evals without one are absent (their content is unknown)."""
    if not folder.is_dir():
        return {}
    out: dict[Any, dict[str, str]] = {}
    for ev in find_evals(folder)[0]:
        try:
            data = parse_json_bytes(Path(ev.path, METADATA).read_bytes())
        except (OSError, ValueError):  # JSONLimitError (nested 100,000 deep, say) included
            continue  # discovery already warned about an unreadable one
        if isinstance(data, dict):
            out[ev.eval_id] = eval_content(data)
    return out


def load_side(path: Path, records: list[TrialRecord] | None = None) -> Side:
    """An iteration folder (runs, else its benchmark.json) or a benchmark.json file."""
    folder = path.parent if path.is_file() else path
    bench_path = path if path.is_file() else path / "benchmark.json"
    bench = read_json(bench_path) if bench_path.is_file() else {}
    if not isinstance(bench, dict):
        raise InputError.one(bench_path, "$", "expected a JSON object")
    if records is None:
        if path.is_dir() and has_run_folders(path) or not bench:
            records = load_iteration_records(folder)  # raises InputError saying what was looked for
        else:
            records = records_from_benchmark(bench, bench_path)
    return Side(folder, records, bench, read_iteration_record(folder), read_eval_contents(folder))


def _seed(side: Side) -> int:
    s = side.record.get("seed")
    return s if isinstance(s, int) and not isinstance(s, bool) else 0


def compare(current: Path, previous: Path | None = None, config: Path | None = None, *,
            q: float = Q, write: bool = True) -> dict[str, Any] | None:
    """`skillassay compare`: find PREVIOUS, compare, write CURRENT/comparison_previous.json.
    None when there is nothing to compare against (first iteration, no previous_benchmark)."""
    if not current.is_dir():
        raise InputError.one(current, "CURRENT", "not a folder: expected an iteration folder (iteration-N)")
    cfg = find_config(current, config)
    prev_path, how = resolve_previous(current, previous, cfg)
    if prev_path is None:
        return None
    cur_side = load_side(current)
    result = build_comparison(cur_side, load_side(prev_path), q=q, seed=_seed(cur_side))
    result["previous"]["found"] = how
    if write:
        write_json(current / FILENAME, result)
    return result


def compare_after_run(iteration_dir: Path, records: list[TrialRecord], config_path: Path | None) -> dict[str, Any] | None:
    """The comparison `run` does after aggregating, when there is something to compare with.
    A previous iteration with no usable runs (a killed first attempt) is skipped, not fatal."""
    prev_path, how = resolve_previous(iteration_dir, None, config_path)
    if prev_path is None:
        return None
    try:
        prev = load_side(prev_path)
    except InputError:
        if how.startswith("previous_benchmark"):
            raise
        return None
    cur = load_side(iteration_dir, records)
    result = build_comparison(cur, prev, seed=_seed(cur))
    result["previous"]["found"] = how
    write_json(iteration_dir / FILENAME, result)
    return result
