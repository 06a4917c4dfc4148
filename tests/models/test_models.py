"""The data-contract models against the spec's own examples (golden copies in fixtures/spec)."""

from __future__ import annotations

import copy
import json

import pytest
import repo_paths

from skillassay.errors import InputError
from skillassay.models import MODELS, Assertion, Benchmark, EvalSet, SpecModel
from skillassay.store.jsonio import load_model, parse_model

SPEC = repo_paths.FIXTURES / "spec"

# fixture file -> kind; every spec example, plus skill-creator's eval_metadata and feedback.
EXAMPLES = {
    "evals.json": "evals",
    "eval_metadata.json": "eval_metadata",
    "grading.json": "grading",
    "metrics.json": "metrics",
    "timing.json": "timing",
    "history.json": "history",
    "benchmark_skill_creator.json": "benchmark",
    "benchmark_process.json": "benchmark",
    "comparison.json": "comparison",
    "analysis.json": "analysis",
    "feedback.json": "feedback",
    "config.json": "config",
    "triggers.json": "triggers",
    "description_history.json": "description_history",
    "comparison_previous.json": "comparison_previous",
    "iteration.json": "iteration",
    "matrix.json": "matrix",
}


def roundtrip(model: SpecModel) -> dict:
    return json.loads(json.dumps(model.to_json_dict()))


def test_every_kind_has_a_fixture() -> None:
    assert set(EXAMPLES.values()) == set(MODELS)
    assert sorted(p.name for p in SPEC.glob("*.json")) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_spec_example_roundtrips_exactly(name: str) -> None:
    path = SPEC / name
    model = load_model(path, MODELS[EXAMPLES[name]])
    assert roundtrip(model) == json.loads(path.read_text(encoding="utf-8"))


# Hand-written inputs (benchmark config, eval set) refuse unknown keys instead: tests/run/test_preflight.py.
OPEN = sorted(name for name, kind in EXAMPLES.items() if kind not in {"config", "evals"})


@pytest.mark.parametrize("name", OPEN)
def test_unknown_fields_survive_at_top_level(name: str) -> None:
    data = json.loads((SPEC / name).read_text(encoding="utf-8"))
    data["x_our_tool"] = {"schema_version": 1, "list": [1, "two", None]}
    model = parse_model(data, MODELS[EXAMPLES[name]], name)
    assert roundtrip(model)["x_our_tool"] == {"schema_version": 1, "list": [1, "two", None]}


def test_unknown_fields_survive_when_nested() -> None:
    data = json.loads((SPEC / "evals.json").read_text(encoding="utf-8"))
    # an assertion's parameters are its plugin's business, so they stay open
    data["evals"][0]["expectations"].append({"type": "regex", "pattern": "\\d+", "x_note": "n"})
    out = roundtrip(parse_model(data, EvalSet, "evals.json"))
    assert out["evals"][0]["expectations"][-1] == {"type": "regex", "pattern": "\\d+", "x_note": "n"}

    bench = json.loads((SPEC / "benchmark_skill_creator.json").read_text(encoding="utf-8"))
    bench["run_summary"]["with_skill"]["tokens"]["p95"] = 4000
    bench["runs"][0]["result"]["cost_usd"] = 0.01
    out = roundtrip(parse_model(bench, Benchmark, "benchmark.json"))
    assert out["run_summary"]["with_skill"]["tokens"]["p95"] == 4000
    assert out["runs"][0]["result"]["cost_usd"] == 0.01


def test_typed_assertion_and_plain_string_expectations() -> None:
    data = json.loads((SPEC / "eval_metadata.json").read_text(encoding="utf-8"))
    meta = parse_model(data, MODELS["eval_metadata"], "eval_metadata.json")
    plain, typed = meta.expectations
    assert plain == "The output includes X"
    assert isinstance(typed, Assertion)
    assert typed.type == "contains" and typed.params == {"value": "4433"} and not typed.negate


def test_benchmark_with_both_shapes_validates_and_roundtrips() -> None:
    both = json.loads((SPEC / "benchmark_skill_creator.json").read_text(encoding="utf-8"))
    both.update(json.loads((SPEC / "benchmark_process.json").read_text(encoding="utf-8")))
    both["statistics"] = {"schema_version": 1, "improvement": {"ci95": [0.1, 0.4]}}
    model = parse_model(both, Benchmark, "benchmark.json")
    assert model.runs is not None and model.summary is not None
    assert model.run_summary is not None
    assert set(model.run_summary.configs()) == {"with_skill", "without_skill"}
    assert roundtrip(model) == both


def test_benchmark_with_neither_shape_is_rejected() -> None:
    with pytest.raises(InputError) as info:
        parse_model({"notes": []}, Benchmark, "benchmark.json")
    assert "skill-creator fields" in str(info.value)


def test_run_summary_error_names_the_configuration() -> None:
    bench = json.loads((SPEC / "benchmark_skill_creator.json").read_text(encoding="utf-8"))
    del bench["run_summary"]["without_skill"]["tokens"]
    with pytest.raises(InputError) as info:
        parse_model(bench, Benchmark, "benchmark.json")
    assert "$.run_summary.without_skill.tokens" in str(info.value)


def test_unset_optional_fields_are_not_written_as_null() -> None:
    data = {"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]}
    out = parse_model(data, EvalSet, "evals.json").to_json_dict()
    assert "expected_output" not in out["evals"][0] and "assertions" not in out["evals"][0]
    assert "files" not in out["evals"][0]  # a default the file did not have is not written
    assert roundtrip(parse_model(copy.deepcopy(data), EvalSet, "evals.json")) == data


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_every_model_has_a_json_schema(kind: str) -> None:
    schema = MODELS[kind].model_json_schema()
    assert schema["type"] == "object" and schema["properties"]
