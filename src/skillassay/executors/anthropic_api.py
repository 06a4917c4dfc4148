"""The `anthropic` executor: the shared agent loop on Anthropic's Messages API with tool use.

Only the wire format lives here (content blocks, tool_use / tool_result pairing, the
Messages API's usage fields); tools, skill presentation and limits are agent_loop's."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from skillassay.errors import InputError
from skillassay.executors.agent_loop import (
    AgentLoopExecutor,
    ModelTurn,
    ToolCall,
    ToolSpec,
    call_with_retries,
    is_transient_api_error,
    probe_endpoint,
)
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.extras import import_optional, not_installed

if TYPE_CHECKING:  # annotations only: the SDK is imported where a client is built or an error
    import anthropic  # classified, so `skillassay executors` (which only asks availability) never pays ~1-4 s for it

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
# The Messages API requires max_tokens on every request; used when settings leave it unset.
DEFAULT_MAX_TOKENS = 4096


def is_transient(exc: BaseException) -> bool:
    """429 rate limit, 529 overloaded, other 5xx and dropped connections are worth a retry."""
    import anthropic

    return is_transient_api_error(exc, anthropic.APIConnectionError, anthropic.APIStatusError)


def tool_json(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


def make_client(base_url: str | None, key_env: str = DEFAULT_KEY_ENV, *, needed_by: str, where: tuple[str, str],
                max_retries: int, timeout: float | None = None) -> anthropic.Anthropic:
    """The one way skillassay builds an Anthropic client (the executor, the judge): the key from
    `key_env` (required), the base URL given or ANTHROPIC_BASE_URL. InputError at `where`
    (file, field) without a key; `needed_by` names what asked for the SDK."""
    sdk = import_optional("anthropic", needed_by)  # a missing extra first: the key is the next thing to fix
    key = os.environ.get(key_env)
    if not key:
        raise InputError.one(*where, f"{key_env} is not set")
    extra = {} if timeout is None else {"timeout": timeout}
    client: anthropic.Anthropic = sdk.Anthropic(api_key=key, base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"),
                                                max_retries=max_retries, **extra)
    return client


class AnthropicConversation:
    """One trial's history as Messages API content blocks."""

    def __init__(self, client: anthropic.Anthropic, settings: ExecutorSettings, system: str,
                 prompt: str, tools: list[ToolSpec], transcript: list[dict[str, Any]]) -> None:
        self.client, self.settings, self.system = client, settings, system
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.tools = [tool_json(t) for t in tools]
        self.transcript = transcript

    def _request(self, timeout: float) -> Any:
        s = self.settings
        extra: dict[str, Any] = {}
        if s.temperature is not None:
            # Sent as a body field: the API accepts it, while recent SDKs dropped the kwarg.
            extra["temperature"] = s.temperature
        # The SDK types messages and tools as TypedDicts; ours are plain dicts of the same shape,
        # and a model of None is the API's own error to report (it names the field).
        return self.client.messages.create(
            model=s.model, system=self.system, messages=self.messages, tools=self.tools,  # type: ignore[arg-type]
            max_tokens=s.max_tokens or DEFAULT_MAX_TOKENS, timeout=timeout,
            extra_body=extra or None,
        )

    def complete(self, timeout: float) -> ModelTurn:
        response = call_with_retries(self._request, is_transient, self.settings.options,
                                     self.transcript, timeout)
        blocks = [b.model_dump(mode="json", exclude_none=True) for b in response.content]
        self.messages.append({"role": "assistant", "content": blocks})
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and b.get("text"))
        calls = [ToolCall(id=b["id"], name=b["name"], arguments=b.get("input") or {})
                 for b in blocks if b.get("type") == "tool_use"]
        u = response.usage
        cache_read = u.cache_read_input_tokens or 0
        cache_write = u.cache_creation_input_tokens or 0
        return ModelTurn(
            text=text,
            tool_calls=calls,
            # The API's input_tokens excludes cache reads and writes; ours includes them.
            input_tokens=u.input_tokens + cache_read + cache_write,
            output_tokens=u.output_tokens,
            cached_input_tokens=cache_read,
            stop_reason=response.stop_reason,
            raw=response.model_dump(mode="json", exclude_none=True),
        )

    def add_user_message(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def add_tool_results(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        """All results of one assistant turn go back in a single user message, as required."""
        self.messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": output,
             **({"is_error": True} if is_error else {})}
            for call, output, is_error in results
        ]})


class AnthropicExecutor(AgentLoopExecutor):
    """Options: base_url, api_key_env, max_turns, token_budget, shell_timeout, output_limit,
    retry_attempts, retry_initial_wait, retry_max_wait. The seed is not sent: the Messages API
    has no seed parameter."""

    name: ClassVar[str] = "anthropic"
    default_key_env: ClassVar[str] = DEFAULT_KEY_ENV

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        key_env, _ = self.api_key()
        self.client = make_client(settings.options.get("base_url"), key_env, needed_by="--executor anthropic",
                                  where=("executor options", "api_key_env"), max_retries=0,
                                  timeout=settings.timeout_seconds)

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if (missing := not_installed("anthropic")) is not None:
            return False, missing
        if os.environ.get(DEFAULT_KEY_ENV):
            return True, f"{DEFAULT_KEY_ENV} set"
        return False, f"{DEFAULT_KEY_ENV} not set"

    def ready(self) -> str | None:
        """The key was checked when the client was built; the endpoint is probed here."""
        import anthropic

        return probe_endpoint(self.client, anthropic)

    def conversation(self, request: TrialRequest, system: str, tools: list[ToolSpec],
                     transcript: list[dict[str, Any]]) -> AnthropicConversation:
        return AnthropicConversation(self.client, request.settings, system, request.prompt,
                                     tools, transcript)
