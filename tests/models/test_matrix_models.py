"""matrix.json is typed (models/matrix.py): `skillassay schema matrix` describes it, and the file
is one of the kinds `validate` knows (every field's description: test_statistics_models.py)."""

from __future__ import annotations

import json

from cli_runner import cli


def test_schema_prints_the_matrix() -> None:
    result = cli(["schema", "matrix"])
    assert result.exit_code == 0
    defs = json.loads(result.stdout)["$defs"]
    assert {"AgentSummary", "Heterogeneity", "PooledEffect", "FamilyAdjustment"} <= set(defs)
    assert "Holm" in defs["AgentThreshold"]["properties"]["decision"]["description"]
