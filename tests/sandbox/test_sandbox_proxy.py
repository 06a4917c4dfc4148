"""The metering proxy (skillassay.sandbox.proxy) with real sockets: the agent's placeholder key
is replaced by the real one on the way out, the answer streams back byte for byte, and the
provider's usage of each request is recorded."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from skillassay.sandbox import PLACEHOLDER_KEY, MeteringProxy
from skillassay.sandbox.proxy import usage_of

SSE = (b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":321,'
       b'"output_tokens":1}}}\n\nevent: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":54}}\n\n')


class Upstream:
    """A loopback stand-in for the provider: records what reached it, answers SSE."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                seen.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(SSE)))
                self.end_headers()
                self.wfile.write(SSE)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    yield up
    up.server.shutdown()
    up.server.server_close()


def post(url: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=json.dumps({"model": "m"}), headers=headers)
    answer = conn.getresponse()
    return answer.status, answer.read()


def test_the_real_key_goes_out_the_placeholder_never_and_usage_is_recorded(upstream: Upstream) -> None:
    with MeteringProxy(upstream.url, {"x-api-key": "sk-real-0123456789"}) as proxy:
        assert proxy.url.endswith("/v1")
        status, body = post(proxy.url, "/v1/messages", {"x-api-key": PLACEHOLDER_KEY,
                                                        "Authorization": f"Bearer {PLACEHOLDER_KEY}"})
    assert (status, body) == (200, SSE)
    reached = upstream.seen[0]
    assert reached["path"] == "/v1/messages" and json.loads(reached["body"]) == {"model": "m"}
    assert reached["headers"]["x-api-key"] == "sk-real-0123456789"
    assert PLACEHOLDER_KEY not in json.dumps(reached["headers"])
    assert proxy.records == [{"method": "POST", "path": "/v1/messages", "status": 200,
                              "usage": {"input_tokens": 321, "output_tokens": 54}}]
    assert proxy.totals() == {"input_tokens": 321, "output_tokens": 54}


def test_an_api_that_does_not_answer_is_a_502_recorded_as_such() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    with MeteringProxy(dead, {"authorization": "Bearer sk-real"}) as proxy:
        status, body = post(proxy.url, "/responses", {})
    assert status == 502 and b"did not answer" in body
    assert proxy.records[0]["status"] == 502 and "ConnectionRefusedError" in proxy.records[0]["error"]


def test_usage_is_read_from_json_bodies_and_openai_streams() -> None:
    assert usage_of(b'{"usage": {"input_tokens": 5, "output_tokens": 2}}', "application/json") == \
        {"input_tokens": 5, "output_tokens": 2}
    completed = {"type": "response.completed", "response": {"usage": {"input_tokens": 9, "output_tokens": 3,
                                                                       "total_tokens": 12}}}
    stream = b"data: " + json.dumps({"type": "response.created", "response": {}}).encode() + b"\n\n" + \
        b"data: " + json.dumps(completed).encode() + b"\n\ndata: [DONE]\n\n"
    assert usage_of(stream, "text/event-stream") == {"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}
    assert usage_of(b"not json", "application/json") is None
