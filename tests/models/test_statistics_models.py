"""benchmark.json's `statistics` and `adaptive` sections and comparison_previous.json are typed
(models/statistics.py, adaptive.py, comparison.py): `skillassay schema` describes every figure
with a description, a value of the wrong type is an input error naming the field, and the
files written by earlier releases (tests/fixtures/golden_ws) still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import cli

from skillassay.models import Benchmark
from skillassay.models.adaptive import AdaptiveDesign
from skillassay.models.comparison import IterationComparison
from skillassay.models.cost import Cost
from skillassay.models.matrix import MatrixSummary
from skillassay.models.statistics import Statistics
from skillassay.models.turns import TurnsSection

GOLDEN = repo_paths.FIXTURES / "golden_ws" / "workspace" / "iteration-1"


def _described(model: Any) -> list[str]:
    """Fields of the model (and the models it nests) that have no description."""
    out = []
    for name, field in model.model_fields.items():
        if not field.description:
            out.append(f"{model.__name__}.{name}")
    return out


@pytest.mark.parametrize("model", [Statistics, AdaptiveDesign, IterationComparison, Cost, MatrixSummary, TurnsSection])
def test_every_field_has_a_description(model: Any) -> None:
    seen: set[type] = set()
    missing: list[str] = []

    def walk(m: Any) -> None:
        if m in seen:
            return
        seen.add(m)
        missing.extend(_described(m))
        for field in m.model_fields.values():
            for arg in _models_in(field.annotation):
                walk(arg)

    walk(model)
    assert missing == []


def _models_in(annotation: Any) -> list[Any]:
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in get_args(annotation) for m in _models_in(a)]


def test_schema_describes_the_statistics() -> None:
    result = cli(["schema", "benchmark"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    defs = schema["$defs"]
    assert {"Statistics", "GateFigure", "PairedStatistics", "AdaptiveEval"} <= set(defs)
    gate = defs["GateFigure"]["properties"]["decision"]
    assert "pass, fail or undecided" in gate["description"]
    comparison = json.loads(cli(["schema", "comparison_previous"]).stdout)
    assert "MetricChange" in comparison["$defs"]


def test_golden_workspace_files_still_read() -> None:
    bench = json.loads((GOLDEN / "benchmark.json").read_text())
    assert Benchmark.model_validate(bench).statistics == bench["statistics"]  # kept as read
    Statistics.model_validate(bench["statistics"])


def test_a_wrong_type_in_statistics_is_an_input_error_naming_the_field(tmp_path: Path) -> None:
    bench = json.loads((GOLDEN / "benchmark.json").read_text())
    bench["statistics"]["paired"]["pass_rate_difference"]["p_value"] = "0.03"  # a number as a string
    it = tmp_path / "iteration-1"
    it.mkdir()
    (it / "benchmark.json").write_text(json.dumps(bench))
    result = cli(["gate", str(it)])
    assert result.exit_code == 2, result.output
    assert "statistics.paired.pass_rate_difference.p_value" in result.output
    assert "Traceback" not in result.output


def test_a_wrong_type_in_comparison_is_named(tmp_path: Path) -> None:
    from skillassay.errors import InputError
    from skillassay.store.iteration_files import load_comparison

    it = tmp_path / "iteration-2"
    it.mkdir()
    data = {"schema_version": 1, "kind": "iteration_comparison", "current": {"path": "x", "iteration": 2},
            "previous": {"path": "y", "iteration": 1}, "per_eval": [{"eval_id": 1, "label": "unchanged"}],
            "metrics": {"pass_rate": {"delta": [0.1]}}}
    (it / "comparison_previous.json").write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_comparison(it)
    assert "$.metrics.pass_rate.delta" in str(err.value)


def test_iteration_json_records_what_produced_it(example_skill: Path, tmp_path: Path) -> None:
    from skillassay import __version__
    from skillassay.models.iteration import IterationRecord

    ws = tmp_path / "ws"
    result = cli(["run", str(example_skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws)])
    assert result.exit_code in (0, 1, 3), result.output
    record = json.loads((ws / "iteration-1" / "iteration.json").read_text())
    versions = record["versions"]
    assert versions["skillassay"] == __version__
    assert versions["executor"] == {"name": "echo", "distribution": "skillassay", "version": __version__}
    assert {a["name"] for a in versions["assertions"]} >= {"contains", "regex"}
    IterationRecord.model_validate(record)
