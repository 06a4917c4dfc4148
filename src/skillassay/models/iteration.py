"""iteration.json: what `run` records about an iteration (fingerprint, settings, paths). Other
commands take defaults from it, so its types are checked where it is read: a hand-edited or
damaged file is an input error naming the field, never a comparison of a number with a string
deep inside aggregation."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from skillassay.models.base import SpecModel


class ExecutorRecord(SpecModel):
    """The executor settings `run` recorded; the names other commands read are typed (a model
    given as a list in a hand-edited file is named here, not met inside benchmark.json's model)."""

    model_config = ConfigDict(extra="allow", strict=True)

    executor: str | None = None
    model: str | None = None


class IterationRecord(SpecModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)

    schema_version: int | None = None
    iteration: int | None = Field(None, ge=1)
    started_at: str | None = None
    fingerprint: dict[str, str] | None = None
    skill_name: str | None = None
    skill_path: str | None = None
    evals_path: str | None = None
    executor: ExecutorRecord | None = None
    trials_per_eval: int | None = Field(None, ge=1)
    configurations: list[str] | None = None
    seed: int | None = None
    baseline_type: str | None = None
    config_path: str | None = None
