"""The crashes (exit 70) fuzzing found, each as the command a user would run: a schema-valid
config with a 0 threshold, a list where iteration.json has the executor's model, an
eval_metadata.json nested 100,000 deep, and wrong types in comparison_previous.json and
benchmark.json. Each ends with a verdict or with exit 2 naming the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke

CLEAN = {0, 1, 2, 3}


def cli(*args: str | Path) -> tuple[int, str]:
    result = invoke(*args)
    if result.crashed:
        raise result.exception  # the traceback is the finding
    return result.exit_code, result.output


def small_skill(root: Path, example: Path, thresholds: dict | None = None) -> Path:
    skill = root / "acme-vpn"
    shutil.copytree(example, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text())
    evals["evals"] = evals["evals"][:3]
    evals_path.write_text(json.dumps(evals))
    if thresholds is not None:
        config_path = skill / "evals" / "benchmark_config.json"
        config = json.loads(config_path.read_text())
        config["thresholds"] = thresholds
        config_path.write_text(json.dumps(config))
    return skill


@pytest.fixture(scope="module")
def two_iterations(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace made by `run` (echo executor): iteration-2 compared with iteration-1."""
    from conftest import EXAMPLE

    root = tmp_path_factory.mktemp("fuzz70")
    skill = small_skill(root, EXAMPLE)
    for n in (1, 2):
        code, out = cli("run", skill, "--executor", "echo", "--trials", "1", "--workspace", root / "ws")
        assert code in CLEAN, out
        (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + f"\nChange {n}.\n")
    assert (root / "ws" / "iteration-2" / "comparison_previous.json").is_file()
    return root / "ws"


@pytest.fixture
def ws(two_iterations: Path, tmp_path: Path) -> Path:
    shutil.copytree(two_iterations, tmp_path / "ws")
    return tmp_path / "ws"


@pytest.mark.parametrize("thresholds", [{"max_avg_tokens": 0}, {"max_avg_duration_seconds": 0},
                                        {"min_improvement_ratio": 0}, {"min_pass_rate": 0}])
def test_a_zero_threshold_gives_a_verdict_in_run_gate_and_view(example_skill: Path, tmp_path: Path,
                                                               thresholds: dict) -> None:
    skill = small_skill(tmp_path / "s", example_skill, thresholds)
    code, out = cli("run", skill, "--executor", "echo", "--trials", "2", "--workspace", tmp_path / "ws")
    assert code in {0, 1, 3}, out
    it = tmp_path / "ws" / "iteration-1"
    assert (it / "benchmark.json").is_file()
    assert cli("gate", it)[0] in {0, 1, 3}
    assert cli("view", it, "--static", tmp_path / "page.html")[0] == 0


def test_a_list_as_the_executor_model_is_bad_input_naming_it(ws: Path) -> None:
    path = ws / "iteration-2" / "iteration.json"
    record = json.loads(path.read_text())
    record["executor"]["model"] = ["a", "b"]
    path.write_text(json.dumps(record))
    code, out = cli("grade", ws / "iteration-2")
    assert code == 2
    assert "iteration.json" in out and "executor.model" in out


def test_an_eval_metadata_nested_100000_deep_does_not_crash_compare(ws: Path) -> None:
    (ws / "iteration-2" / "eval-1-server-port" / "eval_metadata.json").write_text("[" * 100_000 + "]" * 100_000)
    code, out = cli("compare", ws / "iteration-2")
    assert code in CLEAN, out


COMPARISON_DAMAGE = [("metrics", "x"), ("metrics", {"pass_rate": "x"}), ("metrics", {"pass_rate": {"delta": "x"}}),
                     ("suite", "x"), ("suite", {"pass_rate_delta": "x"}), ("notes", "abc"), ("notes", [1]),
                     ("previous", "x"), ("previous", {"iteration": []}), ("q", "x")]


def test_report_on_wrong_types_in_comparison_rows(ws: Path) -> None:
    path = ws / "iteration-2" / "comparison_previous.json"
    data = json.loads(path.read_text())
    for damage in ({"p_value": "x"}, {"delta": "x"}, {"current": "x", "previous": []}, {"eval_name": 5}):
        rows = [{**r, **damage} for r in data["per_eval"]]
        path.write_text(json.dumps({**data, "per_eval": rows}))
        code, out = cli("report", ws / "iteration-2")
        assert code in CLEAN, (damage, out)


BENCHMARK_DAMAGE = [("statistics", "x"), ("statistics", {"gates": "x"}), ("statistics", {"per_eval": "x"}),
                    ("statistics", {"paired": "x"}), ("statistics", {"power": "x"}), ("per_eval", "x"),
                    ("notes", "x"), ("run_summary", "x"), ("trigger_conditioned", "x"),
                    ("trigger_conditioned", {"overall": "x"})]


