"""The judges that ask a model (entry-point group `skillassay.judges`): the embedded model,
OpenAI Chat Completions, Anthropic Messages. Each builds its client, and calls the embedded
model, with the executors' code (executors/openai_api.py, anthropic_api.py, local.py), so a key,
a base URL or the model's lock mean the same to a judge as to an executor. What is asked and how
the reply is read is grade/judge.py's."""

from __future__ import annotations

import os
import threading
from typing import Any

from skillassay.executors.anthropic_api import make_client as anthropic_client
from skillassay.executors.openai_api import make_client as openai_client
from skillassay.extras import needs_extra
from skillassay.grade.judge import LOCAL_CAPS, TOOL_NAME, Caps, JudgeError, JudgeOutputError, parse_json_text


class LocalJudge:
    """The embedded SmolLM2 with grammar-constrained decoding (llama-cpp-python turns the
    schema into a GBNF grammar). Shares the executor's loaded model and generation lock."""

    bounded = True

    # 512: the bounded schema's longest reply for one expectation is ~370 tokens plus the
    # whitespace the model adds; at 400 a reply of "1.1.1..." strings was cut short.
    def __init__(self, temperature: float = 0.0, max_tokens: int = 512, n_ctx: int = 2048,
                 caps: Caps = LOCAL_CAPS) -> None:
        self.temperature, self.max_tokens, self.n_ctx, self.caps = temperature, max_tokens, n_ctx, caps
        self._calls = 0
        self._count_lock = threading.Lock()

    @classmethod
    def make(cls, model: str | None, temperature: float) -> LocalJudge:
        return cls(temperature=temperature)  # one embedded model: `model` does not apply

    def identity(self) -> dict[str, Any]:
        from skillassay.executors.local import DEFAULT_MODEL

        return {"judge": "local", "model": DEFAULT_MODEL, "temperature": self.temperature,
                "max_tokens": self.max_tokens}

    def next_seed(self) -> int:
        """Each call its own seed, so K samples at temperature > 0 can disagree."""
        with self._count_lock:
            self._calls += 1
            return self._calls

    def complete_json(self, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        from skillassay.executors.local import chat, embedded_llm

        llm = embedded_llm(self.n_ctx)  # the executor's loaded model, its call and its lock
        if llm is None:
            raise JudgeError(f"embedded model file not found: {needs_extra('local')}")
        response = chat(llm, [{"role": "system", "content": system}, {"role": "user", "content": user}],
                        temperature=self.temperature, max_tokens=self.max_tokens, seed=self.next_seed(),
                        response_format={"type": "json_object", "schema": schema}, fresh=True)
        choice = response["choices"][0]
        if choice.get("finish_reason") == "length":
            raise JudgeOutputError(f"reply cut at max_tokens={self.max_tokens}")
        return parse_json_text(choice["message"]["content"])


class OpenAIJudge:
    """OpenAI Chat Completions with structured output (response_format json_schema, strict).
    Key and base URL come from OPENAI_API_KEY / OPENAI_BASE_URL, as the SDK reads them."""

    bounded = False

    def __init__(self, model: str | None = None, temperature: float = 0.0, caps: Caps | None = None,
                 client: Any = None) -> None:
        self.model = model or os.environ.get("SKILLASSAY_JUDGE_MODEL") or "gpt-4o-mini"
        self.temperature, self.caps = temperature, caps or Caps()
        if client is None:  # the executor's client: a local server (OPENAI_BASE_URL) needs no key
            client = openai_client(None, needed_by="--judge openai", where=("--judge", "openai"), max_retries=2)
        self.client = client

    @classmethod
    def make(cls, model: str | None, temperature: float) -> OpenAIJudge:
        return cls(model=model, temperature=temperature)

    def identity(self) -> dict[str, Any]:
        return {"judge": "openai", "model": self.model, "temperature": self.temperature}

    def complete_json(self, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        import openai

        try:
            response = self.client.chat.completions.create(
                model=self.model, temperature=self.temperature,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "grading", "schema": schema, "strict": True}})
        except openai.APIError as exc:  # the SDK already retried 429/5xx/connection errors
            raise JudgeError(f"OpenAI API: {type(exc).__name__}: {exc}") from None
        message = response.choices[0].message
        if getattr(message, "refusal", None):
            raise JudgeOutputError(f"refused: {message.refusal}")
        return parse_json_text(message.content)


class AnthropicJudge:
    """Anthropic Messages with a forced tool whose input_schema is the reply schema. Key and
    base URL come from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, as the SDK reads them."""

    bounded = False

    def __init__(self, model: str | None = None, max_tokens: int = 4096, caps: Caps | None = None,
                 client: Any = None) -> None:
        # No temperature: the current SDK's Messages.create no longer takes one; the API's
        # default sampling is what varies K samples.
        self.model = model or os.environ.get("SKILLASSAY_JUDGE_MODEL") or "claude-sonnet-4-5"
        self.max_tokens, self.caps = max_tokens, caps or Caps()
        if client is None:  # the executor's client; the SDK's own retries (2) as before
            client = anthropic_client(None, needed_by="--judge anthropic", where=("--judge", "anthropic"),
                                      max_retries=2)
        self.client = client

    @classmethod
    def make(cls, model: str | None, temperature: float) -> AnthropicJudge:
        return cls(model=model)  # the Messages API's default sampling varies K samples

    def identity(self) -> dict[str, Any]:
        return {"judge": "anthropic", "model": self.model, "max_tokens": self.max_tokens}

    def complete_json(self, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        import anthropic

        try:
            response = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=system,
                messages=[{"role": "user", "content": user}],
                tools=[{"name": TOOL_NAME, "description": "Record the grading of the run.", "input_schema": schema}],
                tool_choice={"type": "tool", "name": TOOL_NAME})
        except anthropic.APIError as exc:
            raise JudgeError(f"Anthropic API: {type(exc).__name__}: {exc}") from None
        for block in response.content:
            if block.type == "tool_use" and block.name == TOOL_NAME:
                return dict(block.input)
        raise JudgeOutputError(f"no {TOOL_NAME} tool call in the reply (stop_reason {response.stop_reason})")


__all__ = ["AnthropicJudge", "LocalJudge", "OpenAIJudge"]
