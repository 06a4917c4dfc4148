"""The benchmark configuration (benchmark-process Step 1), plus the settings that change
results (executor, model, sampling), which are hashed to decide resume vs new iteration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from skillassay.models.agents import AgentConfig
from skillassay.models.base import ClosedSpecModel, schema_ref


class Thresholds(ClosedSpecModel):
    """Numbers only (strict): "0.8" or true as a threshold is a mistake to name before the
    trials run, not something to coerce; and finite (1e400 reads as infinity: no limit is
    written by leaving the key out)."""

    min_pass_rate: float | None = Field(None, ge=0, le=1, strict=True, allow_inf_nan=False)
    max_avg_tokens: float | None = Field(None, ge=0, strict=True, allow_inf_nan=False)
    max_avg_duration_seconds: float | None = Field(None, ge=0, strict=True, allow_inf_nan=False)
    min_improvement_ratio: float | None = Field(None, ge=0, strict=True, allow_inf_nan=False)
    max_avg_cost_usd: float | None = Field(None, ge=0, strict=True, allow_inf_nan=False,
                                           description="The with-skill arm's mean cost per trial, USD.")


class ModelPriceConfig(ClosedSpecModel):
    """USD per million tokens of one model (over the shipped table, executors/prices.json)."""

    input: float = Field(ge=0, strict=True)
    output: float = Field(ge=0, strict=True)
    cache_read: float | None = Field(None, ge=0, strict=True, description="Default: the input price.")
    cache_write: float | None = Field(None, ge=0, strict=True, description="Default: the input price.")


class Adaptive(ClosedSpecModel):
    """Adaptive trials (`run --adaptive`): every eval starts with `min_trials_per_eval` trials
    per arm, then every eval gets `round_size` more per round until every gate is decided or
    settled (a group-sequential stop, analyze/sequential.py), at most `max_trials_per_eval`.
    When it is set in the config, `run` is adaptive without the flag."""

    min_trials_per_eval: int = Field(3, ge=1, le=10000, strict=True,
                                     description="Trials per arm every eval gets before it may stop.")
    max_trials_per_eval: int = Field(10, ge=1, le=10000, strict=True,
                                     description="No eval gets more trials per arm than this.")
    round_size: int = Field(1, ge=1, le=10000, strict=True,
                            description="Trials per arm added to each unsettled eval per round.")

    @model_validator(mode="after")
    def _ordered(self) -> Adaptive:
        if self.min_trials_per_eval > self.max_trials_per_eval:
            raise ValueError(f"min_trials_per_eval ({self.min_trials_per_eval}) is above max_trials_per_eval "
                             f"({self.max_trials_per_eval})")
        return self


class SandboxConfig(ClosedSpecModel):
    """Where each trial's programs run (docs/sandbox.md). `run --sandbox` overrides `kind`."""

    kind: str = Field("auto", description="auto, or a `skillassay.sandboxes` plugin: none, bwrap, docker, "
                                          "or one a package installs (`skillassay plugins`).")
    image: str | None = Field(None, description="docker: the image each trial's container starts from.")
    cpus: float | None = Field(None, gt=0, strict=True, description="docker: --cpus of each container.")
    memory: str | None = Field(None, pattern=r"^[0-9]+[bkmgBKMG]?$", description="docker: --memory, e.g. 4g.")
    network: str | None = Field(None, description="docker: --network (default host: the agent reaches the "
                                                  "metering proxy on 127.0.0.1).")
    mounts: list[str] | None = Field(None, description="docker: host folders mounted read-only at the same path "
                                                       "(e.g. /usr, for an image that borrows the host's tools).")


NO_NUL = r"^[^\x00]*$"  # a path with a NUL byte cannot be opened: bad input, not a ValueError later
MAX_SKILL_FILE_BYTES = 100 * 2**20  # the default of max_skill_file_bytes (store/layout.skill_file_problems)


class BenchmarkConfig(ClosedSpecModel):
    schema_: str | None = schema_ref()
    skill_name: str | None = None
    skill_path: str | None = None
    eval_set_path: str | None = Field(None, pattern=NO_NUL)
    trials_per_eval: int = Field(3, ge=1, le=10000)
    baseline_type: Literal["no_skill", "previous_version"] = "no_skill"
    previous_benchmark: str | None = None
    thresholds: Thresholds = Field(default_factory=Thresholds)
    # ours
    min_detectable_effect: float = Field(
        0.1, gt=0, le=1, strict=True,
        description="The smallest true effect the sample-size advice is planned for: 80% power to detect a "
                    "skill-vs-baseline difference of this many pass-rate points (0.1 = 10 pts), or to decide a "
                    "gate whose true value is this far from its threshold (pass-rate points; a fraction of "
                    "the threshold for tokens and durations). It changes advice only, never a verdict.")
    interval_reading: Literal["population", "these_evals"] = Field(
        "population",
        description="What the pass-rate, token and duration intervals (and so their gates) are about: "
                    "population (\"evals like these\": the evals are a sample of the tasks the skill will meet) or "
                    "these_evals (\"these evals\": the fixed set you wrote; only trial noise). benchmark.json "
                    "records both; this picks the one the gate decides on.")
    executor: str | None = Field(None, description="Executor plugin name (default: local).")
    model: str | None = Field(None, description="Model name for the executor.")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = Field(None, description="Base seed; trial k uses seed + k.")
    concurrency: int | None = Field(None, ge=1)
    timeout_seconds: float | None = Field(None, gt=0)
    adaptive: Adaptive | None = Field(None, description="Adaptive trials; see Adaptive. Absent: a fixed trials_per_eval.")
    backend: str | None = Field(
        None, description="Where trials run, a `skillassay.backends` plugin: local (a thread pool, the default), "
                          "ray (a Ray cluster), or one a package installs (`skillassay plugins`).")
    sandbox: str | SandboxConfig | None = Field(
        None, description="Each trial's sandbox: auto (bwrap where it works, else none with a warning), or a "
                          "`skillassay.sandboxes` plugin: none, bwrap, docker (then an object with image, cpus, "
                          "memory, network), or one a package installs.")
    ray_address: str | None = Field(
        None, description="With backend ray: what ray.init(address=...) takes (auto, ray://host:10001, "
                          "host:6379); unset: a local Ray instance.")
    prices: dict[str, ModelPriceConfig] | None = Field(
        None, description="Model -> USD per million tokens (input, output, cache_read, cache_write), over the "
                          "dated table shipped with skillassay: prices trials whose agent reports no cost.")
    max_cost_usd: float | None = Field(
        None, gt=0, strict=True, description="The iteration's budget in USD (`run --max-cost`): a trial starts only "
                                             "if the spend plus the worst case of the trials in flight stays within it.")
    max_skill_file_bytes: int = Field(
        MAX_SKILL_FILE_BYTES, ge=1, strict=True,
        description="The largest file a skill folder may hold, in bytes (default 100 MiB): the folder is hashed "
                    "and copied into every iteration's snapshot, so a bigger file is refused (exit 2, naming it).")
    agents: list[AgentConfig] | None = Field(
        None, description="A matrix run: every agent (executor, model, options, short name) runs every eval with "
                          "and without the skill; one iteration, a verdict per agent and one for the matrix. "
                          "`run --agent` replaces it. One agent: a run as with executor and model.")
