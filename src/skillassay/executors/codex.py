"""The `codex` executor: one trial = one `codex exec --json` run (a multi-turn eval: one run per
user message, each after the first `codex exec resume`-ing the thread).

The CLI runs in a private copy of the work dir (see `isolated_workdir`). The two arms differ
only in whether the skill folder sits in `.agents/skills/<name>/` of that dir (where Codex
discovers repository skills). Each run gets a fresh CODEX_HOME and HOME, so the
user's config, auth.json, `~/.agents/skills` and session history cannot leak into either
arm; credentials come only from the environment. `--ephemeral` keeps Codex from persisting
a single run's session (a conversation's is kept, in that private CODEX_HOME, for its later
turns); `--skip-git-repo-check` because trial work dirs are not repositories."""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from skillassay.executors.agent_cli import AgentCliExecutor
from skillassay.executors.agent_home import home_problem
from skillassay.executors.agent_sandbox import ApiRoute
from skillassay.executors.base import ExecutorSettings, TrialResult, Usage
from skillassay.executors.harness_faults import all_commands_broken, fault_line
from skillassay.executors.probe import probe_openai
from skillassay.executors.session_counts import counts_since
from skillassay.sandbox import PLACEHOLDER_KEY

BINARY = "codex"
INSTALL_HINT = "npm install -g @openai/codex"
PROVIDER_ID = "skillassay"
SKILLS_DIR = (".agents", "skills")  # under the work dir, where Codex discovers repository skills
# Items that are the agent talking or thinking, not acting.
_NON_TOOL_ITEMS = frozenset({"agent_message", "reasoning", "todo_list", "error", "user_message"})
# Codex reports HTTP failures as text ("unexpected status 529 ...", "exceeded retry limit,
# last status: 429 Too Many Requests"); these are the retryable ones.
_TRANSIENT = re.compile(
    r"status:?\s*(408|409|429|5\d\d)\b|too many requests|overloaded|rate.?limit"
    r"|stream disconnected|connection (reset|refused)"
    r"|currently experiencing high demand", re.IGNORECASE)  # Codex's own text for a 500 from the API
_RECONNECTING = re.compile(r"^Reconnecting\.\.\. \d+/\d+ \((.*)\)$", re.DOTALL)


# ------------------------------------------------------------------------------- parsing

def item_type(item: dict[str, Any]) -> str:
    """Codex <= 0.2x wrote `item_type`; current releases write `type`."""
    return str(item.get("type") or item.get("item_type") or "")


def parse_stream(events: list[dict[str, Any]], skill_name: str | None = None,
                 earlier: list[dict[str, Any]] | None = None) -> TrialResult:
    """Turn `codex exec --json` events into a TrialResult; pure, tested on recorded runs.

    Tool calls are counted once per item id (items are announced by item.started and again
    by item.completed). Usage is taken from the last `turn.completed`: exec runs one turn, and
    its usage already sums every model request of the turn. That usage is the thread's, not the
    run's (measured on 0.171.0: `exec resume` after a turn of 100 input tokens reports 100 plus
    its own), so for a resumed run the last usage of `earlier` (the thread's turns before it)
    is subtracted; the thread's figure stays in raw as `thread_total`."""
    out = TrialResult(transcript=list(events))
    items = _items_by_id(events)
    for item in items.values():
        _count_item(out, item)
    if skill_name is not None:
        out.skill_triggered = any(_reads_skill(i, skill_name) for i in items.values())
    messages = [i for i in items.values() if item_type(i) == "agent_message"]
    out.final_text = str(messages[-1].get("text") or "") if messages else ""
    usage = _last_usage(events)
    before = _last_usage(earlier or [])
    if usage is not None and before is not None:
        usage = _since(usage, before)
    if usage is not None:
        out.usage = usage
    _apply_errors(out, events)
    return out


