"""What every agent-CLI executor (`claude-code`, `codex`) does around its one CLI call.

A trial runs the CLI headless as its own process group, in a private copy of the work dir (see
`isolated_workdir`) with a fresh private HOME (`agent_home`: never under the temp folder), the
skill (with-skill arm only) copied to where that CLI discovers project skills, and credentials
taken only from the environment. Until a trial of the run has succeeded, the CLI's stream is
watched for a provider it keeps retrying or that never answers (`give_up`).
Its JSON-lines stdout is redacted and parsed into a TrialResult, and the process's fate
(killed at the timeout, died before finishing, transient API failure) is folded in.

A subclass states what is specific to its CLI: the class attributes below and the hooks
`command_line`, `child_env`, `parse_events`, `transient_failure` and `unfinished`."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from skillassay.executors.agent_home import private_home
from skillassay.executors.agent_sandbox import ApiRoute, agent_env, contaminating, temp_contamination
from skillassay.executors.base import Executor, ExecutorSettings, TransientError, TrialRequest, TrialResult
from skillassay.executors.conversation import request_prompts, run_turns
from skillassay.executors.give_up import ProviderWatch, first_answer_option, with_first_answer
from skillassay.executors.harness_faults import broken_tools_error
from skillassay.executors.pricing import ModelPrice, metered_usd, price_for
from skillassay.executors.subprocess_util import (
    ProcessOutcome,
    events_from_lines,
    installed_skill,
    isolated_workdir,
    redact,
    run_process_group,
    tail,
)
from skillassay.sandbox import MeteringProxy, SandboxSpec, confined, resolved
from skillassay.sandbox.proxy import Allowance, usage_totals


class AgentCliExecutor(Executor):
    """Runs an agent CLI headless in the trial's work dir; subclasses describe the CLI."""

    binary: ClassVar[str]  # looked up on PATH
    install_hint: ClassVar[str]  # shown when the binary is missing
    key_env_vars: ClassVar[tuple[str, ...]]  # any one of them set counts as credentials
    missing_key: ClassVar[str]  # the availability reason when none of them is set
    skills_dir: ClassVar[tuple[str, ...]]  # under the run dir, where the CLI finds skills
    temp_prefix: ClassVar[str]  # of the private work dir; "<prefix>home-" for HOME
    # Variables naming the CLI's own config folders: writable inside a sandbox wherever they are.
    home_env_vars: ClassVar[tuple[str, ...]] = ()
    # run() kills the CLI's process group at settings.timeout_seconds and keeps the partial
    # transcript, so the engine need not abandon a thread.
    handles_timeout: ClassVar[bool] = True

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        self.first_answer_seconds = first_answer_option(settings.options)  # a bad value: exit 2 before any trial

    # ------------------------------------------------------------------- CLI-specific hooks

    @abstractmethod
    def command_line(self, binary: str, prompt: str, cwd: Path, base_url: str | None = None, *,
                     conversation: bool = False) -> list[str]:
        """The argv of one headless run (identical for both arms); `base_url`: the metering
        proxy's, for a CLI that takes its endpoint on the command line; `conversation`: later
        turns will resume this run's session (so it must be kept)."""

    def allowance(self, request: TrialRequest) -> Allowance | None:
        """The run's budget at the proxy: this trial's share (request.max_cost_usd) in USD of the
        provider's own usage, where the model has a price; else nothing to check it against."""
        price = price_for(self.settings.model, self.settings.prices or {})
        return None if request.max_cost_usd is None or price is None else trial_allowance(request.max_cost_usd, price)

    @abstractmethod
    def api_route(self, env: Mapping[str, str]) -> ApiRoute:
        """How this CLI, given its environment, reaches its model API (for the proxy)."""

    @abstractmethod
    def child_env(self, base: Mapping[str, str], home: Path) -> dict[str, str]:
        """The CLI's environment, with `home` as its private HOME."""

    @abstractmethod
    def parse_events(self, events: list[dict[str, Any]], skill_name: str | None,
                     earlier: list[dict[str, Any]] | None = None) -> TrialResult:
        """The CLI's JSON events of one run as a TrialResult (pure); `earlier`: the events of
        the turns before it in the same session, whose session-long counters it subtracts."""

    @abstractmethod
    def transient_failure(self, result: TrialResult) -> bool:
        """True when the run failed in a way worth retrying the whole trial for."""

    @abstractmethod
    def unfinished(self, result: TrialResult) -> str | None:
        """Why the events show the CLI never finished (e.g. "without a result event"), or None."""

    @abstractmethod
    def provider_retry(self, event: dict[str, Any]) -> str | None:
        """The failure a stdout event shows the CLI retrying (its cause, e.g. "API status 529
        overloaded"), else None."""

    @abstractmethod
    def model_answered(self, event: dict[str, Any]) -> bool:
        """Whether a stdout event shows an answer from the model (a message, a tool call)."""

    # ------------------------------------------------------------------------------ shared

    @classmethod
    def _not_found(cls) -> str:
        return f"{cls.binary} not found on PATH ({cls.install_hint})"

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if shutil.which(cls.binary) is None:
            return False, cls._not_found()
        if not any(os.environ.get(var) for var in cls.key_env_vars):
            return False, cls.missing_key
        return True, f"{cls.binary} found; skills go to <workdir>/{'/'.join(cls.skills_dir)}/"

    def ready(self) -> str | None:
        """The binary on PATH, a key in the environment (the CLI runs with a fresh HOME, so a
        login stored in the user's own HOME does not count; options.api_key_env names one more
        variable that counts), and the endpoint accepting that key (`probe`)."""
        if shutil.which(self.binary) is None:
            return self._not_found()
        extra = self.settings.options.get("api_key_env")
        names = (*self.key_env_vars, *([str(extra)] if extra else []))
        if not any(os.environ.get(var) for var in names):
            return self.missing_key
        if resolved(self.settings.sandbox).kind == "none" and (found := temp_contamination()):
            return found
        return self.probe()

    def probe(self) -> str | None:
        """One free request to the endpoint the CLI will use, with the key it will send: a
        refused key or a server that does not answer is named in seconds, before any trial
        (the CLI itself would retry for minutes in every trial). None: it answered."""
        return None

    def harness_fault(self, result: TrialResult, stderr: str) -> str | None:
        """Why the agent's shell commands could not run at all, for a reason outside the task
        (see harness_faults.py); None when they could, or there were none."""
        return None

    def trigger_decided(self, line: str, skill_name: str) -> bool:
        """For a trigger run: True when this stdout line shows the agent loading `skill_name`,
        so the run can stop there (the rest of the task costs tokens and decides nothing). By
        default never: the run goes to its end."""
        return False

    def run_trigger(self, request: TrialRequest) -> TrialResult:
        """A trial that stops as soon as the skill under test is loaded, unless options say
        `stop_on_trigger: false`. Loading another skill first decides nothing: this one may
        still be loaded later, so such a run goes on."""
        if request.skill is None or not self.settings.options.get("stop_on_trigger", True):
            return self.run(request)
        name = request.skill.name
        return self._run(request, lambda line: self.trigger_decided(line, name))

    def run(self, request: TrialRequest) -> TrialResult:
        return self._run(request, None)

    def _run(self, request: TrialRequest, stop_when: Callable[[str], bool] | None) -> TrialResult:
        """One trial: the CLI run once per user message (request.prompt, then request.turns),
        every run after the first resuming the session the first started. All turns share the
        trial's private HOME and work dir (where the CLI keeps the session), the installed
        skills, the sandbox and the metering proxy, and one deadline: settings.timeout_seconds
        covers the whole conversation, each turn getting what the turns before it left."""
        binary = shutil.which(self.binary)
        if binary is None:
            raise RuntimeError(self._not_found())
        spec = resolved(self.settings.sandbox)
        deadline = time.monotonic() + request.settings.timeout_seconds
        with private_home(f"{self.temp_prefix}home-") as home, \
                isolated_workdir(request.workdir, self.temp_prefix) as cwd, \
                contextlib.ExitStack() as installed:
            skills = [installed.enter_context(installed_skill(skill, cwd.joinpath(*self.skills_dir)))
                      for skill in request.skills]  # distractors of a trigger eval sit beside the skill
            if spec.kind == "none" and (found := contaminating(cwd)):
                return TrialResult(status="error", error=f"not run: {', '.join(map(str, found))} above the "
                                   "trial would reach the agent in both arms")
            host_env = self.child_env(os.environ, Path(home))
            watch = ProviderWatch(with_first_answer(request.give_up, self.first_answer_seconds),
                                  self.provider_retry, self.model_answered)

            def stop(line: str) -> bool:
                return watch.line(line) or (stop_when is not None and stop_when(line))

            with agent_env(spec, host_env, self.api_route(host_env), self.allowance(request)) as (env, proxy):
                private = [Path(home), *(Path(host_env[v]) for v in self.home_env_vars
                                         if host_env.get(v) and Path(host_env[v]).is_dir())]
                trial = _Trial(request, binary, spec, cwd, env, host_env, proxy, deadline, watch, stop,
                               writable=[cwd, *dict.fromkeys(private)], readonly=[s for s in skills if s is not None])
                out = (run_turns(request_prompts(request), lambda k, prompt: self._turn(trial, k, prompt))
                       if request.turns else self._turn(trial, 1, request.prompt))
        if trial.transient is not None:  # the whole trial is retried; what it did so far goes with it
            raise TransientError(out.error or str(trial.transient), result=out,
                                 retry_after=trial.transient.retry_after)
        return out

    def _turn(self, trial: _Trial, index: int, prompt: str) -> TrialResult:
        """One run of the CLI in the trial: turn 1 starts the session, a later turn resumes it."""
        timeout = trial.request.settings.timeout_seconds
        left = trial.deadline - time.monotonic()
        if left <= 0:
            return TrialResult(status="timeout", error=f"timed out after {timeout:g}s, before this turn")
        if index > 1 and trial.session is None:
            return TrialResult(status="error", error=f"{self.binary} named no session in the turn before, "
                               "so the conversation cannot go on")
        proxy = trial.proxy
        url = proxy.url if proxy else None
        argv = (self.command_line(trial.binary, prompt, trial.cwd, url, conversation=bool(trial.request.turns))
                if index == 1 else self.resume_line(trial.binary, prompt, trial.cwd, str(trial.session), url))
        metered = len(proxy.records) if proxy else 0
        with confined(trial.spec, argv, cwd=trial.cwd, writable=trial.writable, readonly=trial.readonly,
                      env=trial.env) as wrapped:
            outcome = run_process_group(
                wrapped, cwd=trial.cwd, env=trial.env, timeout_seconds=left, stop_when=trial.stop,
                stop_poll=trial.watch.overdue if trial.request.give_up is not None else None)
        events = events_from_lines(outcome.stdout_lines, trial.host_env)
        request = trial.request
        under_test = request.skill.name if request.skill else request.settings.skill_under_test
        result = self.parse_events(events, under_test, trial.earlier)
        _add_metering(result, proxy, price_for(result.model or self.settings.model, self.settings.prices or {}),
                      since=metered)
        try:
            result = self._finish(result, outcome, trial.host_env, timeout, trial.watch)
        except TransientError as exc:  # raised by _run, once the work dir is mirrored back
            trial.transient, result = exc, exc.result or result
            result.status = "error"
        if index == 1:
            trial.session = self.session_of(events)
        trial.earlier = trial.earlier + events
        return result

    def resume_line(self, binary: str, prompt: str, cwd: Path, session: str, base_url: str | None = None
                    ) -> list[str]:
        """The argv of a later turn: `prompt` sent in the session `session` (session_of the
        first turn), otherwise as command_line. Only a CLI with supports_turns has one."""
        raise NotImplementedError(f"{self.name} cannot resume a session")

    def session_of(self, events: list[dict[str, Any]]) -> str | None:
        """The id of the session a turn's events belong to, for the next turn to resume."""
        return None

    def _finish(self, result: TrialResult, outcome: ProcessOutcome, env: Mapping[str, str],
                timeout_seconds: float, watch: ProviderWatch) -> TrialResult:
        """Fold the process's fate into what the events said. The timeout is the request's:
        on a retried trial the engine gives each attempt only what is left of the deadline."""
        result.model = result.model or self.settings.model
        if result.agent_duration_ms is None:
            result.agent_duration_ms = outcome.duration_ms
        if outcome.stopped_early and watch.verdict is not None:  # gave up on the provider
            result.status, result.error = "error", redact(watch.verdict, env)
            result.transcript.append({"type": "_skillassay", "event": f"stopped: {result.error}"})
        elif outcome.timed_out and (retrying := watch.retrying()) is not None:
            result.status, result.error = "error", redact(retrying, env)  # the retried failure, not the clock
            result.transcript.append({"type": "_skillassay", "event": f"killed at the {timeout_seconds:g}s "
                                      "timeout while the CLI was retrying the provider"})
        elif outcome.stopped_early:
            result.status, result.error = "ok", None  # decided; no final event is expected
            result.transcript.append({"type": "_skillassay", "event": "stopped: the skill under test was loaded"})
        elif outcome.timed_out:
            result.status = "timeout"
            result.error = (f"timed out after {timeout_seconds:g}s; "
                            "process group killed")
        elif result.status == "ok" and (cause := self.harness_fault(result, outcome.stderr)) is not None:
            result.status, result.error = "error", broken_tools_error(cause)
        elif self.transient_failure(result):
            raise TransientError(result.error or "transient API error", result=result)
        elif (why := self.unfinished(result)) is not None:
            result.status = "error"
            result.error = (f"{self.binary} exited with code {outcome.returncode} {why}: "
                            f"{redact(tail(outcome.stderr), env)}")
        return result


