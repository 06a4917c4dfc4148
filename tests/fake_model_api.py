"""A loopback model API that replays scripted replies, so the REAL agent CLIs run offline.

Stands in for the hosted model only: Claude Code talks to it as the Anthropic Messages API
(POST /v1/messages, `stream: true`, server-sent events) and Codex as the OpenAI Responses
API (POST /v1/responses, streamed). The event shapes follow the public streaming protocols
as the recorded fixtures in tests/fixtures/agent-cli show them: message_start /
content_block_* / message_delta / message_stop for Anthropic, response.created /
response.output_item.* / response.completed for OpenAI. Every request body is recorded so a
test can prove what the CLI sent (e.g. that the skill was listed only in the with-skill arm).

When the script runs out the server answers HTTP 400 (a non-retryable client error, so the
CLI stops instead of retrying) and records the failure; `assert_clean()` turns it into a
test failure. A `Stall` reply opens the stream and then sends nothing, to exercise timeouts.
A script item may also be a function of the recorded request that returns the item to serve
(an answer that depends on the arm's skill or the conversation's turn), and a `sticky`
HttpError answers every request from there on. `conversation(request)` reads back what a
request said (user and assistant messages), so a test can check a later turn carried the
earlier ones.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):012x}"


@dataclass
class ToolCall:
    """One tool call the model makes; `name`/`arguments` as the CLI's tool schema expects."""

    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    """One model turn: text and/or tool calls, with the usage numbers the API reports.

    input_tokens excludes cached tokens for Anthropic (its protocol reports cache reads and
    writes separately); for OpenAI `cached_tokens` is a subset of `input_tokens`."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 100
    output_tokens: int = 20
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class Stall:
    """Open the stream, send the first event, then hang until the server shuts down."""


@dataclass
class Disconnect:
    """Open the stream, send the first event, then close the connection: a dropped stream,
    which the CLIs recover from by retrying the request."""


@dataclass
class HttpError:
    """Answer with an HTTP error, as the hosted API does when overloaded or rate limited."""

    status: int = 529
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    # Answer every request from here on with this error, not only the next: a CLI may resend a
    # refused request in several variants (Claude Code does on a 400) before it gives up.
    sticky: bool = False


ScriptItem = Reply | Stall | Disconnect | HttpError
# A reply decided when the request comes: given the recorded request (kind, path, body), it
# returns the item to serve (what the model says may depend on what it was sent: the arm's skill,
# the turn of a conversation). It may block, to hold a CLI mid-conversation.
Scripted = ScriptItem | Callable[[dict[str, Any]], ScriptItem]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# ---------------------------------------------------------------- Anthropic Messages API

def anthropic_events(reply: Reply, model: str) -> list[bytes]:
    """The SSE frames of one streamed Messages API response."""
    usage = {"input_tokens": reply.input_tokens,
             "cache_creation_input_tokens": reply.cache_write_tokens,
             "cache_read_input_tokens": reply.cache_read_tokens, "output_tokens": 1}
    frames = [_sse("message_start", {"type": "message_start", "message": {
        "id": _new_id("msg"), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    index = 0
    if reply.text is not None:
        frames += _anthropic_block(index, {"type": "text", "text": ""},
                                   {"type": "text_delta", "text": reply.text})
        index += 1
    for call in reply.tool_calls:
        start = {"type": "tool_use", "id": _new_id("toolu"), "name": call.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
        frames += _anthropic_block(index, start, delta)
        index += 1
    stop = "tool_use" if reply.tool_calls else "end_turn"
    frames.append(_sse("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": reply.output_tokens}}))
    frames.append(_sse("message_stop", {"type": "message_stop"}))
    return frames


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    """The JSON body of one non-streamed Messages API response (`stream` false or absent),
    which Claude Code falls back to when a stream breaks."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text is not None else []
    content += [{"type": "tool_use", "id": _new_id("toolu"), "name": c.name, "input": c.arguments}
                for c in reply.tool_calls]
    return {"id": _new_id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                      "cache_creation_input_tokens": reply.cache_write_tokens,
                      "cache_read_input_tokens": reply.cache_read_tokens}}


