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
that asks more often than it should fails the test via `assert_clean()`. The server itself is
loopback_server's; only the protocol is here."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loopback_server import ScriptedAPI

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


def request_problem(headers: dict[str, str], body: dict[str, Any]) -> str | None:
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
class FakeOpenAI(ScriptedAPI):
    script: list[Scripted]

    label = "OpenAI"
    route = "/v1/chat/completions"
    url_suffix = "/v1"

    def validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        return request_problem(headers, body)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error(status, message)

    def not_found(self, path: str) -> str:
        return f"Invalid URL (POST {path})"

    def response_headers(self, status: int) -> dict[str, str]:
        return {"x-request-id": f"req_{next(_ids):08d}"}

    def reply(self, item: Scripted, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        content = item(body) if callable(item) else item
        return 200, completion(body["model"], content)


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    return body["response_format"]["json_schema"]["schema"]


def grading_reply(passed: bool | list[bool] = True, evidence: str = "The answer names the port",
                  feedback: dict[str, Any] | None = None, quote: str = "port 4433") -> Callable[[dict[str, Any]], str]:
    """A valid judge reply for however many expectations (E1..En) the request's schema asks,
    each verdict quoting `quote` from the output."""

    def reply(body: dict[str, Any]) -> str:
        keys = list(schema_of(body)["properties"]["expectations"]["properties"])
        verdicts = passed if isinstance(passed, list) else [passed] * len(keys)
        return json.dumps({
            "expectations": {k: {"quote": quote, "passed": v, "evidence": evidence}
                             for k, v in zip(keys, verdicts, strict=False)},
            "claims": [{"claim": "The port is 4433", "type": "factual", "verified": True,
                        "evidence": "answer.md line 1"}],
            "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
            "eval_feedback": feedback,
        })

    return reply