@pytest.mark.parametrize(("name", "key", "value"), [("comparison_previous.json", k, v) for k, v in COMPARISON_DAMAGE]
                         + [("benchmark.json", k, v) for k, v in BENCHMARK_DAMAGE])
def test_report_on_wrong_types_in_a_section(ws: Path, name: str, key: str, value: object) -> None:
    path = ws / "iteration-2" / name
    data = json.loads(path.read_text())
    data[key] = value
    path.write_text(json.dumps(data))
    code, out = cli("report", ws / "iteration-2")
    assert code in CLEAN, out
    if code == 2:
        assert name in out


def test_a_lone_surrogate_in_metrics_is_written_back_escaped_by_grade(ws: Path) -> None:
    """Run files of other tools may hold one (they are read as written): grading carries the
    error text into grading.json, which must still be written."""
    path = ws / "iteration-2" / "eval-1-server-port" / "with_skill" / "run-1" / "outputs" / "metrics.json"
    metrics = json.loads(path.read_text())
    path.write_text(json.dumps({**metrics, "status": "error", "error": "x"}).replace('"x"', '"\\udfff tail"'))
    code, out = cli("grade", ws / "iteration-2")
    assert code in CLEAN, out
    grading = (path.parent.parent / "grading.json").read_text()
    assert "\\udfff tail" in grading


def _set_everywhere(data: Any, key: str, field: str, value: Any) -> int:
    """Set `field` of every dict found under `key` in `data`; how many were set."""
    found = 0
    if isinstance(data, dict):
        for k, v in data.items():
            if k == key and isinstance(v, dict):
                v[field] = value
                found += 1
            else:
                found += _set_everywhere(v, key, field, value)
    elif isinstance(data, list):
        found += sum(_set_everywhere(v, key, field, value) for v in data)
    return found


@pytest.mark.parametrize("key", ["duration_ratio", "pass_rate_difference", "improvement_ratio"])
def test_an_interval_of_one_bound_in_benchmark_json_does_not_crash_report(ws: Path, key: str) -> None:
    """Fuzzing (seed 3): an interval [2.39] in benchmark.json's statistics made `report` raise
    IndexError (exit 70) in formatting.fmt_interval."""
    path = ws / "iteration-2" / "benchmark.json"
    bench = json.loads(path.read_text())
    assert _set_everywhere(bench, key, "interval", [2.396385]) > 0
    path.write_text(json.dumps(bench))
    code, out = cli("report", ws / "iteration-2")
    assert code in CLEAN, out


@pytest.mark.parametrize(("field", "value"), [("passes", -111111111111111111111111111111), ("passes", 2),
                                              ("trials_completed", 10**30)])
def test_impossible_counts_in_history_json_are_bad_input(ws: Path, field: str, value: int) -> None:
    """Fuzzing (seed 3): passes -111...1 (30 digits) in history.json's per_eval made `history
    record` raise OverflowError (exit 70) in the exact test; a count no run can have is refused
    naming the field."""
    assert cli("history", "record", ws / "iteration-1")[0] == 0
    path = ws / "history.json"
    data = json.loads(path.read_text())
    data["iterations"][0]["per_eval"][0][field] = value
    path.write_text(json.dumps(data))
    code, out = cli("history", "record", ws / "iteration-2")
    assert code == 2, out
    assert "history.json" in out and f"per_eval[0].{field}" in out, out


@pytest.mark.parametrize(("field", "value"), [("total_duration_seconds", 5.387911206156614e+268),
                                              ("executor_duration_seconds", 1e300), ("duration_ms", 10**40)])
def test_an_impossible_duration_in_timing_json_is_reported_not_crashed_on(ws: Path, field: str, value: Any) -> None:
    """Fuzzing (seed 3): total_duration_seconds 5.4e268 in one timing.json made `aggregate`
    raise OverflowError (exit 70) in the geometric mean of the duration ratios. Now the file is
    reported, naming the field, and its figures are missing, as for any damaged timing.json."""
    path = next((ws / "iteration-2").glob("eval-*/with_skill/run-1/timing.json"))
    timing = json.loads(path.read_text())
    timing[field] = value
    path.write_text(json.dumps(timing))
    code, out = cli("aggregate", ws / "iteration-2")
    assert code in CLEAN, out
    assert "timing.json" in out and field in out, out


def test_a_per_eval_row_without_its_eval_id_does_not_crash_report(ws: Path) -> None:
    """Fuzzing (seed 2): statistics.per_eval[1] = {} in benchmark.json made `report` raise
    KeyError (exit 70) in compare.eval_label; a row that names no eval is left out."""
    path = ws / "iteration-2" / "benchmark.json"
    bench = json.loads(path.read_text())
    bench["statistics"]["per_eval"][1] = {}
    path.write_text(json.dumps(bench))
    code, out = cli("report", ws / "iteration-2")
    assert code in CLEAN, out
