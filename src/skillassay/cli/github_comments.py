"""The Action's sticky pull-request comment, through GitHub's REST issue-comments endpoints:
list the pull request's comments (every page), update ours in place when it is there, else
create it. Ours is the one a bot wrote that starts with the marker of this skill
(report/pr_comment.py), so each skill keeps one comment and a person's comment that quotes the
marker is never edited. The token is sent in a header and never printed or written."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from skillassay.report.pr_comment import GITHUB_LIMIT, MARKER_PREFIX
from skillassay.store.redact import disk_redactor

API_VERSION = "2022-11-28"
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class GitHubError(Exception):
    """A refused request: its status and GitHub's message (never the token)."""


@dataclass(frozen=True)
class Api:
    url: str  # GITHUB_API_URL, e.g. https://api.github.com
    repository: str  # owner/name
    token: str

    def call(self, method: str, path_or_url: str, body: dict[str, Any] | None = None) -> tuple[Any, dict[str, str]]:
        url = path_or_url if path_or_url.startswith(("http://", "https://")) else self.url.rstrip("/") + path_or_url
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "Authorization": f"Bearer {self.token}",
            "X-GitHub-Api-Version": API_VERSION, "User-Agent": "skillassay-action",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the API URL the runner sets
                text = response.read().decode()
                return (json.loads(text) if text else None), dict(response.headers.items())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read().decode()).get("message", "")
            except (ValueError, AttributeError):
                message = ""
            raise GitHubError(f"{method} {url.split('?')[0]}: HTTP {exc.code} {message}".strip()) from None


def marker_of(body: str) -> str:
    """The body's own first line when it is a skillassay marker, else the generic one."""
    first = body.split("\n", 1)[0]
    return first if re.fullmatch(re.escape(MARKER_PREFIX) + r"[A-Za-z0-9._-]* -->", first) else MARKER_PREFIX + " -->"


def list_comments(api: Api, pr: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    url: str | None = f"/repos/{api.repository}/issues/{pr}/comments?per_page=100"
    while url:
        page, headers = api.call("GET", url)
        out.extend(c for c in page or [] if isinstance(c, dict))
        link = next((v for k, v in headers.items() if k.lower() == "link"), "")
        m = _NEXT.search(link)
        url = m.group(1) if m else None
    return out


def find_sticky(comments: list[dict[str, Any]], marker: str) -> dict[str, Any] | None:
    for c in comments:
        user: dict[str, Any] = c["user"] if isinstance(c.get("user"), dict) else {}
        if user.get("type") == "Bot" and str(c.get("body", "")).startswith(marker):
            return c
    return None


def prepare_body(body: str) -> str:
    """Masked, and within GitHub's limit (a longer body is refused with 422)."""
    text = disk_redactor().text(body)
    return text if len(text) <= GITHUB_LIMIT else text[: GITHUB_LIMIT - 80] + "\n\n… (cut at GitHub's comment limit)\n"


def post_sticky(api: Api, pr: int, body: str) -> tuple[str, int]:
    """("created" | "updated", comment id)."""
    text = prepare_body(body)
    found = find_sticky(list_comments(api, pr), marker_of(text))
    if found is not None:
        api.call("PATCH", f"/repos/{api.repository}/issues/comments/{int(found['id'])}", {"body": text})
        return "updated", int(found["id"])
    created, _ = api.call("POST", f"/repos/{api.repository}/issues/{pr}/comments", {"body": text})
    return "created", int(created["id"])


def head_of(api: Api, pr: int) -> str:
    pull, _ = api.call("GET", f"/repos/{api.repository}/pulls/{pr}")
    return str(((pull or {}).get("head") or {}).get("sha") or "")
