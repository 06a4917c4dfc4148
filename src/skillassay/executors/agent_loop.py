"""A small tool-use agent loop shared by the API executors (`openai`, `anthropic`).

Both arms of a benchmark must meet the same agent, differing only in the skill, so the tools,
the system prompt and the stopping rules live here once; each executor only translates turns
to and from its provider's wire format (a `Conversation`).

The skill is presented the way Agent Skills are meant to be: progressive disclosure. The
system prompt lists only the skill's name and description; the model must call `load_skill`
to read SKILL.md, and `read_skill_file` for bundled files. Whether it did is `skill_triggered`.
"""

from __future__ import annotations

import json
import os
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from skillassay.errors import InputError
from skillassay.executors import process_group
from skillassay.executors.agent_turns import converse
from skillassay.executors.base import Executor, ExecutorSettings, TrialRequest, TrialResult, Usage
from skillassay.executors.group_run import run_in_group
from skillassay.executors.probe import PROBE_TIMEOUT_SECONDS, probe_endpoint  # noqa: F401 - re-exported
from skillassay.executors.retry import stop_before_deadline, wait_retry_after
from skillassay.sandbox import SandboxSpec
from skillassay.spec.skill import Skill
from skillassay.store.layout import EVALS_DIR
from skillassay.store.redact import mask_userinfo, without_secrets

T = TypeVar("T")

DEFAULT_MAX_TURNS = 20
DEFAULT_SHELL_TIMEOUT = 60.0
DEFAULT_OUTPUT_LIMIT = 20_000
MAX_LISTED_FILES = 500

BASE_SYSTEM_PROMPT = (
    "You are an agent working in a directory on the user's machine. Use the tools to inspect "
    "and change files and to run shell commands; paths are relative to the working directory. "
    "When the task is done, reply with your final answer as plain text and call no tool."
)

# Environment variables a model-run shell must not see: their values would land in the
# transcript if the model printed its environment.
class ToolError(Exception):
    """A tool call the model got wrong; reported back to it as an error result, not raised."""


