"""iteration.json: what `run` records about an iteration (fingerprint, settings, paths). Other
commands take defaults from it, so its types are checked where it is read: a hand-edited or
damaged file is an input error naming the field, never a comparison of a number with a string
deep inside aggregation."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from skillassay.models.base import SpecModel


class ExecutorRecord(SpecModel):
    """The executor settings `run` recorded; the names other commands read are typed (a model
    given as a list in a hand-edited file is named here, not met inside benchmark.json's model)."""

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)

    executor: str | None = None
    """The executor's name (echo, local, claude-code, ...)."""
    model: str | None = None
    """The model it was asked to use (null: the executor's default)."""


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
    sandbox: PluginVersion | None = None
    """The sandbox plugin the trials ran in (none, bwrap, docker; auto when it was left to each
    trial). Absent in files from before it was recorded."""
    backend: PluginVersion | None = None
    """The backend plugin that ran the trials (local, ray). Absent in files from before it was recorded."""


class ExecutorRuntime(SpecModel):
    """How the embedded model ran on this machine, beyond its settings: what its answers at a
    given seed depend on (issue 34). Written by the local executor only; never part of the
    fingerprint, so a change here does not make a new iteration."""

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)

    n_threads: int | None = None
    """llama.cpp's threads (default: every core; -o n_threads=N)."""
    omp_wait_policy: str | None = None
    """The OMP_WAIT_POLICY environment variable, when set."""
    n_batch: int | None = None
    """llama.cpp's logical batch size."""
    n_ubatch: int | None = None
    """llama.cpp's physical batch size (set equal to n_batch)."""
    n_batch_source: str | None = None
    """Where n_batch came from (the default, or an -o option)."""
    model_file: str | None = None
    """The model file's name."""
    model_sha256: str | None = None
    """The model file's SHA-256: the weights that answered."""
    llama_cpp_python: str | None = None
    """llama-cpp-python's version."""
    system_info: str | None = None
    """llama.cpp's build as it reports itself on this CPU (SIMD flags, GEMM, OpenMP)."""


class IterationRecord(SpecModel):
    """iteration.json."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True, use_attribute_docstrings=True)

    schema_version: int | None = None
    """The file's format version (1)."""
    iteration: int | None = Field(None, ge=1)
    """The iteration's number (iteration-N)."""
    started_at: str | None = None
    """When its first run started (UTC, ISO 8601); a resumed run keeps it."""
    fingerprint: dict[str, str] | None = None
    """Hashes of the skill, the eval set and the settings: a run whose hashes differ is a new iteration."""
    skill_name: str | None = None
    """The skill's name (SKILL.md)."""
    skill_path: str | None = None
    """The skill folder measured."""
    evals_path: str | None = None
    """The eval set's file."""
    executor: ExecutorRecord | None = None
    """The executor and its settings (the names other commands read are typed)."""
    trials_per_eval: int | None = Field(None, ge=1)
    """Trials per eval and configuration asked for (adaptive: the maximum)."""
    configurations: list[str] | None = None
    """The configurations run (with_skill and the baseline's name)."""
    seed: int | None = None
    """The run's seed."""
    baseline_type: str | None = None
    """What the baseline is: no_skill, or the previous skill version."""
    config_path: str | None = None
    """The benchmark config used (null: none)."""
    versions: Versions | None = None
    """What produced the results: skillassay's, Python's and each plugin's version."""
    snapshot_sha256: str | None = None
    """Hash of skill-snapshot/, the copy of the skill as measured."""
    sandbox: dict[str, Any] | None = None
    """The sandbox the trials ran in: its kind, how it was chosen, and docker's limits."""
    adaptive: dict[str, Any] | None = None
    """The adaptive design's settings, for an adaptive run."""
    redacted_secrets: dict[str, Any] | None = None
    """The secrets masked in this run, as salted hashes, so later commands mask them too."""
    executor_runtime: ExecutorRuntime | None = None
    """How the executor ran here beyond its settings (the embedded model's threads, batch and build)."""
    judge_check: dict[str, Any] | None = None
    """The judge's measured agreement with the labelled set, and whether a judge below the floor was allowed."""
