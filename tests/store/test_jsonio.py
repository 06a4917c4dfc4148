"""dump_json's orjson path writes what pydantic's own dump writes (by_alias, exclude_unset),
or hands the model to pydantic: the run files of every trial go through it."""

from __future__ import annotations

import json
import math

import pytest
from pydantic_core import PydanticSerializationError, to_json

from skillassay.models import BenchmarkConfig, Grading, Metrics, Timing
from skillassay.models.runfiles import ExpectationResult, GradingSummary, UserNotesSummary
from skillassay.store.jsonio import _NotPlain, _plain_model, dump_json


def pydantic_dump(model) -> str:
    return model.model_dump_json(indent=2, by_alias=True, exclude_unset=True) + "\n"


def samples() -> list:
    g = Grading(expectations=[ExpectationResult(text="has 4433", passed=True, evidence="found 'ü 4433'"),
                              ExpectationResult(text="x", passed=None)],
                summary=GradingSummary(passed=1, failed=0, total=2, pass_rate=0.5))
    g.claims = []
    g.user_notes_summary = UserNotesSummary(uncertainties=["a"], needs_review=[], workarounds=[])
    g.judge = {"model": "m", "samples": 3, "caps": {"max": 1e-05}}  # an extra, set after construction
    t = Timing(total_tokens=12, total_duration_seconds=1.2e-05, executor_start="2026-12-01T00:00:00.000001Z")
    t.grader_duration_seconds = 3e-7
    m = Metrics(tool_calls={"Bash": 2}, total_tool_calls=2, files_created=["a.txt"], status="ok", seed=7,
                usage={"input_tokens": 1, "output_tokens": 2, "cost_usd": None, "raw": {"n": [1, 2.5, {"x": None}]}})
    empty = Timing()
    nan = Timing.model_construct(total_duration_seconds=math.nan)  # no trial measures NaN; the writer must still cope
    return [g, t, m, empty, nan]


@pytest.mark.parametrize("model", samples(), ids=lambda m: type(m).__name__)
def test_fast_dump_is_pydantics_bytes(model) -> None:
    assert dump_json(model) == pydantic_dump(model)


def test_what_orjson_cannot_write_goes_to_pydantic() -> None:
    huge = Metrics(usage={"raw": {"big": 2**70}})  # orjson refuses integers past 64 bits
    assert dump_json(huge) == pydantic_dump(huge)
    keyed = Metrics(usage={"raw": {1: "int key"}})  # orjson refuses non-str keys; pydantic writes "1"
    assert json.loads(dump_json(keyed)) == json.loads(pydantic_dump(keyed))
    surrogate = Metrics(error="\ud800")  # neither encoder can write it: written back escaped (issue 40)
    with pytest.raises(PydanticSerializationError):
        pydantic_dump(surrogate)
    assert '"error": "\\ud800"' in dump_json(surrogate)
    tupled = Metrics(usage={"raw": {"t": (1, 2)}})  # not plain: pydantic decides how it looks
    with pytest.raises(_NotPlain):
        _plain_model(tupled)
    assert dump_json(tupled) == pydantic_dump(tupled)


def test_models_with_excluded_or_aliased_fields_are_pydantics() -> None:
    """The config has `$schema` (alias, excluded): only pydantic's dump honours that."""
    config = BenchmarkConfig.model_validate({"$schema": "x", "trials_per_eval": 3})
    with pytest.raises(_NotPlain):
        _plain_model(config)
    assert dump_json(config) == pydantic_dump(config) and "schema" not in dump_json(config)


def test_plain_data_still_dumps() -> None:
    assert dump_json({"a": [1, 2]}) == to_json({"a": [1, 2]}, indent=2).decode() + "\n"
