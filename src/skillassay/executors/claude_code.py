"""The `claude-code` executor: one trial = one `claude -p ... --output-format stream-json` run
(a multi-turn eval: one run per user message, each after the first `--resume`-ing the session).

The CLI runs in a private copy of the work dir (see `isolated_workdir`: Claude Code also loads
skills from parent directories). The two arms differ only in whether the skill folder sits in
`.claude/skills/<name>/` of that dir (where Claude Code discovers project skills); every flag
is the same. Each trial gets a fresh
HOME and CLAUDE_CONFIG_DIR so the user's own skills, settings, CLAUDE.md and sessions cannot
leak into either arm (a conversation's own session is kept there, between its turns);
credentials come only from the environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from skillassay.executors.agent_cli import AgentCliExecutor
from skillassay.executors.agent_sandbox import ApiRoute
from skillassay.executors.base import ExecutorSettings, TrialResult, Usage
from skillassay.executors.harness_faults import all_commands_broken
from skillassay.executors.probe import probe_anthropic
from skillassay.executors.session_counts import counts_since
from skillassay.sandbox import PLACEHOLDER_KEY

BINARY = "claude"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
DEFAULT_ALLOWED_TOOLS = ("Skill", "Read", "Write", "Edit", "Bash", "Glob", "Grep")
# Set by a parent Claude Code session; a nested `claude` would otherwise behave as a child.
_PARENT_SESSION_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT")
# A benchmark must not change under its own feet: no self-update mid-run, no telemetry calls.
_QUIET_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
              "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}
# The per-model counters of a result event's modelUsage, which grow over a resumed session.
_SESSION_COUNTS = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens",
                   "cacheCreationEphemeral5mInputTokens", "cacheCreationEphemeral1hInputTokens", "thinkingTokens",
                   "webSearchRequests", "costUSD")
# HTTP statuses worth retrying the whole trial for (Claude Code already retried internally).
_TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


# ------------------------------------------------------------------------------- parsing

def parse_stream(events: list[dict[str, Any]], skill_name: str | None = None,
                 earlier: list[dict[str, Any]] | None = None) -> TrialResult:
    """Turn stream-json events into a TrialResult; pure, so it is tested on recorded runs.

    Tokens, cost, turns and duration come from the final `result` event only: the per-message
    usage in `assistant` events is a streaming snapshot (output_tokens is 1 there), so summing
    it would be wrong. No `result` event (killed run) means usage unknown, not zero. `earlier`:
    the events of the session's turns before this run (`--resume`), whose figures the result
    event's session-long ones include (see this_turn)."""
    result_event = _last_result(events)
    if result_event is not None and earlier:
        result_event = this_turn(result_event, _last_result(earlier))
    tool_uses = _tool_uses(events)
    out = TrialResult(transcript=list(events), model=_model(events))
    for use in tool_uses:
        name = str(use.get("name", "?"))
        out.tool_calls[name] = out.tool_calls.get(name, 0) + 1
    out.errors_encountered = _tool_error_count(events)
    if skill_name is not None:
        out.skill_triggered = bool(skills_loaded(events, [skill_name]))
    if result_event is None:
        out.steps = _assistant_turns(events)
        out.final_text = _last_assistant_text(events)
        return out
    _apply_result(out, result_event)
    return out


