"""The `openai` executor: the shared agent loop on any OpenAI-compatible chat completions
endpoint (OpenAI itself, vLLM, llama.cpp's server, Ollama, LM Studio, OpenRouter...).

Only the wire format lives here; tools, skill presentation and limits are agent_loop's, so a
result from this executor means the same as one from the `anthropic` executor."""

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
    parse_arguments,
    probe_endpoint,
)
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.extras import import_optional, not_installed

if TYPE_CHECKING:  # annotations only: the SDK is imported where a client is built or an error
    import openai  # classified, so `skillassay executors` (which only asks availability) never pays ~1-4 s for it

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Local servers ignore the key, but the SDK refuses to build a client without one.
NO_KEY_PLACEHOLDER = "no-key-needed"


def is_transient(exc: BaseException) -> bool:
    """Rate limits, server errors and dropped connections pass; a bad request never will."""
    import openai

    return is_transient_api_error(exc, openai.APIConnectionError, openai.APIStatusError)


def tool_json(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", "function": {"name": spec.name, "description": spec.description,
                                             "parameters": spec.parameters}}


def make_client(base_url: str | None, key_env: str = DEFAULT_KEY_ENV, *, needed_by: str, where: tuple[str, str],
                max_retries: int, timeout: float | None = None) -> openai.OpenAI:
    """The one way skillassay builds an OpenAI client (the executor, the judge): the key from
    `key_env`, the base URL given or OPENAI_BASE_URL; a local server needs no key. InputError at
    `where` (file, field) when there is neither; `needed_by` names what asked for the SDK."""
    sdk = import_optional("openai", needed_by)  # a missing extra first: the key is the next thing to fix
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    key = os.environ.get(key_env)
    if not key and not base_url:
        raise InputError.one(*where, f"{key_env} is not set (or set base_url for a local server)")
    extra = {} if timeout is None else {"timeout": timeout}
    client: openai.OpenAI = sdk.OpenAI(api_key=key or NO_KEY_PLACEHOLDER, base_url=base_url,
                                       max_retries=max_retries, **extra)
    return client


class OpenAIConversation:
    """One trial's chat history in chat-completions shape."""

    def __init__(self, client: openai.OpenAI, settings: ExecutorSettings, seed: int,
                 system: str, prompt: str, tools: list[ToolSpec],
                 transcript: list[dict[str, Any]]) -> None:
        self.client, self.settings, self.seed = client, settings, seed
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                               {"role": "user", "content": prompt}]
        self.tools = [tool_json(t) for t in tools]
        self.transcript = transcript

    def _request(self, timeout: float) -> Any:
        s = self.settings
        kwargs: dict[str, Any] = {"model": s.model, "messages": self.messages,
                                  "tools": self.tools, "timeout": timeout}
        if s.options.get("send_seed", True):  # a few compatible servers reject the field
            kwargs["seed"] = self.seed
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if "tool_choice" in s.options:  # API semantics: applies to every turn
            kwargs["tool_choice"] = s.options["tool_choice"]
        if s.max_tokens is not None:
            # Newer OpenAI reasoning models reject max_tokens; compatible servers often only
            # know max_tokens. The option picks which field carries the limit.
            kwargs[s.options.get("max_tokens_field", "max_tokens")] = s.max_tokens
        return self.client.chat.completions.create(**kwargs)

    def complete(self, timeout: float) -> ModelTurn:
        response = call_with_retries(self._request, is_transient, self.settings.options,
                                     self.transcript, timeout)
        if not response.choices:
            raise RuntimeError("the server returned no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [ToolCall(id=c.id, name=c.function.name,
                          arguments=parse_arguments(c.function.arguments))
                 for c in (message.tool_calls or []) if getattr(c, "function", None)]
        self.messages.append(_assistant_message(message))
        usage = response.usage
        details = getattr(usage, "prompt_tokens_details", None) if usage else None
        return ModelTurn(
            text=message.content or "",
            tool_calls=calls,
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            cached_input_tokens=getattr(details, "cached_tokens", None) if details else None,
            stop_reason=choice.finish_reason,
            raw=response.model_dump(mode="json", exclude_none=True),
        )

    def add_user_message(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def add_tool_results(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        for call, output, is_error in results:
            content = f"ERROR: {output}" if is_error else output
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def _assistant_message(message: Any) -> dict[str, Any]:
    """Echo the assistant turn back verbatim (tool_calls included), as the API requires
    before the matching tool results."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments or "{}"}}
            for c in message.tool_calls if getattr(c, "function", None)
        ]
    return out


class OpenAIExecutor(AgentLoopExecutor):
    """Options: base_url, api_key_env, tool_choice, max_tokens_field, send_seed, plus the agent loop's
    (max_turns, token_budget, shell_timeout, output_limit, prices, retry_*)."""

    name: ClassVar[str] = "openai"
    default_key_env: ClassVar[str] = DEFAULT_KEY_ENV

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        key_env, _ = self.api_key()
        self.client = make_client(settings.options.get("base_url"), key_env, needed_by="--executor openai",
                                  where=("executor options", "api_key_env"), max_retries=0,
                                  timeout=settings.timeout_seconds)

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if (missing := not_installed("openai")) is not None:
            return False, missing
        if os.environ.get(DEFAULT_KEY_ENV):
            return True, f"{DEFAULT_KEY_ENV} set"
        if os.environ.get("OPENAI_BASE_URL"):
            return True, "OPENAI_BASE_URL set (key optional for local servers)"
        return False, f"{DEFAULT_KEY_ENV} not set (or set OPENAI_BASE_URL / options.base_url)"

    def ready(self) -> str | None:
        """The key was checked when the client was built; the endpoint is probed here."""
        import openai

        return probe_endpoint(self.client, openai)

    def conversation(self, request: TrialRequest, system: str, tools: list[ToolSpec],
                     transcript: list[dict[str, Any]]) -> OpenAIConversation:
        return OpenAIConversation(self.client, request.settings, request.seed, system,
                                  request.prompt, tools, transcript)
