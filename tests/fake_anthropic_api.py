"""A loopback stand-in for Anthropic's Messages API (POST /v1/messages, non-streaming).

It stands for the hosted API, which cannot run offline. It speaks the real protocol so the real
`anthropic` SDK talks to it unchanged: the request needs a credential (x-api-key, or
`authorization: Bearer`, which recent SDKs send), anthropic-version, model,
max_tokens and messages; every tool_use in an assistant turn must be answered by a tool_result
with the same id in the next user message (the real API rejects the request with 400
otherwise); replies are `message` objects with content blocks (text / tool_use), stop_reason
and usage; errors use the API's error envelope with its status codes (429 rate_limit_error,
529 overloaded_error) and a retry-after header.

Replies are scripted. When the script runs out, the server answers 400 (a client error, so no
client retries it) and records the failure, and `assert_clean()` fails the test: an executor
that calls more often than it should must not pass silently. The server itself is
loopback_server's; only the protocol is here."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from loopback_server import ScriptedAPI

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
SECRET_HEADERS = {"x-api-key", "authorization"}
_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted success: content blocks plus the usage the API would bill for the turn."""

    content: list[dict[str, Any]]
    stop_reason: str
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int = 0


@dataclass
class Failure:
    """One scripted error response (e.g. 429 rate limit, 529 overloaded)."""

    status: int
    message: str = "scripted failure"


def text(answer: str, input_tokens: int = 10, output_tokens: int = 5,
         cache_read: int = 0) -> Reply:
    return Reply([{"type": "text", "text": answer}], "end_turn", input_tokens, output_tokens,
                 cache_read)


def tool_use(name: str, tool_input: dict[str, Any], preamble: str | None = None,
             input_tokens: int = 10, output_tokens: int = 5) -> Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": preamble}] if preamble else []
    blocks.append({"type": "tool_use", "id": f"toolu_{next(_ids):08d}", "name": name,
                   "input": tool_input})
    return Reply(blocks, "tool_use", input_tokens, output_tokens)


@dataclass
class FakeAnthropic(ScriptedAPI):
    script: list[Reply | Failure]
    retry_after: str = "0"  # the Retry-After header of 429 and 529 answers

    label = "Anthropic"
    route = "/v1/messages"

    def record(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        # The key itself is never kept: tests must not be able to leak it into output.
        self.requests.append({"headers": {k: v for k, v in headers.items()
                                          if k not in SECRET_HEADERS}, "body": body})

    def validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        return _validate(headers, body)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return _error(status, message)

    def response_headers(self, status: int) -> dict[str, str]:
        headers = {"request-id": f"req_{next(_ids):08d}"}
        if status in (429, 529):
            headers["retry-after"] = self.retry_after
        return headers

    def reply(self, item: Reply | Failure, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if isinstance(item, Failure):
            return item.status, _error(item.status, item.message)
        return 200, {
            "id": f"msg_{next(_ids):08d}", "type": "message", "role": "assistant",
            "model": body["model"], "content": item.content, "stop_reason": item.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": item.input_tokens, "output_tokens": item.output_tokens,
                      "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": item.cache_read_input_tokens},
        }


def _error(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                       "message": message}}


def _validate(headers: dict[str, str], body: dict[str, Any]) -> str | None:
    """The checks the real API makes that an executor could plausibly get wrong."""
    bearer = headers.get("authorization", "")
    if not headers.get("x-api-key") and not (bearer.startswith("Bearer ") and bearer[7:].strip()):
        return "missing credentials: x-api-key or authorization: Bearer header"
    if not headers.get("anthropic-version"):
        return "missing anthropic-version header"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    messages = body["messages"]
    if not messages or messages[0].get("role") != "user":
        return "messages: first message must use the user role"
    for prev, nxt in itertools.pairwise(messages):
        if prev.get("role") == nxt.get("role"):
            return "messages: roles must alternate between user and assistant"
        if prev["role"] != "assistant" or not isinstance(prev.get("content"), list):
            continue
        wanted = {b["id"] for b in prev["content"] if b.get("type") == "tool_use"}
        given = {b.get("tool_use_id") for b in nxt.get("content", [])
                 if isinstance(b, dict) and b.get("type") == "tool_result"}
        if wanted != given:
            return (f"tool_use ids {sorted(wanted)} were found without tool_result blocks "
                    f"immediately after: {sorted(given)}")
    return None