@dataclass(frozen=True)
class ToolSpec:
    """A provider-neutral tool definition; each executor renders it in its own wire format."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | str  # str when the model sent arguments that are not JSON


@dataclass
class ModelTurn:
    """One model response, already translated out of the provider's shape."""

    text: str
    tool_calls: list[ToolCall]
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class Conversation(Protocol):
    """The provider-specific half of the loop: owns the message history in wire format."""

    transcript: list[dict[str, Any]]  # where its retry markers go

    def complete(self, timeout: float) -> ModelTurn:
        """Send the history, append the model's reply to it, return the reply."""
        ...

    def add_tool_results(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        """Append (call, output, is_error) results so the next `complete` sees them."""
        ...

    def add_user_message(self, text: str) -> None:
        """Append the user's next message of a multi-turn eval to the history."""


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_PATH = {"type": "string", "description": "Path relative to the working directory."}

WORKSPACE_TOOLS = [
    ToolSpec("list_files", "List files under a directory of the working directory (recursive).",
             _obj({"path": {**_PATH, "default": "."}}, [])),
    ToolSpec("read_file", "Read a UTF-8 text file from the working directory.",
             _obj({"path": _PATH}, ["path"])),
    ToolSpec("write_file", "Create or overwrite a text file in the working directory.",
             _obj({"path": _PATH, "content": {"type": "string"}}, ["path", "content"])),
    ToolSpec("run_shell", "Run a shell command (bash) in the working directory; returns the "
             "exit code and combined output.",
             _obj({"command": {"type": "string"}}, ["command"])),
]

SKILL_TOOLS = [
    ToolSpec("load_skill", "Load the full instructions (SKILL.md) of an available skill. Call "
             "this before working on a task the skill's description matches.",
             _obj({"name": {"type": "string", "description": "The skill's name."}}, [])),
    ToolSpec("read_skill_file", "Read a file bundled with a skill (path relative to the "
             "skill folder, as referenced by SKILL.md).",
             _obj({"path": {"type": "string"},
                   "name": {"type": "string", "description": "The skill's name (default: the "
                            "only or first listed skill)."}}, ["path"])),
]


def system_prompt(skill: Skill | None, extra_skills: Sequence[Skill] = ()) -> str:
    """Only name and description go up front: the body costs tokens only when loaded."""
    skills = ([skill] if skill is not None else []) + list(extra_skills)
    if not skills:
        return BASE_SYSTEM_PROMPT
    listing = "".join(f"\n- name: {s.name}\n  description: {s.description}" for s in skills)
    return f"{BASE_SYSTEM_PROMPT}\n\nAvailable skills (call load_skill to read one before using it):{listing}"


def confine(root: Path, rel: str) -> Path:
    """Resolve a model-supplied path inside root. Rejects absolute paths and `..` outright
    (clear error for the model) and any symlink whose target leaves root (real escape)."""
    if not isinstance(rel, str) or rel.strip() == "":
        raise ToolError("path must be a non-empty string")
    p = Path(rel)
    if p.is_absolute() or rel.startswith("~"):
        raise ToolError(f"absolute paths are not allowed: {rel!r}; use a path relative to the "
                        "working directory")
    if ".." in p.parts:
        raise ToolError(f"'..' is not allowed in paths: {rel!r}")
    base = root.resolve()
    target = (base / p).resolve()
    if target != base and base not in target.parents:
        raise ToolError(f"path escapes the working directory through a symlink: {rel!r}")
    return target


def truncate(text: str, limit: int) -> str:
    """Keep head and tail: errors tend to be at the end of long output, context at the start."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n... [{cut} characters truncated] ...\n{text[-half:]}"


def scrubbed_env() -> dict[str, str]:
    """The shell's environment without secrets (API keys must never reach a transcript): the
    same rule as for evals.json's code checks, both being code nobody reviewed."""
    return without_secrets(os.environ)


class ToolBox:
    """The tools one trial's model may call, bound to its work dir and (maybe) its skill."""

    def __init__(self, workdir: Path, skill: Skill | None, options: dict[str, Any],
                 extra_skills: Sequence[Skill] = (), sandbox: SandboxSpec | None = None) -> None:
        self.workdir = Path(workdir)
        self.sandbox = sandbox  # run_shell's commands run confined to the work dir (None: not)
        self.skill = skill
        self.skills = {s.name: s for s in ([skill] if skill is not None else []) + list(extra_skills)}
        self.shell_timeout = float(options.get("shell_timeout", DEFAULT_SHELL_TIMEOUT))
        self.output_limit = int(options.get("output_limit", DEFAULT_OUTPUT_LIMIT))
        self.deadline: float | None = None  # monotonic; set by run_loop to the trial's end
        self._handlers: dict[str, Callable[[dict[str, Any]], str]] = {
            "list_files": self.list_files, "read_file": self.read_file,
            "write_file": self.write_file, "run_shell": self.run_shell,
        }
        if skill is not None:
            self._handlers |= {"load_skill": self.load_skill,
                               "read_skill_file": self.read_skill_file}

    @property
    def specs(self) -> list[ToolSpec]:
        return WORKSPACE_TOOLS + (SKILL_TOOLS if self.skill is not None else [])

    def call(self, call: ToolCall) -> tuple[str, bool]:
        """(output, is_error). Every model mistake becomes an error message it can act on."""
        handler = self._handlers.get(call.name)
        if handler is None:
            return f"unknown tool {call.name!r}; available: {', '.join(self._handlers)}", True
        if not isinstance(call.arguments, dict):
            return f"arguments must be a JSON object, got: {str(call.arguments)[:200]}", True
        try:
            return truncate(handler(call.arguments), self.output_limit), False
        except ToolError as exc:
            return str(exc), True
        except (OSError, UnicodeDecodeError) as exc:
            return f"{type(exc).__name__}: {exc}", True

    def list_files(self, args: dict[str, Any]) -> str:
        root = confine(self.workdir, str(args.get("path") or "."))
        if not root.is_dir():
            raise ToolError(f"not a directory: {args.get('path')!r}")
        return _listing(root, self.workdir.resolve()) or "(empty)"

    def read_file(self, args: dict[str, Any]) -> str:
        path = confine(self.workdir, _str_arg(args, "path"))
        if not path.is_file():
            raise ToolError(f"no such file: {args['path']!r}")
        return path.read_text(encoding="utf-8")

    def write_file(self, args: dict[str, Any]) -> str:
        path = confine(self.workdir, _str_arg(args, "path"))
        content = _str_arg(args, "content", allow_empty=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return f"wrote {len(content)} characters to {args['path']}"

    def run_shell(self, args: dict[str, Any]) -> str:
        command = _str_arg(args, "command")
        timeout = self.shell_timeout
        if self.deadline is not None:  # a command must not outlive the trial
            timeout = max(min(timeout, self.deadline - time.monotonic()), 0.1)
        code, out, err = run_in_group(["bash", "-c", command], self.workdir, timeout,
                                      scrubbed_env(), sandbox=self.sandbox)
        output = out + (f"\n[stderr]\n{err}" if err else "")
        if code is None:
            raise ToolError(f"timed out after {timeout:g}s (process group killed)\n"
                            f"{truncate(output, self.output_limit)}")
        return f"exit code: {code}\n{output}"

    def _named_skill(self, args: dict[str, Any]) -> Skill:
        name = resolve_skill_name(args.get("name"), list(self.skills))
        if name is None:
            raise ToolError(f"no skill named {args.get('name')!r}; available: {', '.join(self.skills)}")
        return self.skills[name]

    def load_skill(self, args: dict[str, Any]) -> str:
        skill = self._named_skill(args)
        bundled = [p for p in _listing(skill.path, skill.path).splitlines()
                   if p != "SKILL.md" and not _is_eval_set(Path(p))]
        files = "\n".join(f"- {p}" for p in bundled) or "(none)"
        return (f"# Skill: {skill.name}\n\n{skill.body}\n\n"
                f"Bundled files (read with read_skill_file):\n{files}")

    def read_skill_file(self, args: dict[str, Any]) -> str:
        skill = self._named_skill(args)
        path = confine(skill.path, _str_arg(args, "path"))
        if _is_eval_set(path.relative_to(skill.path.resolve())):
            raise ToolError(f"no such skill file: {args['path']!r}")
        if not path.is_file():
            raise ToolError(f"no such skill file: {args['path']!r}")
        return path.read_text(encoding="utf-8")


def _str_arg(args: dict[str, Any], name: str, allow_empty: bool = False) -> str:
    value = args.get(name)
    if not isinstance(value, str) or (not allow_empty and value == ""):
        raise ToolError(f"argument {name!r} is required and must be a string")
    return value


def _is_eval_set(relative: Path) -> bool:
    """The skill folder's `evals/` holds the prompts and expected answers it is graded on: the
    agent never sees it (store.layout.copy_skill_tree leaves it out of CLI agents' copies)."""
    return bool(relative.parts) and relative.parts[0] == EVALS_DIR


def _listing(root: Path, relative_to: Path) -> str:
    """Files only, sorted, capped: a model needs names, and a huge tree must not flood it."""
    names: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            names.append(str((Path(dirpath) / name).relative_to(relative_to)))
            if len(names) >= MAX_LISTED_FILES:
                return "\n".join(names + [f"... (stopped at {MAX_LISTED_FILES} files)"])
    return "\n".join(names)


@dataclass
class LoopLimits:
    max_turns: int
    token_budget: int | None
    timeout_seconds: float

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> LoopLimits:
        opts = settings.options
        budget = opts.get("token_budget")
        return cls(max_turns=int(opts.get("max_turns", DEFAULT_MAX_TURNS)),
                   token_budget=None if budget is None else int(budget),
                   timeout_seconds=float(settings.timeout_seconds))


class _Tally:
    """Running totals for one trial; becomes the TrialResult."""

    def __init__(self, request: TrialRequest, transcript: list[dict[str, Any]]) -> None:
        self.result = TrialResult(transcript=transcript, model=request.settings.model,
                                  # the baseline has no skill tool: it loaded nothing (issue 33)
                                  skill_triggered=False if request.skill or request.settings.skill_under_test
                                  else None,
                                  usage=Usage(input_tokens=0, output_tokens=0,
                                              cached_input_tokens=0))
        self.reported: dict[str, bool] = {"input": False, "output": False, "cached": False}
        self.prices = request.settings.options.get("prices")
        self.skill_name = request.skill.name if request.skill is not None else None
        self.skill_names = [s.name for s in request.skills]

    def add_turn(self, turn: ModelTurn) -> None:
        u, r = self.result.usage, self.result
        r.steps += 1
        for key, attr, value in (("input", "input_tokens", turn.input_tokens),
                                 ("output", "output_tokens", turn.output_tokens),
                                 ("cached", "cached_input_tokens", turn.cached_input_tokens)):
            if value is not None:
                self.reported[key] = True
                setattr(u, attr, (getattr(u, attr) or 0) + value)
        u.raw.setdefault("turns", []).append(
            {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens,
             "cached_input_tokens": turn.cached_input_tokens})
        if turn.raw.get("model"):
            r.model = str(turn.raw["model"])

    def add_tool(self, call: ToolCall, is_error: bool) -> None:
        r = self.result
        r.tool_calls[call.name] = r.tool_calls.get(call.name, 0) + 1
        r.errors_encountered += int(is_error)
        if call.name == "load_skill" and not is_error and \
                resolve_skill_name(_name_arg(call.arguments), self.skill_names) == self.skill_name:
            r.skill_triggered = True

    def total_tokens(self) -> int:
        return self.result.usage.total_tokens or 0

    def finish(self, status: str, error: str | None, started: float) -> TrialResult:
        r, u = self.result, self.result.usage
        # A provider that never reported a count gives None ("unknown"), not a fake zero.
        u.input_tokens = u.input_tokens if self.reported["input"] else None
        u.output_tokens = u.output_tokens if self.reported["output"] else None
        u.cached_input_tokens = u.cached_input_tokens if self.reported["cached"] else None
        u.cost_usd = cost_usd(u, self.prices)
        u.cost_source = "priced" if u.cost_usd is not None else None
        r.status, r.error = status, error  # type: ignore[assignment]
        r.agent_duration_ms = int((time.monotonic() - started) * 1000)
        return r


def cost_usd(usage: Usage, prices: dict[str, float] | None) -> float | None:
    """Cost from options.prices (USD per million tokens: input, output, cached_input). APIs do
    not report cost and price lists change, so the user states the prices they pay."""
    if not prices or usage.input_tokens is None or usage.output_tokens is None:
        return None
    cached = usage.cached_input_tokens or 0
    cached_price = prices.get("cached_input", prices.get("input", 0.0))
    total = ((usage.input_tokens - cached) * prices.get("input", 0.0) + cached * cached_price
             + usage.output_tokens * prices.get("output", 0.0))
    return round(total / 1_000_000, 6)


def run_loop(conversation: Conversation, toolbox: ToolBox, request: TrialRequest,
             transcript: list[dict[str, Any]]) -> TrialResult:
    """Ask, run the tools it asks for, repeat until it answers without tools or a limit hits.
    Provider failures that survived the executor's retries end the trial as status "error"."""
    limits = LoopLimits.from_settings(request.settings)
    tally = _Tally(request, transcript)
    started = time.monotonic()
    deadline = started + limits.timeout_seconds
    toolbox.deadline = deadline
    last_text = ""
    for _ in range(limits.max_turns):
        if process_group.stop_requested():  # the run is stopping (run/interrupt.py): no more turns
            tally.result.final_text = last_text
            return tally.finish("error", "stopped: the run was interrupted", started)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return _timeout(tally, last_text, limits, started)
        try:
            turn = conversation.complete(timeout=remaining)
        except Exception as exc:  # noqa: BLE001 - any provider failure ends this trial only
            transcript.append({"type": "error", "error": _describe(exc)})
            if time.monotonic() >= deadline:
                return _timeout(tally, last_text, limits, started)
            tally.result.final_text = last_text
            return tally.finish("error", _describe(exc), started)
        tally.add_turn(turn)
        transcript.append({"type": "assistant", "text": turn.text, "stop_reason": turn.stop_reason,
                           "tool_calls": [_call_json(c) for c in turn.tool_calls],
                           "usage": {"input_tokens": turn.input_tokens,
                                     "output_tokens": turn.output_tokens,
                                     "cached_input_tokens": turn.cached_input_tokens},
                           "raw": turn.raw})
        last_text = turn.text or last_text
        if not turn.tool_calls:
            tally.result.final_text = turn.text
            return tally.finish("ok", None, started)
        if limits.token_budget is not None and tally.total_tokens() > limits.token_budget:
            tally.result.final_text = last_text
            return tally.finish("error", f"token budget exceeded: {tally.total_tokens()} > "
                                f"{limits.token_budget} tokens", started)
        conversation.add_tool_results(_run_tools(toolbox, turn.tool_calls, tally, transcript))
    tally.result.final_text = last_text
    return tally.finish("error", f"max_turns ({limits.max_turns}) reached without a final answer",
                        started)


def _run_tools(toolbox: ToolBox, calls: list[ToolCall], tally: _Tally,
               transcript: list[dict[str, Any]]) -> list[tuple[ToolCall, str, bool]]:
    results = []
    for call in calls:
        t0 = time.monotonic()
        output, is_error = toolbox.call(call)
        tally.add_tool(call, is_error)
        transcript.append({"type": "tool_result", "id": call.id, "name": call.name,
                           "is_error": is_error, "output": output,
                           "duration_ms": int((time.monotonic() - t0) * 1000)})
        results.append((call, output, is_error))
    return results


def _timeout(tally: _Tally, last_text: str, limits: LoopLimits, started: float) -> TrialResult:
    tally.result.final_text = last_text
    return tally.finish("timeout", f"timed out after {limits.timeout_seconds:g}s", started)


def _name_arg(arguments: Any) -> Any:
    return arguments.get("name") if isinstance(arguments, dict) else None


def resolve_skill_name(name: Any, names: Sequence[str]) -> str | None:
    """The installed skill a load_skill call means (`names`: the skill under test first), or
    None when it names none of them. No name, or any name while only one skill is installed,
    means the skill under test: the tool's name argument is optional, and a small model writes
    "French-greeter" for french-greeter. Otherwise an exact name, then a case-insensitive one."""
    if not names:
        return None
    if name is None or name == "" or len(names) == 1:
        return names[0]
    if not isinstance(name, str):
        return None
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.strip().lower()]
    return folded[0] if len(folded) == 1 else None


def skills_loaded(transcript: list[dict[str, Any]], names: Sequence[str]) -> list[str]:
    """Which of `names` the run loaded, in order: load_skill calls that did not fail, read
    from the transcript (assistant tool calls joined to their results by id)."""
    failed = {str(e.get("id")) for e in transcript if e.get("type") == "tool_result" and e.get("is_error")}
    loaded: list[str] = []
    calls = [c for e in transcript if e.get("type") == "assistant" for c in e.get("tool_calls") or []
             if isinstance(c, dict)]
    for call in calls:
        if call.get("name") != "load_skill" or str(call.get("id")) in failed:
            continue
        name = resolve_skill_name(_name_arg(call.get("arguments")), names)
        if name is not None and name not in loaded:
            loaded.append(name)
    return loaded


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def parse_arguments(text: str | None) -> dict[str, Any] | str:
    """Tool arguments arrive as a JSON string on OpenAI-style APIs; keep the raw text when the
    model wrote something else so the error it gets back quotes what it sent."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


def retry_recorder(transcript: list[dict[str, Any]]) -> Callable[[RetryCallState], None]:
    """A tenacity `before_sleep` hook: each retry becomes a transcript event, so a slow or
    flaky trial can be explained afterwards."""

    def record(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        transcript.append({"type": "retry", "attempt": state.attempt_number,
                           "error": _describe(exc) if exc else None,
                           "sleep_seconds": round(state.upcoming_sleep, 3)})

    return record


def call_with_retries(fn: Callable[[float], T], is_transient: Callable[[BaseException], bool],
                      options: dict[str, Any], transcript: list[dict[str, Any]],
                      timeout: float) -> T:
    """Call fn(remaining_seconds), retrying transient provider failures (rate limits, 5xx,
    dropped connections) with exponential backoff, never past the trial's deadline. The SDKs'
    own retries are switched off so that every retry is visible in the transcript."""
    attempts = int(options.get("retry_attempts", 5))
    initial = float(options.get("retry_initial_wait", 1.0))
    deadline = time.monotonic() + timeout
    retrying = Retrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_attempt(attempts) | stop_after_delay(timeout) | stop_before_deadline(deadline),
        wait=wait_retry_after(wait_exponential(multiplier=initial, max=float(options.get("retry_max_wait", 30.0)))),
        before_sleep=retry_recorder(transcript),
        reraise=True,
    )
    return retrying(lambda: fn(max(deadline - time.monotonic(), 0.001)))


def trial_setup(request: TrialRequest) -> tuple[ToolBox, str, list[dict[str, Any]]]:
    """What both API executors start a trial with: tools, system prompt, opening transcript."""
    toolbox = ToolBox(request.workdir, request.skill, request.settings.options, request.extra_skills,
                      request.settings.sandbox)
    system = system_prompt(request.skill, request.extra_skills)
    transcript: list[dict[str, Any]] = [
        {"type": "system", "text": system, "tools": [t.name for t in toolbox.specs]},
        {"type": "user", "text": request.prompt},
    ]
    return toolbox, system, transcript


def is_transient_api_error(exc: BaseException, connection_error: type[BaseException],
                           status_error: type[BaseException]) -> bool:
    """For an SDK's exceptions: 408/409/429 (rate limits), any 5xx (529 overloaded included)
    and dropped connections are worth a retry; a bad request never will be."""
    if isinstance(exc, connection_error):  # the SDKs' timeout errors subclass it
        return True
    if isinstance(exc, status_error):
        status = getattr(exc, "status_code", 0)
        return status in (408, 409, 429) or status >= 500
    return False


class AgentLoopExecutor(Executor):
    """An API executor: this module's loop, talking to the provider through `self.client` (an
    SDK client, set by the subclass's __init__) and a `Conversation` from `conversation()`."""

    handles_timeout: ClassVar[bool] = True  # deadline enforced in run(), children killed
    supports_turns: ClassVar[bool] = True
    default_key_env: ClassVar[str]  # where the API key is read unless options.api_key_env says
    client: Any

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        if not settings.model:
            raise InputError.one("--model", "", f"the {self.name} executor needs a model name")

    def api_key(self) -> tuple[str, str | None]:
        """(the variable named by options.api_key_env or the default, its value if set)."""
        key_env = str(self.settings.options.get("api_key_env", self.default_key_env))
        return key_env, os.environ.get(key_env)

    @abstractmethod
    def conversation(self, request: TrialRequest, system: str, tools: list[ToolSpec],
                     transcript: list[dict[str, Any]]) -> Conversation:
        """A fresh provider conversation for one trial."""

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["base_url"] = mask_userinfo(str(self.client.base_url))  # recorded in iteration.json
        return ident

    def run(self, request: TrialRequest) -> TrialResult:
        toolbox, system, transcript = trial_setup(request)
        conversation = self.conversation(request, system, toolbox.specs, transcript)
        if request.turns:  # one history carries every turn (agent_turns.py)
            return converse(conversation, request, transcript, lambda r, t: run_loop(conversation, toolbox, r, t))
        return run_loop(conversation, toolbox, request, transcript)

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        return skills_loaded(result.transcript, names)

    def close(self) -> None:
        self.client.close()
