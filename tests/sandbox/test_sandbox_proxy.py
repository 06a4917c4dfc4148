"""The metering proxy (skillassay.sandbox.proxy) with real sockets: the agent's placeholder key
is replaced by the real one on the way out, the answer streams back byte for byte, and the
provider's usage of each request is recorded."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator

import pytest
from sandbox_support import Upstream

from skillassay.sandbox import PLACEHOLDER_KEY, MeteringProxy
from skillassay.sandbox.proxy import usage_of

SSE = (b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":321,'
       b'"output_tokens":1}}}\n\nevent: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":54}}\n\n')


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream(SSE, "text/event-stream") as up:
        yield up


def post(url: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=json.dumps({"model": "m"}), headers=headers)
    answer = conn.getresponse()
    return answer.status, answer.read()


def test_the_real_key_goes_out_the_placeholder_never_and_usage_is_recorded(upstream: Upstream) -> None:
    with MeteringProxy(upstream.url("/v1"), {"x-api-key": "sk-real-0123456789"}) as proxy:
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
