"""The executor interface: one trial in, one TrialResult out.

An executor gets a fresh work dir (input files already copied in), the prompt and the skill
(or None for the baseline arm), runs its agent, and returns what happened. It never writes
metrics.json/timing.json itself: the engine turns a TrialResult into the spec's files, so
every executor's numbers mean the same thing. Executors are synchronous; the engine runs
them in a bounded thread pool (model calls and subprocesses release the GIL)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from skillassay.executors.give_up import GiveUp
from skillassay.sandbox import SandboxSpec
from skillassay.spec.skill import Skill

Status = Literal["ok", "error", "timeout"]


class TransientError(Exception):
    """Raised by an executor for failures worth retrying (rate limits, 5xx, resets).

    `result` is what the failed attempt produced (its partial transcript above all): when the
    retries run out it is the only evidence of why the trial failed, so it is kept. `retry_after`
    is the provider's Retry-After in seconds, when it gave one; the retry waits at least that."""

    def __init__(self, message: str = "", *, result: TrialResult | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.result = result
        self.retry_after = retry_after


@dataclass(frozen=True)
class ExecutorSettings:
    """Everything that changes results; hashed into the iteration fingerprint."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: float = 300.0
    options: dict[str, Any] = field(default_factory=dict)
    # Where programs the trial starts run (sandbox/); auto until `run` resolves it.
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)
    # The name of the skill under test, for the baseline arm too: a baseline agent that loads
    # a skill of that name is contaminated (skill_triggered true). Not part of identity().
    skill_under_test: str | None = None
    # Model -> price (executors/pricing.py) for trials whose agent reports no cost. Not part of
    # identity(): a price changes what a trial cost, not what it did.
    prices: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class TrialRequest:
    prompt: str
    workdir: Path
    skill: Skill | None
    seed: int
    settings: ExecutorSettings
    # Other skills installed beside `skill`, where the agent discovers them too (trigger evals:
    # distractors that may shadow it). Empty for a benchmark trial.
    extra_skills: tuple[Skill, ...] = ()
    # While no trial of the run has succeeded: when to give up on a provider that keeps failing
    # or never answers (executors/give_up.py). None: the trial runs its course.
    give_up: GiveUp | None = None
    # USD this trial may spend under the run's budget (run/budget.py); a metering proxy refuses
    # requests past it. None: no budget.
    max_cost_usd: float | None = None
    # A multi-turn eval's user messages after `prompt` (turn 2 onwards), sent in order, each
    # after the agent has answered the one before, in the same conversation (issue 39). Empty:
    # a single-turn trial, exactly as before. Only an executor with `supports_turns` gets one.
    turns: tuple[str, ...] = ()

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every skill this request installs, the one under test first."""
        return ((self.skill,) if self.skill is not None else ()) + self.extra_skills


@dataclass
class Usage:
    """Normalized across executors: input excludes nothing (cached input is a subset of it)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cost_usd: float | None = None
    # "priced" when the executor computed cost_usd from prices it was given (not the provider's figure)
    cost_source: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    # Which of the agent's own accounts the counts come from, when it gives more than one, and
    # their disagreement in words (None: they agree). Shown, never silently resolved.
    source: str | None = None
    warning: str | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass
class TurnRecord:
    """One turn of a multi-turn trial: what the agent answered to that user message and what
    the turn alone cost. `transcript_start` is the index in TrialResult.transcript where the
    turn's events begin, so a reader can show the conversation turn by turn."""

    index: int  # 1-based: turn 1 is the request's `prompt`
    prompt: str
    final_text: str = ""
    status: Status = "ok"
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    agent_duration_ms: int | None = None
    transcript_start: int = 0


@dataclass
class TrialResult:
    final_text: str = ""
    status: Status = "ok"
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    errors_encountered: int = 0
    skill_triggered: bool | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    agent_duration_ms: int | None = None
    model: str | None = None
    # One record per turn run, in order, for a multi-turn trial (empty for a single turn).
    # final_text/usage/agent_duration_ms above are then the last turn's answer and the sums.
    # A turn that errors is the last record and sets `status` to error for the whole trial.
    turns: list[TurnRecord] = field(default_factory=list)


class Executor(ABC):
    """Subclass, set `name`, implement `run`; register under the `skillassay.executors`
    entry-point group. One instance serves every trial of a benchmark (load models once)."""

    name: ClassVar[str]
    # True when run() enforces settings.timeout_seconds itself (e.g. killing its process
    # group); otherwise the engine stops waiting at the timeout and records the trial as such.
    handles_timeout: ClassVar[bool] = False
    # False when run() never reports token counts (the `command` executor): a token threshold
    # is then named "not measured" before the run instead of staying INCONCLUSIVE forever.
    reports_tokens: ClassVar[bool] = True
    # True when run() carries a conversation: it sends request.turns one after another in the
    # same session/thread/message history and fills TrialResult.turns. An executor without it
    # is refused for a multi-turn eval before any trial runs, never given turn 1 alone.
    supports_turns: ClassVar[bool] = False

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings

    @property
    def writes_workdir(self) -> bool:
        """Whether run() may create or change files in request.workdir (an agent's). False for
        one that only answers: outputs/ is then not made and listed before the answer is
        written there (execute_trial). True unless an executor says otherwise."""
        return True

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        """(usable here, reason) for `skillassay executors`."""
        return True, "built in"

    @classmethod
    def model_problem(cls, model: str) -> str | None:
        """Why this executor cannot run `model` (None: it can, or the provider will say). An
        executor that runs one fixed model refuses another name instead of recording it as the
        model it ran."""
        return None

    def ready(self) -> str | None:
        """What is missing for this executor, with its settings, to run a trial here (None:
        nothing), checked before any trial is spent. By default what `skillassay executors`
        reports; executors whose options change the answer (a base_url, a key variable) or
        that can ask their endpoint cheaply override it."""
        usable, reason = type(self).availability()
        return None if usable else reason

    def identity(self) -> dict[str, Any]:
        """What identifies this executor's results (name, model, sampling) for resume."""
        s = self.settings
        out = {"executor": self.name, "model": s.model, "temperature": s.temperature,
               "max_tokens": s.max_tokens, "options": s.options}
        if s.sandbox.kind == "docker":  # a container's resources change scores: a new iteration
            out["sandbox"] = {"image": s.sandbox.image, "cpus": s.sandbox.cpus, "memory": s.sandbox.memory,
                              "network": s.sandbox.network, "mounts": list(s.sandbox.mounts)}
        return out

    def runtime(self) -> dict[str, Any]:
        """How this executor runs here, beyond its settings (threads, build, model file hash):
        recorded in iteration.json, never in the fingerprint. Empty when nothing applies."""
        return {}

    @abstractmethod
    def run(self, request: TrialRequest) -> TrialResult: ...

    def run_trigger(self, request: TrialRequest) -> TrialResult:
        """One trigger-eval run: the query as the prompt, every skill of `request.skills`
        installed where the agent finds it. By default an ordinary trial, so the agent meets
        the skill exactly as it does in a benchmark; an executor whose trial is not an agent
        deciding what to load (the embedded model) overrides it."""
        return self.run(request)

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        """Which of `names` the run really loaded, in the order first loaded, read from what
        the agent did (its transcript) at any point of the run. None: this executor cannot
        tell, and `skillassay triggers` refuses it rather than guess."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes or models held across trials."""
