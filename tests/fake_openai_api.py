"""A loopback stand-in for OpenAI's Chat Completions API (POST /v1/chat/completions,
non-streaming), for the judge's structured-output path.

It stands for the hosted API, which cannot run offline, and speaks its protocol so the real
`openai` SDK talks to it unchanged: the request needs `Authorization: Bearer`, `model` and
`messages`; a `response_format` of type json_schema must carry `json_schema.name` and
`json_schema.schema`, and with `strict: true` every object in the schema must set
`additionalProperties: false` and list all its properties in `required` (the real API answers
400 invalid_request_error otherwise). Replies are `chat.completion` objects: choices[0].message
{role, content, refusal}, finish_reason, usage {prompt_tokens, completion_tokens, total_tokens}.

Replies are scripted: a string is sent as the message content verbatim (so a test can send
invalid JSON, as a model cut short would), a callable gets the request body and returns the
content. When the script runs out the server answers 400 and records the failure, so a judge
that asks more often than it should fails the test via `assert_clean()`."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
Scripted = str | Callable[[dict[str, Any]], str]


def strict_schema_problem(schema: Any, where: str = "$") -> str | None:
    """The strict-mode rules the real API enforces on a json_schema response_format."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            props = schema.get("properties", {})
            if schema.get("additionalProperties") is not False:
                return f"{where}: 'additionalProperties' is required to be supplied and to be false"
            missing = sorted(set(props) - set(schema.get("required", [])))
            if missing:
                return f"{where}: 'required' is required to include every key in properties; missing {missing}"
        for key, value in schema.items():
            problem = strict_schema_problem(value, f"{where}.{key}")
            if problem:
                return problem
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            problem = strict_schema_problem(value, f"{where}[{i}]")
            if problem:
                return problem
    return None


def validate(headers: dict[str, str], body: dict[str, Any]) -> str | None:
    bearer = headers.get("authorization", "")
    if not (bearer.startswith("Bearer ") and bearer[7:].strip()):
        return "You didn't provide an API key (Authorization: Bearer)"
    for key in ("model", "messages"):
        if key not in body:
            return f"Missing required parameter: '{key}'."
    fmt = body.get("response_format")
    if fmt and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if "name" not in spec or "schema" not in spec:
            return "Missing required parameter: 'response_format.json_schema.name' or '.schema'."
        if spec.get("strict"):
            return strict_schema_problem(spec["schema"])
    return None


def completion(model: str, content: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{next(_ids):08d}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
    }


def error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


@dataclass
class FakeOpenAI:
    script: list[Scripted]
    requests: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def assert_clean(self) -> None:
        assert not self.problems, f"fake OpenAI API saw problems: {self.problems}"
        assert not self.script, f"{len(self.script)} scripted replies were never requested"

    def answer(self, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests.append(body)  # headers are not kept: they carry the key
            problem = validate(headers, body)
            if problem:
                self.problems.append(problem)
                return 400, error(400, problem)
            if not self.script:
                self.problems.append("script exhausted: unexpected extra request")
                return 400, error(400, "fake script exhausted: unexpected extra request")
            item = self.script.pop(0)
        content = item(body) if callable(item) else item
        return 200, completion(body["model"], content)


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, error(404, f"Invalid URL (POST {self.path})"))
                return
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            status, payload = fake.answer({k.lower(): v for k, v in self.headers.items()}, body)
            self._send(status, payload)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", f"req_{next(_ids):08d}")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Silenced; every request is recorded in fake.requests instead."""

    return Handler


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    return body["response_format"]["json_schema"]["schema"]


def grading_reply(passed: bool | list[bool] = True, evidence: str = "Quoted from the answer: 'port 4433'",
                  feedback: dict[str, Any] | None = None) -> Callable[[dict[str, Any]], str]:
    """A valid judge reply for however many expectations (E1..En) the request's schema asks."""

    def reply(body: dict[str, Any]) -> str:
        keys = list(schema_of(body)["properties"]["expectations"]["properties"])
        verdicts = passed if isinstance(passed, list) else [passed] * len(keys)
        return json.dumps({
            "expectations": {k: {"passed": v, "evidence": evidence} for k, v in zip(keys, verdicts, strict=False)},
            "claims": [{"claim": "The port is 4433", "type": "factual", "verified": True,
                        "evidence": "answer.md line 1"}],
            "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
            "eval_feedback": feedback,
        })

    return reply
