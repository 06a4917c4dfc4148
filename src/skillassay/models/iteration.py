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


class PluginVersion(SpecModel):
    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)

    name: str | None = None
    """The plugin's name (an executor, an assertion type, a judge)."""
    distribution: str | None = None
    """The installed distribution that provides it (null: no entry point names it)."""
    version: str | None = None
    """That distribution's version."""


class Versions(SpecModel):
    """What produced the iteration's results (versions.py)."""

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)

    skillassay: str | None = None
    """skillassay's version."""
    python: str | None = None
    """The Python it ran on."""
    executor: PluginVersion | None = None
    """The executor plugin."""
    assertions: list[PluginVersion] | None = None
    """Each assertion plugin the eval set uses."""
    judge: PluginVersion | None = None
    """The LLM judge, when plain-language expectations were graded."""


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
    versions: Versions | None = None
