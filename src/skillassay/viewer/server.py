"""Served mode: a small JSON API on 127.0.0.1. The index is built once at start (folder names
and benchmark.json only); a run's files are rendered when it is opened. The only write is
feedback.json, merged under a lock and written atomically."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
import threading
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from skillassay.errors import InputError
from skillassay.models import Feedback, Review
from skillassay.report.charts import load_benchmark
from skillassay.store.jsonio import JSONLimitError, load_model, now_iso, parse_json_bytes, write_json
from skillassay.store.redact import disk_redactor
from skillassay.viewer.build import benchmark_payload, build_index, index_payload, run_payload, safe_child
from skillassay.viewer.page import csp, new_nonce, render_page
from skillassay.viewer.render import warm_renderers
from skillassay.viewer.run_cache import RunCache, run_dependencies
from skillassay.viewer.served_file import masked_pieces, reach_of

MAX_BODY = 1_000_000  # bytes of one feedback POST
# A reader that closed its tab or aborted a download: not an error of ours.
DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
STATUSES = {"in_progress", "complete"}


class HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def save_feedback(iteration_dir: Path, *, run_id: str | None = None, text: str | None = None,
                  status: str | None = None) -> Feedback:
    """Merge one change into feedback.json. A file we cannot read is never overwritten."""
    path = iteration_dir / "feedback.json"
    try:
        fb = load_model(path, Feedback) if path.exists() else Feedback()
    except InputError as exc:
        raise HTTPError(409, f"feedback.json exists but is not valid, not overwriting it: {exc}") from None
    if run_id is not None and text is not None:
        fb.reviews = [r for r in fb.reviews if r.run_id != run_id] + [Review(run_id=run_id, feedback=text, timestamp=now_iso())]
    # Assigned even when unchanged: the model writes only fields that were set, and the spec's
    # review shape always carries both keys.
    fb.reviews = list(fb.reviews)
    fb.status = status or fb.status
    write_json(path, fb)
    return fb


class ViewerServer(ThreadingHTTPServer):
    """One thread per connection (daemon threads: Ctrl-C never waits for a slow reader), and a
    listen backlog that a crowd of reviewers' requests fits in (the default of 5 reset them)."""

    daemon_threads = True
    request_queue_size = max(128, socket.SOMAXCONN)

    def __init__(self, iteration_dir: Path, previous: Path | None = None, port: int = 0) -> None:
        self.iteration_dir = iteration_dir.resolve()
        self.previous = previous.resolve() if previous else None
        self.bench = load_benchmark(self.iteration_dir)
        self.index = build_index(self.iteration_dir, self.bench)
        self.lock = threading.Lock()
        self._benchmark: dict[str, Any] | None = None
        self._benchmark_lock = threading.Lock()  # its own: drawing must not hold up /api/index
        self._index_body: tuple[tuple[int, ...] | None, bytes] | None = None
        # /api/run answers built once per run and checked against their files on each request;
        # the page rendered once, with a placeholder where each answer gets its own nonce.
        self.runs = RunCache(self._build_run)
        self._nonce_slot = secrets.token_hex(16).encode("ascii")
        self._page: bytes | None = None
        # Set once the background imports are over: matplotlib, asked to draw while another thread
        # is half-way through importing what the renderers pull in (IPython where installed),
        # reads the half-made module and raises (a 500 on /api/benchmark, seen in CI).
        self._warmed = threading.Event()
        super().__init__(("127.0.0.1", port), ViewerHandler)
        # The Benchmark tab's data (a gate check over benchmark.json and two charts: seconds on a
        # 20,000-run iteration, most of it importing scipy and matplotlib) is prepared while the
        # reviewer looks at the first run, so the tab opens at once.
        threading.Thread(target=self._prepare_benchmark, name="viewer-benchmark", daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def benchmark(self) -> dict[str, Any]:
        self._warmed.wait(timeout=120)
        with self._benchmark_lock:  # charts are drawn once, at start or on first request
            if self._benchmark is None:
                self._benchmark = benchmark_payload(self.iteration_dir, self.bench)
            return self._benchmark

    def index_body(self) -> bytes:
        """/api/index as bytes, built again only when feedback.json changes (its stat): 200
        readers opening a 20,000-run iteration at once share one serialisation."""
        try:
            st = os.stat(self.iteration_dir / "feedback.json")
            stamp: tuple[int, ...] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        with self.lock:  # feedback.json may be mid-merge
            if self._index_body is None or self._index_body[0] != stamp:
                payload = index_payload(self.index, self.bench, "served")
                self._index_body = (stamp, json.dumps(payload, ensure_ascii=False).encode("utf-8"))
            return self._index_body[1]

    def _build_run(self, run_id: str) -> tuple[bytes, tuple[str, ...] | None] | None:
        payload = run_payload(self.index, run_id, self.previous, served=True)
        if payload is None:
            return None
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return body, run_dependencies(self.index, run_id, payload, self.previous)

    def page(self, nonce: str) -> bytes:
        """The page with `nonce` in its CSP slots (rendering it each time was ~2 ms of CPU)."""
        if self._page is None:
            title = f"{self.bench.get('skill_name') or 'skill'} · {self.iteration_dir.name}"
            self._page = render_page(title=title, mode="served", boot={},
                                     nonce=self._nonce_slot.decode("ascii")).encode("utf-8")
        return self._page.replace(self._nonce_slot, nonce.encode("ascii"))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A reader that went away mid-answer is one quiet line, not a traceback; anything else
        is a bug and keeps the standard report."""
        exc = sys.exc_info()[1]
        if isinstance(exc, DISCONNECTS):
            host, port = (client_address or ("?", "?"))[:2]
            # one write per line: the threads' lines must not interleave
            sys.stderr.write(f"viewer: {host}:{port} disconnected before the answer was sent ({type(exc).__name__})\n")
            return
        super().handle_error(request, client_address)

    def _prepare_benchmark(self) -> None:
        # A failure here is computed again, and answered, by the request.
        try:
            with contextlib.suppress(Exception):
                warm_renderers()  # the first run opened (or 200 at once) need not import them: ~2 s here
        finally:
            self._warmed.set()
        with contextlib.suppress(Exception):
            self.benchmark()


class ViewerHandler(BaseHTTPRequestHandler):
    server: ViewerServer
    server_version = "skillassay-viewer"
    sys_version = ""

    sent_body = False  # set once a streamed body has started: no error status can follow it
    # Headers and a small body leave in one send (unbuffered, each header block and body was its
    # own: a thread more to wake among a crowd's); big bodies and streamed files pass through.
    wbufsize = 1 << 16
    # Keep-alive: a tab's page, index and runs share one connection (every answer but a streamed
    # file and an error says its length). An idle connection is closed after `timeout` seconds.
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet: the terminal belongs to the user."""

    # --- plumbing ----------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self._headers(status, len(body), content_type, extra)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _headers(self, status: int, length: int, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in {**self._safe_headers(content_type), "Content-Length": str(length), **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()

    @staticmethod
    def _safe_headers(content_type: str) -> dict[str, str]:
        return {"Content-Type": content_type, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer", "Cross-Origin-Resource-Policy": "same-origin"}

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        """Closes the connection: a refused request's body may not have been read."""
        self._send(status, json.dumps({"error": message}, ensure_ascii=False).encode("utf-8"),
                   "application/json; charset=utf-8", {"Connection": "close"})

    def _check_host(self) -> None:
        """Refuse other Host names (DNS rebinding) and cross-site Origins on every request."""
        host = self.headers.get("Host", "")
        allowed = {f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}"}
        if host not in allowed:
            raise HTTPError(403, "unexpected Host header")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in allowed}:
            raise HTTPError(403, "cross-origin request refused")

    def _dispatch(self, handler: Any) -> None:
        try:
            self._check_host()
            handler()
        except HTTPError as exc:
            self._error(exc.status, str(exc))
        except DISCONNECTS:
            raise  # the reader is gone: nothing to answer (the server logs one line)
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 with its name, not a dropped connection
            if self.sent_body:  # too late for a status: the answer was under way
                raise
            self._error(500, f"internal error (a bug in skillassay): {type(exc).__name__}")

    # --- GET ---------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._dispatch(self._get)

    def _get(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        routes = {"/": self._page, "/index.html": self._page, "/api/index": self._index,
                  "/api/benchmark": lambda q: self._json(self.server.benchmark()),
                  "/api/run": self._run, "/api/file": self._file}
        route = routes.get(url.path)
        if route is None:
            raise HTTPError(404, "not found")
        route(query)

    def _page(self, _query: dict[str, str]) -> None:
        nonce = new_nonce()
        self._send(200, self.server.page(nonce), "text/html; charset=utf-8",
                   {"Content-Security-Policy": csp(nonce, served=True) + "; frame-ancestors 'none'",
                    "X-Frame-Options": "DENY"})

    def _index(self, _query: dict[str, str]) -> None:
        self._send(200, self.server.index_body(), "application/json; charset=utf-8")

    def _run(self, query: dict[str, str]) -> None:
        run_id = query.get("id", "")
        body = self.server.runs.get(run_id) if run_id in self.server.index.by_id else None
        if body is None:
            raise HTTPError(404, "no such run")
        self._send(200, body, "application/json; charset=utf-8")

    def _file(self, query: dict[str, str]) -> None:
        """One output file of a known run, as a download, never rendered by the browser."""
        ref = self.server.index.by_id.get(query.get("run", ""))
        name = query.get("name", "")
        if ref is None or not name:
            raise HTTPError(404, "no such file")
        outputs = safe_child(self.server.iteration_dir, f"{ref.run_id}/outputs")
        path = safe_child(outputs, name) if outputs is not None else None
        if path is None or not path.is_file():
            raise HTTPError(404, "no such file")
        filename = quote(path.name, safe="")
        redactor = disk_redactor()  # with the iteration's remembered secrets (`view` loaded them)
        with path.open("rb") as fh:  # masked and sent in pieces: a 2 GiB output costs a few MB
            # No Content-Length: masking changes it. HTTP/1.0, so the end of the body is the close.
            self.send_response(200)
            for key, value in self._safe_headers("application/octet-stream").items():
                self.send_header(key, value)
            self.send_header("Content-Disposition", f"attachment; filename*=UTF-8''{filename}")
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.sent_body = True
                for piece in masked_pieces(fh, redactor.bytes, reach_of(redactor)):
                    self.wfile.write(piece)

    # --- POST --------------------------------------------------------------------------

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch(self._post)

    def _body(self) -> dict[str, Any]:
        if not self.headers.get("Content-Type", "").split(";")[0].strip().lower() == "application/json":
            raise HTTPError(415, "expected Content-Type: application/json")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise HTTPError(411, "Content-Length required") from None
        if length < 0 or length > MAX_BODY:
            raise HTTPError(413, f"body over {MAX_BODY} bytes")
        try:
            data = parse_json_bytes(self.rfile.read(length))
        except JSONLimitError as exc:
            raise HTTPError(400, f"body refused: {exc}") from None
        except ValueError:  # UnicodeDecodeError and JSONDecodeError included
            raise HTTPError(400, "body is not JSON") from None
        if not isinstance(data, dict):
            raise HTTPError(400, "expected a JSON object")
        return data

    def _post(self) -> None:
        if urlsplit(self.path).path != "/api/feedback":
            raise HTTPError(404, "the only writable resource is /api/feedback")
        data = self._body()
        run_id, text, status = data.get("run_id"), data.get("feedback"), data.get("status")
        if run_id is not None and (not isinstance(text, str) or run_id not in self.server.index.by_id):
            raise HTTPError(400, "run_id must name a run of this iteration and feedback must be a string")
        if status is not None and status not in STATUSES:
            raise HTTPError(400, f"status must be one of {sorted(STATUSES)}")
        if run_id is None and status is None:
            raise HTTPError(400, "expected run_id + feedback, or status")
        with self.server.lock:
            fb = save_feedback(self.server.iteration_dir, run_id=run_id, text=text, status=status)
        self._json({"ok": True, "reviews": len(fb.reviews), "status": fb.status})

    def _refuse(self) -> None:
        def deny() -> None:
            raise HTTPError(405, "method not allowed")

        self._dispatch(deny)

    do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815


def start_server(iteration_dir: Path, previous: Path | None = None, port: int = 0) -> tuple[ViewerServer, threading.Thread]:
    """A running server in a background thread (tests, benchmarks); stop with .shutdown()."""
    server = ViewerServer(iteration_dir, previous, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def serve(iteration_dir: Path, previous: Path | None, port: int, open_browser: bool, announce: Any = print) -> None:
    """Serve until Ctrl-C. A port already taken is bad input (exit 2), not a traceback."""
    try:
        server = ViewerServer(iteration_dir, previous, port)
    except OSError as exc:
        raise InputError.one("--port", str(port), f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    announce(f"reviewing {len(server.index.runs)} runs at {server.url} (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