@dataclass
class _Trial:
    """What every turn of one trial shares: the same process setting (work dir, private HOME,
    sandbox, environment, metering proxy, provider watch), the one deadline, and what the turns
    so far left for the next: the session to resume and their events."""

    request: TrialRequest
    binary: str
    spec: SandboxSpec
    cwd: Path
    env: dict[str, str]
    host_env: dict[str, str]
    proxy: MeteringProxy | None
    deadline: float
    watch: ProviderWatch
    stop: Callable[[str], bool]
    writable: list[Path] = field(default_factory=list)
    readonly: list[Path] = field(default_factory=list)
    session: str | None = None
    earlier: list[dict[str, Any]] = field(default_factory=list)
    transient: TransientError | None = None


def trial_allowance(cap: float, price: ModelPrice) -> Allowance:
    """What the proxy asks before each request: refused once the trial's metered spend has
    reached `cap`, the share of the run's budget this trial was started with."""

    def check(totals: dict[str, int]) -> str | None:
        spent = metered_usd(totals, price)
        if spent < cap:
            return None
        return (f"skillassay budget: this trial has spent ${spent:.6g} of the ${cap:.6g} the run's budget "
                "(--max-cost) leaves it; request refused")

    return check


def _add_metering(result: TrialResult, proxy: MeteringProxy | None, price: ModelPrice | None = None,
                  since: int = 0) -> None:
    """The proxy's record of every model request of one run (its records from index `since`:
    a conversation's turn is its own run, through the trial's one proxy), in the transcript and
    beside the CLI's own usage (raw.proxy), so a disagreement between the two can be seen, never
    silently resolved. With a price for the model the proxy's account is the run's cost too (the
    CLI's own figure kept beside it, raw.reported_cost_usd): the provider's usage is the source
    of truth."""
    if proxy is None:
        return
    records = proxy.records[since:]
    result.transcript.append({"type": "_skillassay_proxy", "requests": list(records)})
    totals = usage_totals(records)
    result.usage.raw["proxy"] = totals
    if price is not None and totals:
        result.usage.raw["reported_cost_usd"] = result.usage.cost_usd
        result.usage.cost_usd, result.usage.cost_source = round(metered_usd(totals, price), 8), "priced"
    metered = metered_tokens(totals)
    if metered is None:
        return
    reported = (result.usage.input_tokens, result.usage.output_tokens)
    if reported != metered:  # the provider's own account wins; the CLI's stays beside it, named
        said = f"the provider's usage (metered by the proxy) is {metered[0]} in / {metered[1]} out"
        if reported != (None, None):
            said += f" where the CLI reported {reported[0]} / {reported[1]}"
        result.usage.warning = f"{result.usage.warning}; {said}" if result.usage.warning else said
        result.usage.input_tokens, result.usage.output_tokens = metered
    result.usage.source = "proxy"


def metered_tokens(totals: dict[str, int]) -> tuple[int, int] | None:
    """(input, output) from the provider's usage summed over the trial's requests, input counted
    as our Usage counts it (cache writes and reads included: Anthropic reports them apart, the
    Responses API inside input_tokens). None when no request reported usage."""
    if "input_tokens" not in totals and "output_tokens" not in totals:
        return None
    cached = totals.get("cache_creation_input_tokens", 0) + totals.get("cache_read_input_tokens", 0)
    return totals.get("input_tokens", 0) + cached, totals.get("output_tokens", 0)


__all__ = ["AgentCliExecutor"]
