"""A metering proxy on 127.0.0.1, one per trial: the sandboxed agent CLI talks to it as its
model API's base URL with a placeholder key; the proxy puts the real credentials on each
request on its way out, streams the answer back unchanged, and records the provider's own
`usage` of every request. So the key never enters the sandbox, and the token figures have a
source besides the CLI's own report."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

PLACEHOLDER_KEY = "skillassay-placeholder-key"  # what the agent sees where its key would be
_CREDENTIALS = frozenset({"x-api-key", "authorization", "proxy-authorization", "openai-organization",
                          "openai-project"})
_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host",
                  "content-length", "accept-encoding", "proxy-connection"})
_SCAN_LIMIT = 8_000_000  # bytes of one answer kept to read its usage from
BUDGET_STATUS = 402  # a refusal no SDK retries (they retry 408, 409, 429 and 5xx)
# The trial's summed usage so far -> why the next request is refused (None: it may go).
Allowance = Callable[[dict[str, int]], "str | None"]


def usage_of(body: bytes, content_type: str) -> dict[str, Any] | None:
    """The provider's usage in one answer: a JSON body's `usage`, or for a server-sent event
    stream every event's usage merged in order (Anthropic's message_start gives the input and
    message_delta the output; OpenAI's response.completed gives all of it). Pure."""
    merged: dict[str, Any] = {}
    if "json" in content_type:
        docs = [body]
    else:
        docs = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
    for raw in docs:
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        for usage in _usages(doc):
            merged.update({k: v for k, v in usage.items() if v is not None})
    return merged or None


def _usages(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        return []
    found = [doc["usage"]] if isinstance(doc.get("usage"), dict) else []
    for key in ("message", "response"):
        if isinstance(doc.get(key), dict) and isinstance(doc[key].get("usage"), dict):
            found.append(doc[key]["usage"])
    return found


def usage_totals(records: list[dict[str, Any]]) -> dict[str, int]:
    """The usage numbers of proxy records summed by field (input_tokens, output_tokens, ...):
    of a whole trial, or of one turn's slice of it."""
    out: dict[str, int] = {}
    for entry in records:
        for key, value in (entry.get("usage") or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] = out.get(key, 0) + value
    return out


class MeteringProxy:
    """Forwards every request to `upstream` (scheme://host[:port][/prefix]) with `credentials`
    as its headers; use as a context manager. `url` is what the agent gets as its base URL."""

    def __init__(self, upstream: str, credentials: Mapping[str, str], timeout: float = 600,
                 allowance: Allowance | None = None) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {upstream!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.credentials = {k.lower(): v for k, v in credentials.items() if v}
        self.timeout = timeout
        self.allowance = allowance  # the run's budget, in what this trial may still spend (run/budget.py)
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="skillassay-proxy")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.prefix}"

    def __enter__(self) -> MeteringProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.records.append(entry)

    def totals(self) -> dict[str, int]:
        """Every request's usage numbers summed by field (input_tokens, output_tokens, ...)."""
        return usage_totals(self.records)

    def connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(_Forward):
            owner = proxy

        return Handler


class _Forward(BaseHTTPRequestHandler):
    owner: MeteringProxy

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet: requests are recorded on the proxy instead."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._forward()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._forward()

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _CREDENTIALS | _HOP}
        headers.update(self.owner.credentials)
        headers["Accept-Encoding"] = "identity"  # usage is read from the answer as it passes
        entry: dict[str, Any] = {"method": self.command, "path": self.path.split("?", 1)[0]}
        if self.command == "POST" and self.owner.allowance is not None and \
                (why := self.owner.allowance(self.owner.totals())) is not None:
            entry["status"], entry["error"] = BUDGET_STATUS, why
            self.owner.record(entry)
            self._fail(why, BUDGET_STATUS, "budget_exceeded")
            return
        conn = self.owner.connect()
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            answer = conn.getresponse()
        except OSError as exc:
            entry["status"], entry["error"] = 502, f"{type(exc).__name__}: {exc}"
            self.owner.record(entry)
            self._fail(f"skillassay proxy: the model API did not answer: {type(exc).__name__}")
            return
        entry["status"] = answer.status
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in _HOP:
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        seen = bytearray()
        try:
            while chunk := answer.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
                if len(seen) < _SCAN_LIMIT:
                    seen += chunk
        except OSError as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()
            usage = usage_of(bytes(seen), answer.getheader("Content-Type") or "")
            if usage:
                entry["usage"] = usage
            self.owner.record(entry)

    def _fail(self, message: str, status: int = 502, kind: str = "api_error") -> None:
        data = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