def _anthropic_block(index: int, start: dict, delta: dict) -> list[bytes]:
    return [
        _sse("content_block_start",
             {"type": "content_block_start", "index": index, "content_block": start}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


# ---------------------------------------------------------------- OpenAI Responses API

def responses_events(reply: Reply, model: str) -> list[bytes]:
    """The SSE frames of one streamed Responses API response."""
    resp_id = _new_id("resp")
    head = {"id": resp_id, "object": "response", "status": "in_progress", "model": model,
            "output": []}
    frames = [_sse("response.created", {"type": "response.created", "response": head})]
    items = [_function_call_item(c) for c in reply.tool_calls]
    if reply.text is not None:
        items.insert(0, {"type": "message", "id": _new_id("msg"), "role": "assistant",
                         "status": "completed",
                         "content": [{"type": "output_text", "text": reply.text,
                                      "annotations": []}]})
    for i, item in enumerate(items):
        frames.append(_sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": i, "item": item}))
        frames.append(_sse("response.output_item.done", {
            "type": "response.output_item.done", "output_index": i, "item": item}))
    usage = {"input_tokens": reply.input_tokens,
             "input_tokens_details": {"cached_tokens": reply.cache_read_tokens},
             "output_tokens": reply.output_tokens,
             "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
             "total_tokens": reply.input_tokens + reply.output_tokens}
    done = {**head, "status": "completed", "output": items, "usage": usage}
    frames.append(_sse("response.completed", {"type": "response.completed", "response": done}))
    return frames


def _function_call_item(call: ToolCall) -> dict[str, Any]:
    return {"type": "function_call", "id": _new_id("fc"), "call_id": _new_id("call"),
            "name": call.name, "arguments": json.dumps(call.arguments), "status": "completed"}


# ---------------------------------------------------------------- what a request carried

def conversation(request: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every message a recorded model request sent, in order, whichever API it
    spoke: Anthropic `messages` (string or text blocks) or Responses `input` items (message
    items' input_text/output_text parts). Tool calls and results are left out: this is what
    the user and the assistant said, so a test can check that a later turn's request carries
    the earlier turns."""
    body = request.get("body") or {}
    items = body.get("messages") if request.get("kind") == "anthropic" else body.get("input")
    out: list[tuple[str, str]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        content = item.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts = [str(p.get("text")) for p in parts if isinstance(p, dict)
                 and p.get("type") in ("text", "input_text", "output_text") and p.get("text")]
        if texts:
            out.append((str(item.get("role")), "\n".join(texts)))
    return out


# ---------------------------------------------------------------- server

class FakeModelAPI:
    """Serve `script` in order to whichever CLI asks; use as a context manager."""

    def __init__(self, script: Sequence[Scripted], model: str = "fake-model", api_key: str | None = None,
                 answer: Callable[[dict[str, Any]], ScriptItem] | None = None) -> None:
        self.script = list(script)
        # Set: every model request is answered by answer(request body) instead of the script, so
        # replies can depend on the model asked and on what the request holds (a matrix run's
        # agents and arms, in whatever order a queue sends them).
        self.answer = answer
        self.api_key = api_key  # set: any request with another key gets 401, as the hosted API answers
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []
        # A client the test itself stops mid-answer (a trigger run ends the CLI once the skill loads,
        # maybe while the next reply streams): its hang-up is expected, not a protocol failure.
        self.hangup_ok = False
        self._lock = threading.Lock()
        self.closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeModelAPI:
        self._thread.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        """Closing is where an over-long conversation fails the test, even if the test body
        forgot to call assert_clean() (unless the body already failed for another reason)."""
        self.close()
        if exc_type is None:
            self.assert_clean()

    def close(self) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()

    def assert_clean(self) -> None:
        """Fail the test if the CLI asked for more than the script held, or spoke nonsense."""
        assert not self.failures, "fake model API: " + "; ".join(self.failures)

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["kind"] in ("anthropic", "responses")]

    def next_item(self, path: str, body: dict[str, Any] | None = None) -> Scripted | None:
        if self.answer is not None:
            return self.answer(body or {})
        with self._lock:
            if not self.script:
                self.failures.append(f"script exhausted: unexpected extra request to {path}")
                return None
            item = self.script[0]
            return item if isinstance(item, HttpError) and item.sticky else self.script.pop(0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(_Handler):
            fake = api

        return Handler


def _is_credential_header(name: str) -> bool:
    """Recorded requests may end up in assertion messages; keep credentials out of them."""
    return name.lower() in ("x-api-key", "authorization", "proxy-authorization")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelAPI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence per-request stderr logging; requests are recorded on the fake instead."""

    def _read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return {"_unparsed": raw.decode("utf-8", "replace")}

    def _kind(self) -> str:
        path = self.path.split("?", 1)[0]
        if path.endswith("/messages/count_tokens"):
            return "count_tokens"
        if path.endswith("/messages"):
            return "anthropic"
        if path.endswith("/responses"):
            return "responses"
        return "other"

    def _key_refused(self) -> bool:
        """With `api_key` set, answer 401 authentication_error to a request without it."""
        want = self.fake.api_key
        sent = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if want is None or sent == want:
            return False
        self._send_json(401, {"type": "error", "error": {"type": "authentication_error",
                                                         "message": "invalid x-api-key"}})
        return True

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self.fake.requests.append({"method": "GET", "path": self.path, "kind": "other"})
        if self._key_refused():
            return
        self._send_json(404, {"error": {"type": "not_found", "message": "fake: no such route"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._read_json()
        kind = self._kind()
        headers = {k: v for k, v in self.headers.items() if not _is_credential_header(k)}
        record = {"method": "POST", "path": self.path, "kind": kind, "headers": headers, "body": body}
        self.fake.requests.append(record)
        if self._key_refused():
            return
        if kind == "count_tokens":
            self._send_json(200, {"input_tokens": 100})
            return
        if kind == "other":
            self._send_json(404, {"error": {"type": "not_found", "message": "fake: no route"}})
            return
        item = self.fake.next_item(self.path, body)
        if item is None:
            self._send_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "fake model script exhausted"}})
            return
        model = body.get("model") or self.fake.model
        if callable(item):
            item = item(record)
        if isinstance(item, Stall):
            self._stall(kind, model)
            return
        if isinstance(item, Disconnect):
            self._opening_frame(kind, model)  # then the handler returns: the connection closes
            return
        if isinstance(item, HttpError):
            self._send_json(item.status, {"type": "error", "error": {
                "type": item.error_type, "message": item.message}})
            return
        if kind == "anthropic" and not body.get("stream"):
            self._send_json(200, anthropic_message(item, model))
            return
        frames = (anthropic_events(item, model) if kind == "anthropic"
                  else responses_events(item, model))
        self._send_stream(frames)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _send_stream(self, frames: list[bytes]) -> None:
        self._start_stream()
        try:
            for frame in frames:
                self.wfile.write(frame)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            if not self.fake.hangup_ok:
                self.fake.failures.append("client hung up mid-stream")

    def _opening_frame(self, kind: str, model: str) -> bool:
        """Start the stream with its first event only; False when the client already left."""
        first = (anthropic_events(Reply(), model) if kind == "anthropic"
                 else responses_events(Reply(), model))[0]
        self._start_stream()
        try:
            self.wfile.write(first)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def _stall(self, kind: str, model: str) -> None:
        """Send only the opening event, then keep the connection open and silent."""
        if self._opening_frame(kind, model):
            self.fake.closing.wait(timeout=120)


__all__ = ["Disconnect", "FakeModelAPI", "HttpError", "Reply", "ScriptItem", "Scripted", "Stall", "ToolCall",
           "anthropic_events", "anthropic_message", "conversation", "responses_events"]
