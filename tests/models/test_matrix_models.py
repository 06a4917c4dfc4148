"""matrix.json is typed (models/matrix.py): `skillassay schema matrix` describes every field, and
the file is one of the kinds `validate` knows."""

from __future__ import annotations

import json
from typing import Any, get_args

from cli_runner import cli
from pydantic import BaseModel

from skillassay.models.matrix import MatrixSummary


def _models_in(annotation: Any) -> list[Any]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in get_args(annotation) for m in _models_in(a)]


def test_every_field_has_a_description() -> None:
    seen: set[type] = set()
    missing: list[str] = []

    def walk(m: Any) -> None:
        if m in seen:
            return
        seen.add(m)
        missing.extend(f"{m.__name__}.{n}" for n, f in m.model_fields.items() if not f.description)
        for f in m.model_fields.values():
            for arg in _models_in(f.annotation):
                walk(arg)

    walk(MatrixSummary)
    assert len(seen) >= 6 and missing == []


def test_schema_prints_the_matrix() -> None:
    result = cli(["schema", "matrix"])
    assert result.exit_code == 0
    defs = json.loads(result.stdout)["$defs"]
    assert {"AgentSummary", "Heterogeneity", "PooledEffect", "FamilyAdjustment"} <= set(defs)
    assert "Holm" in defs["AgentThreshold"]["properties"]["decision"]["description"]