def this_turn(event: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """A resumed run's `result` event with its session-long figures made the run's own.

    Measured on Claude Code 2.1.332 against the loopback fake: after `--resume`, `usage`,
    `duration_ms` and `num_turns` are the run's, but `modelUsage` and `total_cost_usd` carry
    the whole session (turn 2 of 100+200 input tokens reports usage 200, modelUsage 300). The
    previous turn's result event (`before`) is subtracted from those two; their session values
    stay beside them as session_modelUsage / session_cost_usd."""
    if before is None:
        return event
    out = dict(event)
    out["total_cost_usd"] = counts_since(event, before, ("total_cost_usd",)).get("total_cost_usd")
    now, then = event.get("modelUsage"), before.get("modelUsage")
    if isinstance(now, dict):
        prior = then if isinstance(then, dict) else {}
        out["modelUsage"] = {name: counts_since(m, prior.get(name) if isinstance(prior.get(name), dict) else None,
                                                _SESSION_COUNTS) if isinstance(m, dict) else m
                             for name, m in now.items()}
    out["session_modelUsage"], out["session_cost_usd"] = now, event.get("total_cost_usd")
    return out


def _apply_result(out: TrialResult, event: dict[str, Any]) -> None:
    out.usage = _usage(event)
    out.steps = int(event.get("num_turns") or 0)
    if isinstance(event.get("duration_ms"), int | float):
        out.agent_duration_ms = int(event["duration_ms"])
    out.final_text = str(event.get("result") or "")
    subtype = str(event.get("subtype") or "")
    if event.get("is_error") or (subtype and subtype != "success"):
        out.status = "error"
        out.error = _error_text(event)


def _usage(event: dict[str, Any]) -> Usage:
    """Anthropic reports cache reads and writes beside input_tokens; our Usage counts every
    input token in input_tokens and the cache reads again as cached_input_tokens.

    The result event gives two accounts: `usage`, and `modelUsage` per model. They disagree
    when a stream broke: the CLI's non-streaming retry is counted in `modelUsage` only (usage
    0/0 when the first turn broke, 777/55 where the server and modelUsage say 1554/110 when a
    later one did). Both are kept; the larger is the figure (tokens the provider answered are
    tokens spent), `source` says which, and `warning` shows the disagreement rather than
    resolving it silently. `usage` matching one model's entry of `modelUsage` is no
    disagreement: the other entries are side models (a small fast one), and the sum counts
    them. A run that called a model never used 0 tokens: with neither giving a count, unknown."""
    cost = event.get("total_cost_usd")
    cost_usd = float(cost) if isinstance(cost, int | float) else None
    given = event.get("usage")
    raw: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    per_model = event.get("modelUsage")
    if per_model is not None:
        raw["modelUsage"] = per_model
    for key in ("session_modelUsage", "session_cost_usd"):
        if event.get(key) is not None:
            raw[key] = event[key]
    usage = _usage_block(raw, "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                         "output_tokens")
    usage = usage if usage is not None and (usage.input_tokens or usage.output_tokens) else None
    models = _model_usage(per_model)
    chosen, source, warning = _reconcile(usage, models, per_model)
    if chosen is None:  # unknown, not zero; and a cost of 0 for it is no figure either
        return Usage(cost_usd=cost_usd or None, raw=raw)
    chosen.cost_usd, chosen.raw, chosen.source, chosen.warning = cost_usd, raw, source, warning
    return chosen


def _counts(u: Usage | None) -> tuple[int, int]:
    return (u.input_tokens or 0, u.output_tokens or 0) if u is not None else (0, 0)


def _reconcile(usage: Usage | None, models: Usage | None, per_model: Any
               ) -> tuple[Usage | None, str | None, str | None]:
    """(the figure, "usage" or "modelUsage", the disagreement in words or None)."""
    if models is None:
        return usage, "usage" if usage is not None else None, None
    if usage is None or _counts(usage) == _counts(models):
        return models, "modelUsage", None if usage is not None else (
            "the result's usage reported no tokens; modelUsage counted "
            f"{models.input_tokens} input / {models.output_tokens} output (a broken stream's retry)")
    entries = [_usage_block(m, "inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens")
               for m in per_model.values() if isinstance(m, dict)]
    if any(_counts(e) == _counts(usage) for e in entries):
        return models, "modelUsage", None  # usage is one model's; the sum adds the side models
    larger, source = (models, "modelUsage") if sum(_counts(models)) >= sum(_counts(usage)) else (usage, "usage")
    return larger, source, (f"the CLI's two token counts disagree: usage {usage.input_tokens} input / "
                            f"{usage.output_tokens} output, modelUsage {models.input_tokens} / {models.output_tokens}; "
                            f"the larger ({source}) is recorded")


def _usage_block(raw: dict[str, Any], fresh_key: str, written_key: str, read_key: str,
                 output_key: str) -> Usage | None:
    if not raw:
        return None
    fresh, written, read = (int(raw.get(k) or 0) for k in (fresh_key, written_key, read_key))
    output = raw.get(output_key)
    return Usage(input_tokens=fresh + written + read, output_tokens=int(output) if output is not None else None,
                 cached_input_tokens=read)


def _model_usage(per_model: Any) -> Usage | None:
    """The counts of every model the run used (a main model and a small fast one, say), summed."""
    if not isinstance(per_model, dict):
        return None
    blocks = [_usage_block(m, "inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens")
              for m in per_model.values() if isinstance(m, dict)]
    counted = [b for b in blocks if b is not None and (b.input_tokens or b.output_tokens)]
    if not counted:
        return None
    return Usage(input_tokens=sum(b.input_tokens or 0 for b in counted),
                 output_tokens=sum(b.output_tokens or 0 for b in counted),
                 cached_input_tokens=sum(b.cached_input_tokens or 0 for b in counted))


def _error_text(event: dict[str, Any]) -> str:
    subtype = str(event.get("subtype") or "")
    # An API failure arrives as subtype "success" with is_error set; don't echo "success".
    parts = [subtype if subtype and subtype != "success" else "api_error"]
    if event.get("api_error_status"):
        parts.append(f"API status {event['api_error_status']}")
    errors = event.get("errors")
    if isinstance(errors, list) and errors:
        parts.append("; ".join(str(e) for e in errors))
    elif event.get("is_error") and event.get("result"):
        parts.append(str(event["result"]))
    return ": ".join(parts)


def _last_result(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    for event in reversed(events):
        if event.get("type") == "result":
            return event
    return None


def _content_blocks(events: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """Content blocks of complete messages; `stream_event` partials are skipped so that
    --include-partial-messages does not double count."""
    blocks: list[dict[str, Any]] = []
    for event in events:
        message = event.get("message") if event.get("type") == role else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            blocks.extend(b for b in content if isinstance(b, dict))
    return blocks


def _tool_uses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per tool_use id: a message may be re-emitted as it grows."""
    seen: dict[str, dict[str, Any]] = {}
    for i, block in enumerate(_content_blocks(events, "assistant")):
        if block.get("type") == "tool_use":
            seen.setdefault(str(block.get("id") or f"_anon{i}"), block)
    return list(seen.values())


def _tool_error_count(events: list[dict[str, Any]]) -> int:
    return len(_failed_tool_ids(events))


def _uses_skill(use: dict[str, Any], skill_name: str) -> bool:
    """The Skill tool loading this skill (plugin skills are named `plugin:name`)."""
    raw = use.get("input")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if use.get("name") == "Skill":
        named = str(args.get("skill") or args.get("command") or "").lstrip("/")
        return named == skill_name or named.endswith(":" + skill_name)
    return False


def skills_loaded(events: list[dict[str, Any]], names: Sequence[str]) -> list[str]:
    """Which of `names` the run loaded, in order: a `Skill` tool_use naming one, or a `Read` of
    its `.claude/skills/<name>/SKILL.md` that did not fail (a model may open the file itself
    instead of calling the tool). Every tool call of the run counts, not only the first: an
    agent that lists files first and loads the skill after did load it."""
    failed = _failed_tool_ids(events)
    loaded: list[str] = []
    for use in _tool_uses(events):
        for name in names:
            if name not in loaded and (_uses_skill(use, name) or
                                       (_reads_skill_md(use, name) and str(use.get("id")) not in failed)):
                loaded.append(name)
    return loaded


def _reads_skill_md(use: dict[str, Any], skill_name: str) -> bool:
    raw = use.get("input")
    path = raw.get("file_path") if isinstance(raw, dict) and use.get("name") == "Read" else None
    want = (".claude", "skills", skill_name, "SKILL.md")
    return isinstance(path, str) and PurePosixPath(path).parts[-len(want):] == want


def _failed_tool_ids(events: list[dict[str, Any]]) -> set[str]:
    return {str(b.get("tool_use_id")) for b in _content_blocks(events, "user")
            if b.get("type") == "tool_result" and b.get("is_error")}


def shell_commands(events: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    """(failed, output) of every Bash tool call that got a result."""
    results = {str(b.get("tool_use_id")): b for b in _content_blocks(events, "user") if b.get("type") == "tool_result"}
    out: list[tuple[bool, str]] = []
    for use in _tool_uses(events):
        block = results.get(str(use.get("id")))
        if use.get("name") == "Bash" and block is not None:
            content = block.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            out.append((bool(block.get("is_error")), text))
    return out


def _assistant_turns(events: list[dict[str, Any]]) -> int:
    ids = {(e.get("message") or {}).get("id") for e in events if e.get("type") == "assistant"}
    return len(ids)


def _last_assistant_text(events: list[dict[str, Any]]) -> str:
    texts = [b.get("text", "") for b in _content_blocks(events, "assistant")
             if b.get("type") == "text"]
    return str(texts[-1]) if texts else ""


def _model(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        if event.get("type") == "system" and event.get("subtype") == "init":
            return event.get("model")
    return None


def session_id(events: list[dict[str, Any]]) -> str | None:
    """The session a run belongs to, from its `system`/`init` event (or its `result`)."""
    for event in events:
        if event.get("type") in ("system", "result") and isinstance(event.get("session_id"), str) \
                and (event.get("type") == "result" or event.get("subtype") == "init"):
            return str(event["session_id"])
    return None


def is_transient(event: dict[str, Any] | None) -> bool:
    status = event.get("api_error_status") if event else None
    return isinstance(status, int) and status in _TRANSIENT_STATUSES


# ------------------------------------------------------------------------------- process

def build_argv(binary: str, prompt: str, settings: ExecutorSettings, resume: str | None = None) -> list[str]:
    """Identical for both arms: the skill is only ever a folder on disk. `resume`: the session
    a later turn of a conversation continues (`--resume <session id>`), with the same flags."""
    opts = settings.options
    tools = opts.get("allowed_tools", DEFAULT_ALLOWED_TOOLS)
    tools = tools.split(",") if isinstance(tools, str) else list(tools)
    argv = [binary, "-p", "--output-format", "stream-json", "--verbose",
            "--permission-mode", str(opts.get("permission_mode", "acceptEdits")),
            "--allowedTools", ",".join(t.strip() for t in tools if t.strip())]
    if opts.get("max_turns") is not None:
        argv += ["--max-turns", str(int(opts["max_turns"]))]
    if settings.model:
        argv += ["--model", settings.model]
    argv += [str(a) for a in opts.get("extra_args", [])]
    if resume is not None:
        argv += ["--resume", resume]
    # `--` so a prompt starting with "-" is never read as a flag.
    return [*argv, "--", prompt]


def build_env(base: Mapping[str, str], home: Path, settings: ExecutorSettings) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in _PARENT_SESSION_VARS}
    env.update(_QUIET_ENV)
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"))
    if settings.options.get("base_url"):
        env["ANTHROPIC_BASE_URL"] = str(settings.options["base_url"])
    return env


class ClaudeCodeExecutor(AgentCliExecutor):
    """Runs the real Claude Code CLI headless in the trial's work dir."""

    name: ClassVar[str] = "claude-code"
    binary: ClassVar[str] = BINARY
    install_hint: ClassVar[str] = INSTALL_HINT
    key_env_vars: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    missing_key: ClassVar[str] = "ANTHROPIC_API_KEY not set"
    skills_dir: ClassVar[tuple[str, ...]] = (".claude", "skills")
    temp_prefix: ClassVar[str] = "skillassay-claude-"

    # A conversation's later turns `--resume` the first turn's session, which Claude Code keeps
    # under CLAUDE_CONFIG_DIR/projects/<cwd>/: the trial's private home, same cwd every turn.
    supports_turns: ClassVar[bool] = True

    def command_line(self, binary: str, prompt: str, cwd: Path, base_url: str | None = None, *,
                     conversation: bool = False) -> list[str]:
        return build_argv(binary, prompt, self.settings)

    def resume_line(self, binary: str, prompt: str, cwd: Path, session: str, base_url: str | None = None
                    ) -> list[str]:
        return build_argv(binary, prompt, self.settings, resume=session)

    def session_of(self, events: list[dict[str, Any]]) -> str | None:
        return session_id(events)

    def probe(self) -> str | None:
        base_url = self.settings.options.get("base_url")
        return probe_anthropic(str(base_url) if base_url else None)

    home_env_vars: ClassVar[tuple[str, ...]] = ("CLAUDE_CONFIG_DIR",)

    def api_route(self, env: Mapping[str, str]) -> ApiRoute:
        """The Messages API at ANTHROPIC_BASE_URL; the key goes as x-api-key, a token as Bearer."""
        key, token = env.get("ANTHROPIC_API_KEY"), env.get("ANTHROPIC_AUTH_TOKEN")
        credentials = {"x-api-key": key or "", "authorization": f"Bearer {token}" if token else ""}
        placeholders = {name: PLACEHOLDER_KEY for name, value in (("ANTHROPIC_API_KEY", key),
                                                                   ("ANTHROPIC_AUTH_TOKEN", token)) if value}
        return ApiRoute(env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com", credentials, placeholders,
                        "ANTHROPIC_BASE_URL")

    def child_env(self, base: Mapping[str, str], home: Path) -> dict[str, str]:
        return build_env(base, home, self.settings)

    def parse_events(self, events: list[dict[str, Any]], skill_name: str | None,
                     earlier: list[dict[str, Any]] | None = None) -> TrialResult:
        return parse_stream(events, skill_name, earlier)

    def transient_failure(self, result: TrialResult) -> bool:
        return is_transient(_last_result(result.transcript))

    def provider_retry(self, event: dict[str, Any]) -> str | None:
        """Claude Code announces each retry of a failed API call as a `system`/`api_retry` event."""
        if event.get("type") != "system" or event.get("subtype") != "api_retry":
            return None
        return f"API status {event.get('error_status') or 'unknown'} {event.get('error') or 'error'}".strip()

    def model_answered(self, event: dict[str, Any]) -> bool:
        return event.get("type") in ("assistant", "user", "stream_event")

    def harness_fault(self, result: TrialResult, stderr: str) -> str | None:
        return all_commands_broken(shell_commands(result.transcript))

    def unfinished(self, result: TrialResult) -> str | None:
        return "without a result event" if _last_result(result.transcript) is None else None

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        return skills_loaded(result.transcript, names)

    def trigger_decided(self, line: str, skill_name: str) -> bool:
        """A complete assistant message whose Skill tool_use names the skill (a Read of its
        SKILL.md waits for the tool result, which may be a failure, so it does not stop)."""
        if '"Skill"' not in line:
            return False
        try:
            event = json.loads(line)
        except ValueError:
            return False
        return isinstance(event, dict) and any(_uses_skill(u, skill_name) for u in _tool_uses([event]))


__all__ = ["ClaudeCodeExecutor", "build_argv", "build_env", "parse_stream", "session_id", "skills_loaded", "this_turn"]
