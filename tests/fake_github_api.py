"""A loopback stand-in for GitHub's REST issue-comments endpoints, as documented at
docs.github.com/rest/issues/comments (API version 2022-11-28), and the one pull-request read
the Action makes. It keeps state, so a test sees what a pull request would show:

- GET  /repos/{owner}/{repo}/issues/{n}/comments?per_page=&page=  -> 200, a page of comments,
  oldest first, with a `Link: <...>; rel="next"` header while more pages follow (per_page at
  most 100, default 30);
- POST /repos/{owner}/{repo}/issues/{n}/comments {"body"}        -> 201, the new comment;
- PATCH /repos/{owner}/{repo}/issues/comments/{id} {"body"}      -> 200, the comment updated in
  place (same id, new updated_at); 404 for an id that is not there;
- GET  /repos/{owner}/{repo}/pulls/{n}                           -> 200, {number, head: {sha}};
- a body over 65,536 characters -> 422 "Validation Failed" ("body is too long (maximum is 65536
  characters)"); a missing body -> 422;
- no `Authorization: Bearer|token T` with a known token -> 401 "Bad credentials"; a read-only
  token (a fork's pull_request run) writing -> 403 "Resource not accessible by integration".
Comments carry GitHub's fields (id, node_id, url, html_url, issue_url, body, user{login,type},
created_at, updated_at, author_association). Every request is recorded (method, path, body);
the token itself never is."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from loopback_server import LoopbackServer

LIMIT = 65_536
BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}


@dataclass
class FakeGitHub(LoopbackServer):
    repository: str
    tokens: dict[str, str]  # token -> "write" | "read"
    pulls: dict[int, str] = field(default_factory=dict)  # pull request number -> head sha
    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 1000
    methods: ClassVar[tuple[str, ...]] = ("GET", "POST", "PATCH")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_comment(self, pr: int, body: str, user: dict[str, Any] | None = None) -> dict[str, Any]:
        """A comment already on the pull request (a person's, or an earlier run's)."""
        with self.lock:
            return self._create(pr, body, user or BOT)

    def on(self, pr: int) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["_pr"] == pr]

    def _create(self, pr: int, body: str, user: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        now = _now()
        comment = {"id": self._next_id, "node_id": f"IC_{self._next_id}", "_pr": pr,
                   "url": f"{self.url}/repos/{self.repository}/issues/comments/{self._next_id}",
                   "html_url": f"https://github.com/{self.repository}/pull/{pr}#issuecomment-{self._next_id}",
                   "issue_url": f"{self.url}/repos/{self.repository}/issues/{pr}",
                   "body": body, "user": dict(user), "created_at": now, "updated_at": now,
                   "author_association": "NONE"}
        self.comments.append(comment)
        return comment

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(raw_path)
        path, query = parts.path, parse_qs(parts.query)
        with self.lock:
            self.requests.append((method, raw_path, body))
            m = re.fullmatch(r"(?:token|Bearer) (\S+)", headers.get("authorization", ""))
            access = self.tokens.get(m.group(1)) if m else None
            if access is None:
                return 401, _error("Bad credentials"), {}
            if method != "GET" and access != "write":
                return 403, _error("Resource not accessible by integration"), {}
            prefix = f"/repos/{self.repository}"
            if not path.startswith(prefix + "/"):
                return 404, _error("Not Found"), {}
            rest = path[len(prefix):]
            if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "GET":
                return self._list(int(m.group(1)), query)
            if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "POST":
                if (problem := _body_problem(body)) is not None:
                    return 422, problem, {}
                return 201, _public(self._create(int(m.group(1)), body["body"], BOT)), {}
            if (m := re.fullmatch(r"/issues/comments/(\d+)", rest)) and method == "PATCH":
                found = next((c for c in self.comments if c["id"] == int(m.group(1))), None)
                if found is None:
                    return 404, _error("Not Found"), {}
                if (problem := _body_problem(body)) is not None:
                    return 422, problem, {}
                found["body"], found["updated_at"] = body["body"], _now()
                return 200, _public(found), {}
            if (m := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "GET" and int(m.group(1)) in self.pulls:
                return 200, {"number": int(m.group(1)), "head": {"sha": self.pulls[int(m.group(1))]}}, {}
            return 404, _error("Not Found"), {}

    def _list(self, pr: int, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        per_page = min(100, int((query.get("per_page") or ["30"])[0]))
        page = int((query.get("page") or ["1"])[0])
        mine = self.on(pr)
        chunk = mine[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(mine):
            headers["Link"] = (f'<{self.url}/repos/{self.repository}/issues/{pr}/comments?per_page={per_page}'
                               f'&page={page + 1}>; rel="next"')
        return 200, [_public(c) for c in chunk], headers

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = "<not json>"
        status, payload, extra = self.handle(method, path, headers, body)
        return status, {"Content-Type": "application/json; charset=utf-8",
                        "X-GitHub-Api-Version-Selected": "2022-11-28", **extra}, json.dumps(payload).encode()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _error(message: str) -> dict[str, Any]:
    return {"message": message, "documentation_url": "https://docs.github.com/rest", "status": "error"}


def _body_problem(body: Any) -> dict[str, Any] | None:
    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
        return {"message": "Invalid request.\n\n\"body\" wasn't supplied.", "status": "422"}
    if len(body["body"]) > LIMIT:
        return {"message": "Validation Failed", "status": "422", "errors": [
            {"resource": "IssueComment", "code": "custom", "field": "body",
             "message": f"body is too long (maximum is {LIMIT} characters)"}]}
    return None


def _public(comment: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in comment.items() if not k.startswith("_")}