def _items_by_id(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Latest state of each item, in order of first appearance."""
    items: dict[str, dict[str, Any]] = {}
    for n, event in enumerate(events):
        item = event.get("item")
        if str(event.get("type", "")).startswith("item.") and isinstance(item, dict):
            items[str(item.get("id") or f"_anon{n}")] = item
    return items


def tool_name(item: dict[str, Any]) -> str:
    """MCP tools are named like Claude Code names them (mcp__server__tool), so one
    `tool_called` assertion reads the same for both agents."""
    kind = item_type(item)
    if kind == "mcp_tool_call" and item.get("server") and item.get("tool"):
        return f"mcp__{item['server']}__{item['tool']}"
    return kind


def _count_item(out: TrialResult, item: dict[str, Any]) -> None:
    """A step is something the agent did: a message or an action (Codex reports no turns)."""
    kind = item_type(item)
    if kind == "agent_message":
        out.steps += 1
    if kind in _NON_TOOL_ITEMS or not kind:
        return
    out.steps += 1
    name = tool_name(item)
    out.tool_calls[name] = out.tool_calls.get(name, 0) + 1
    if _item_failed(item):
        out.errors_encountered += 1


def _item_failed(item: dict[str, Any]) -> bool:
    code = item.get("exit_code")
    return item.get("status") == "failed" or (isinstance(code, int) and code != 0) \
        or bool(item.get("error"))


def _reads_skill(item: dict[str, Any], skill_name: str) -> bool:
    """Codex has no Skill tool: it uses a skill by reading its SKILL.md with a command. The
    decision is made on the paths the command really read (after its `cd`s) and on whether it
    succeeded: a failed `cat /nonexistent/<name>/SKILL.md` loaded nothing, while
    `cd .agents/skills/<name> && cat SKILL.md` did."""
    if item_type(item) != "command_execution" or not _succeeded(item):
        return False
    want = (*SKILLS_DIR, skill_name, "SKILL.md")
    return any(PurePosixPath(p).parts[-len(want):] == want for p in files_read(str(item.get("command") or "")))


def skills_loaded(events: list[dict[str, Any]], names: Sequence[str]) -> list[str]:
    """Which of `names` the run loaded, in order: a command that successfully read the skill's
    SKILL.md under `.agents/skills/`, at any point of the run (see _reads_skill)."""
    loaded: list[str] = []
    for item in _items_by_id(events).values():
        loaded += [n for n in names if n not in loaded and _reads_skill(item, n)]
    return loaded


def shell_commands(events: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    """(failed, output) of every finished shell command of the run."""
    return [(_item_failed(i), str(i.get("aggregated_output") or "")) for i in _items_by_id(events).values()
            if item_type(i) == "command_execution" and i.get("status") != "in_progress"]


def _succeeded(item: dict[str, Any]) -> bool:
    """Exit 0, and no `cat: ...SKILL.md: No such file or directory` from a reader whose failure
    a later command masked (`; true`). Only that exact complaint counts: the skill's own text
    may well say "No such file or directory"."""
    return item.get("exit_code") == 0 and item.get("status") != "failed" \
        and "SKILL.md: No such file or directory" not in str(item.get("aggregated_output") or "")


_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
# Commands that show a file's text to the model; their operands are the files read.
_READERS = frozenset({"cat", "head", "tail", "sed", "awk", "nl", "less", "more", "bat", "batcat", "grep",
                      "egrep", "rg", "view"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_REDIRECTS = frozenset({">", ">>", "<", ">&", "<<", "<<<", "2>", "&>"})


def _words(script: str) -> list[str]:
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: read what can be read
        return script.split()


def _shell_script(argv: list[str]) -> str | None:
    """`/bin/bash -lc 'SCRIPT'` (how Codex runs shell commands) -> SCRIPT."""
    if len(argv) >= 3 and PurePosixPath(argv[0]).name in _SHELLS and argv[1].startswith("-") and "c" in argv[1]:
        return argv[2]
    return None


def files_read(command: str) -> list[str]:
    """The files a shell command line hands to a reader (cat, head, sed...), each joined to
    the directory the command had `cd`-ed to at that point (relative to the agent's cwd, ".")."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    script = _shell_script(argv)
    words = _words(script if script is not None else command)
    cwd, read, simple = ".", list[str](), list[str]()
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            simple.append(word)
            continue
        cwd = _simple_command(simple, cwd, read)
        simple = []
    return read


def _simple_command(words: list[str], cwd: str, read: list[str]) -> str:
    """Adds the files `words` reads to `read`; returns the cwd after it."""
    operands: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _REDIRECTS:
            skip = True  # the redirect's target is written, not read
        elif not word.startswith("-") and (operands or not _ASSIGNMENT.match(word)):  # FOO=1 cat x
            operands.append(word)
    if not operands:
        return cwd
    name, args = PurePosixPath(operands[0]).name, operands[1:]
    if name == "cd":
        return posixpath.normpath(posixpath.join(cwd, args[0])) if args else cwd
    if name in _READERS:
        read.extend(posixpath.normpath(posixpath.join(cwd, a)) for a in args)
    return cwd


def _last_usage(events: list[dict[str, Any]]) -> Usage | None:
    """Codex's cached_input_tokens is already a subset of input_tokens, as in our Usage. A
    turn that called the model never used 0 tokens: 0/0 is no count, so usage stays unknown."""
    for event in reversed(events):
        raw = event.get("usage")
        if event.get("type") == "turn.completed" and isinstance(raw, dict) \
                and (raw.get("input_tokens") or raw.get("output_tokens")):
            return Usage(input_tokens=_int(raw.get("input_tokens")),
                         output_tokens=_int(raw.get("output_tokens")),
                         cached_input_tokens=_int(raw.get("cached_input_tokens")),
                         raw=dict(raw))
    return None


def _since(usage: Usage, before: Usage) -> Usage:
    """A resumed run's usage: the thread's counters minus those of the turns before it."""
    raw = counts_since(usage.raw, before.raw, [k for k, v in usage.raw.items() if isinstance(v, int)])
    raw["thread_total"] = dict(usage.raw)
    return Usage(input_tokens=_int(raw.get("input_tokens")), output_tokens=_int(raw.get("output_tokens")),
                 cached_input_tokens=_int(raw.get("cached_input_tokens")), raw=raw)


def thread_id(events: list[dict[str, Any]]) -> str | None:
    """The thread a run belongs to, from its `thread.started` event."""
    for event in events:
        if event.get("type") == "thread.started" and isinstance(event.get("thread_id"), str):
            return str(event["thread_id"])
    return None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _apply_errors(out: TrialResult, events: list[dict[str, Any]]) -> None:
    """A `turn.failed`, or a top-level `error` event with no `turn.completed` after it, ends
    the run in error. An `error` event that a completed turn follows was recovered from (Codex
    prints "Reconnecting... 1/5 (stream disconnected ...)" and retries the request itself): it
    is counted in errors_encountered and stays in the transcript, but the answer stands.
    `error` *items* are non-fatal notices (e.g. unknown model metadata) and only stay there."""
    last_completed = max((i for i, e in enumerate(events) if e.get("type") == "turn.completed"), default=-1)
    messages: list[str] = []
    for i, event in enumerate(events):
        kind = event.get("type")
        if kind == "error" and i < last_completed:
            out.errors_encountered += 1
        elif kind == "error":
            messages.append(str(event.get("message") or "error"))
        elif kind == "turn.failed":
            err = event.get("error")
            text = err.get("message") if isinstance(err, dict) else err
            messages.append(str(text or "turn failed"))
    if messages:
        out.status = "error"
        out.error = "; ".join(dict.fromkeys(messages))


def is_transient(error: str | None) -> bool:
    return bool(error) and bool(_TRANSIENT.search(error or ""))


# ------------------------------------------------------------------------------- process

def _toml(value: Any) -> str:
    """JSON strings, numbers and booleans are valid TOML values."""
    return json.dumps(value)


def provider_overrides(options: Mapping[str, Any]) -> list[str]:
    """`-c` overrides for a custom Responses endpoint: Codex ignores OPENAI_BASE_URL, so a
    loopback or proxy URL has to be declared as a model provider."""
    base_url = options.get("base_url")
    if not base_url:
        return []
    fields = {"name": PROVIDER_ID, "base_url": str(base_url),
              "env_key": str(options.get("api_key_env", "OPENAI_API_KEY")),
              "wire_api": "responses", "supports_websockets": False}
    if options.get("max_retries") is not None:
        fields["request_max_retries"] = int(options["max_retries"])
        fields["stream_max_retries"] = int(options["max_retries"])
    table = "{" + ",".join(f"{k}={_toml(v)}" for k, v in fields.items()) + "}"
    return ["-c", f"model_providers.{PROVIDER_ID}={table}", "-c", f"model_provider={PROVIDER_ID}"]


def build_argv(binary: str, prompt: str, workdir: Path, settings: ExecutorSettings, *,
               keep_session: bool = False, resume: str | None = None) -> list[str]:
    """Identical for both arms: the skill is only ever a folder on disk. A single run is
    `--ephemeral` (nothing persisted); the first turn of a conversation keeps its session
    (`keep_session`, in the trial's private CODEX_HOME) and each later one is
    `codex exec [same options] resume -- <thread id> <prompt>` (`resume`)."""
    opts = settings.options
    argv = [binary, "exec", "--json", *([] if keep_session or resume else ["--ephemeral"]), "--skip-git-repo-check",
            "--sandbox", str(opts.get("sandbox", "workspace-write")), "-C", str(workdir)]
    if settings.model:
        argv += ["-m", settings.model]
    argv += provider_overrides(opts)
    argv += [str(a) for a in opts.get("extra_args", [])]
    # `--` so a prompt like "resume" or "-x" is never read as a subcommand or flag.
    return [*argv, *(["resume", "--", resume] if resume else ["--"]), prompt]


def build_env(base: Mapping[str, str], home: Path) -> dict[str, str]:
    env = dict(base)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)  # Codex requires CODEX_HOME to exist
    env.update(HOME=str(home), CODEX_HOME=str(codex_home))
    # `codex exec` authenticates from CODEX_API_KEY; most users export OPENAI_API_KEY.
    if not env.get("CODEX_API_KEY") and env.get("OPENAI_API_KEY"):
        env["CODEX_API_KEY"] = env["OPENAI_API_KEY"]
    return env


class CodexExecutor(AgentCliExecutor):
    """Runs the real OpenAI Codex CLI headless in the trial's work dir."""

    name: ClassVar[str] = "codex"
    binary: ClassVar[str] = BINARY
    install_hint: ClassVar[str] = INSTALL_HINT
    key_env_vars: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY")
    missing_key: ClassVar[str] = "OPENAI_API_KEY (or CODEX_API_KEY) not set"
    skills_dir: ClassVar[tuple[str, ...]] = SKILLS_DIR
    temp_prefix: ClassVar[str] = "skillassay-codex-"

    # A conversation's later turns `exec resume` the first turn's thread, which Codex keeps under
    # CODEX_HOME/sessions/: the trial's private home, the same for every turn.
    supports_turns: ClassVar[bool] = True

    def command_line(self, binary: str, prompt: str, cwd: Path, base_url: str | None = None, *,
                     conversation: bool = False) -> list[str]:
        return build_argv(binary, prompt, cwd, self._settings_for(base_url), keep_session=conversation)

    def resume_line(self, binary: str, prompt: str, cwd: Path, session: str, base_url: str | None = None
                    ) -> list[str]:
        return build_argv(binary, prompt, cwd, self._settings_for(base_url), resume=session)

    def session_of(self, events: list[dict[str, Any]]) -> str | None:
        return thread_id(events)

    def _settings_for(self, base_url: str | None) -> ExecutorSettings:
        if base_url is None:
            return self.settings
        # Confined by skillassay (a proxy URL is given only then): Codex's own bubblewrap sandbox
        # would nest in ours and refuses to build its helper under the temp folder, failing every
        # command (issue 33); ours already confines the CLI and all it runs, so it is turned off
        # unless options.sandbox asks for it.
        options = {"sandbox": "danger-full-access", **self.settings.options, "base_url": base_url,
                   "api_key_env": "CODEX_API_KEY"}
        return replace(self.settings, options=options)

    home_env_vars: ClassVar[tuple[str, ...]] = ("CODEX_HOME",)

    def api_route(self, env: Mapping[str, str]) -> ApiRoute:
        """The Responses API at options.base_url (else OPENAI_BASE_URL, else OpenAI's); the key
        as Bearer. Inside, the CLI's provider points at the proxy with a placeholder key."""
        key = env.get("CODEX_API_KEY") or env.get(str(self.settings.options.get("api_key_env", "OPENAI_API_KEY")))
        upstream = str(self.settings.options.get("base_url") or env.get("OPENAI_BASE_URL")
                       or "https://api.openai.com/v1")
        return ApiRoute(upstream, {"authorization": f"Bearer {key}" if key else ""},
                        {"CODEX_API_KEY": PLACEHOLDER_KEY})

    def ready(self) -> str | None:
        return home_problem() or super().ready()

    def probe(self) -> str | None:
        """The key Codex will send: a custom provider's env_key (options.api_key_env, else
        OPENAI_API_KEY), the hosted API's CODEX_API_KEY (build_env copies OPENAI_API_KEY there)."""
        opts = self.settings.options
        names = ([str(opts.get("api_key_env", "OPENAI_API_KEY")), "CODEX_API_KEY"] if opts.get("base_url")
                 else ["CODEX_API_KEY", "OPENAI_API_KEY"])
        key = next((os.environ[n] for n in names if os.environ.get(n)), None)
        return probe_openai(str(opts["base_url"]) if opts.get("base_url") else None, key)

    def child_env(self, base: Mapping[str, str], home: Path) -> dict[str, str]:
        return build_env(base, home)

    def parse_events(self, events: list[dict[str, Any]], skill_name: str | None,
                     earlier: list[dict[str, Any]] | None = None) -> TrialResult:
        return parse_stream(events, skill_name, earlier)

    def transient_failure(self, result: TrialResult) -> bool:
        return result.status == "error" and is_transient(result.error)

    def provider_retry(self, event: dict[str, Any]) -> str | None:
        """Codex announces each stream retry as a top-level `error` event "Reconnecting... n/m (cause)"."""
        found = _RECONNECTING.match(str(event.get("message") or "")) if event.get("type") == "error" else None
        return found.group(1) if found else None

    def model_answered(self, event: dict[str, Any]) -> bool:
        item = event.get("item")
        kind = str(event.get("type") or "")
        return (kind.startswith("item.") and isinstance(item, dict) and item_type(item) != "error") \
            or kind == "turn.completed"

    def harness_fault(self, result: TrialResult, stderr: str) -> str | None:
        """Codex without its sandbox helper runs no shell command at all, and then does not even
        report the commands as items (the model alone sees `bwrap: execvp codex-linux-sandbox`):
        its own warning on stderr is the evidence. Else: every command item failed that way."""
        helper = fault_line("\n".join(line for line in stderr.splitlines() if "helper binaries" in line))
        if helper is not None:
            return f"Codex could not create its sandbox helper, so no shell command could run ({helper})"
        return all_commands_broken(shell_commands(result.transcript))

    def unfinished(self, result: TrialResult) -> str | None:
        completed = any(e.get("type") == "turn.completed" for e in result.transcript)
        return "before the turn completed" if not completed and result.status == "ok" else None

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        return skills_loaded(result.transcript, names)


__all__ = ["CodexExecutor", "build_argv", "build_env", "parse_stream", "provider_overrides", "skills_loaded",
           "thread_id"]
