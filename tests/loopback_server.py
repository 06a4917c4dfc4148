"""The scaffolding the scripted loopback API fakes share (fake_anthropic_api, fake_openai_api):
a threaded HTTP server on 127.0.0.1 that takes JSON POSTs on one path, records every request,
validates it, and answers the next scripted item.

When the script runs out, the server answers 400 (a client error, so no client retries it) and
records the failure; so does any request the fake's `validate` rejects. `assert_clean()` then
fails the test: a client that calls more often than it should, or speaks the protocol wrongly,
must not pass silently. Each fake keeps its protocol (validation, reply and error shapes,
response headers) in its own module, by overriding the hooks below.

LoopbackServer is the serve loop itself (an ephemeral 127.0.0.1 port, one daemon thread, every
request handed to `respond`), shared by these fakes, fake_github_api and the sandbox tests'
stand-in provider (sandbox_support.Upstream)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port) that hands every request of
    `methods` to `respond` and sends what it returns; a context manager."""

    server: ThreadingHTTPServer | None = None
    methods: ClassVar[tuple[str, ...]] = ("POST",)

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for one request; `headers` come lower-cased."""
        raise NotImplementedError

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    def start(self) -> Self:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _serving(self))
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serving(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, headers, body = owner.respond(self.command, self.path,
                                                  {k.lower(): v for k, v in self.headers.items()}, raw)
            self.send_response(status)
            for name, value in {"content-length": str(len(body)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Silenced; the fakes record what they need."""

    for method in owner.methods:
        setattr(Handler, f"do_{method}", Handler._serve)
    return Handler


@dataclass
class ScriptedAPI(LoopbackServer):
    script: list[Any]
    requests: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    label: ClassVar[str]  # the API's owner, for assertion messages
    route: ClassVar[str]  # the one POST path served
    url_suffix: ClassVar[str] = ""  # appended to base_url where the SDK expects a prefix

    # ------------------------------------------------------------------ protocol hooks

    def validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        """The problem with a request the real API would reject, or None."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def reply(self, item: Any, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, payload) for one scripted item."""
        raise NotImplementedError

    def not_found(self, path: str) -> str:
        return f"not found: {path}"

    def response_headers(self, status: int) -> dict[str, str]:
        """Headers beyond content-type and content-length (request ids, retry-after)."""
        return {}

    def record(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        self.requests.append(body)  # headers are not kept: they carry the key

    # ------------------------------------------------------------------ shared

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    def assert_clean(self) -> None:
        """Fail the test on any protocol violation or unscripted call, then on leftovers."""
        assert not self.problems, f"fake {self.label} API saw problems: {self.problems}"
        assert not self.script, f"{len(self.script)} scripted replies were never requested"

    def answer(self, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.record(headers, body)
            problem = self.validate(headers, body)
            if problem:
                self.problems.append(problem)
                return 400, self.error_body(400, problem)
            if not self.script:
                self.problems.append("script exhausted: unexpected extra request")
                return 400, self.error_body(400, "fake script exhausted: unexpected extra request")
            item = self.script.pop(0)
        return self.reply(item, body)

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        if path.split("?")[0] != self.route:
            status, payload = 404, self.error_body(404, self.not_found(path))
        else:
            status, payload = self.answer(headers, json.loads(raw or b"{}"))
        return status, {"content-type": "application/json", **self.response_headers(status)}, json.dumps(payload).encode()
