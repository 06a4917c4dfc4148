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
that calls more often than it should must not pass silently."""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
class FakeAnthropic:
    script: list[Reply | Failure]
    requests: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def assert_clean(self) -> None:
        """Fail the test on any protocol violation or unscripted call, then on leftovers."""
        assert not self.problems, f"fake Anthropic API saw problems: {self.problems}"
        assert not self.script, f"{len(self.script)} scripted replies were never requested"

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            # The key itself is never kept: tests must not be able to leak it into output.
            self.requests.append({"headers": {k: v for k, v in headers.items()
                                              if k not in SECRET_HEADERS}, "body": body})
            problem = _validate(headers, body)
            if problem:
                self.problems.append(problem)
                return 400, _error(400, problem)
            if not self.script:
                self.problems.append("script exhausted: unexpected extra request")
                return 400, _error(400, "fake script exhausted: unexpected extra request")
            item = self.script.pop(0)
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


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.split("?")[0] != "/v1/messages":
                self._send(404, _error(404, f"not found: {self.path}"))
                return
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = fake.answer(headers, body)
            self._send(status, payload)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_{next(_ids):08d}")
            if status in (429, 529):
                self.send_header("retry-after", "0")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Silenced; every request is recorded in fake.requests instead."""

    return Handler
