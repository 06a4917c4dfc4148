"""One free request to a model endpoint before any trial: a server that is down or a key it
refuses is named in seconds (exit 2), instead of after minutes of trials that all fail the
same way. Shared by the API executors and the agent CLIs (whose endpoint and key are the
ones the CLI will use)."""

from __future__ import annotations

import base64
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from skillassay.store.redact import mask_userinfo

PROBE_TIMEOUT_SECONDS = 10.0  # how long the endpoint may take to answer
ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def probe_endpoint(client: Any, sdk: Any) -> str | None:
    """An executor's ready() for a hosted API: ask the endpoint for its model list (free, no
    tokens), so a server that is down or a key it refuses is named before any trial. Any other
    answer means the endpoint is there. `sdk` is the `openai` or `anthropic` module: both SDKs
    name their errors alike, so one probe serves both."""
    try:
        client.with_options(timeout=PROBE_TIMEOUT_SECONDS, max_retries=0).models.list()
    except sdk.APIConnectionError as exc:
        return f"the endpoint {mask_userinfo(str(client.base_url))} is not answering ({exc.__cause__ or exc})"
    except (sdk.AuthenticationError, sdk.PermissionDeniedError) as exc:
        return f"the endpoint {mask_userinfo(str(client.base_url))} refused the key (HTTP {exc.status_code})"
    except sdk.APIStatusError:
        pass
    return None


def probe_models_url(url: str, headers: Mapping[str, str]) -> str | None:
    """GET an endpoint's model list with the headers the agent CLI will send. Plain urllib, not
    an API SDK: the agent CLIs need no SDK installed (they are not behind an extra), and one
    GET needs no client library."""
    target, sent = without_userinfo(url, headers)
    request = urllib.request.Request(target, headers=sent, method="GET")
    shown = mask_userinfo(url)
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_SECONDS):
            return None
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return f"the endpoint {shown} refused the key (HTTP {exc.code})"
        return None  # it answered: a missing route or a busy server is the trials' business
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"the endpoint {shown} is not answering ({reason})"


def without_userinfo(url: str, headers: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The URL without `user:pw@` and the headers with it as HTTP Basic authorization, as HTTP
    clients send a URL's credentials (urllib would take `user:pw@host` for the host name). A
    key the CLI sends as `authorization` wins over the userinfo."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, dict(headers)
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    sent = dict(headers)
    if not any(name.lower() == "authorization" for name in sent):
        pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
        sent["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), sent


def probe_anthropic(base_url: str | None, env: Mapping[str, str] = os.environ) -> str | None:
    """What Claude Code will reach: ANTHROPIC_BASE_URL (or the hosted API) with
    ANTHROPIC_API_KEY, else the bearer token ANTHROPIC_AUTH_TOKEN."""
    url = (base_url or env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_URL).rstrip("/")
    key, token = env.get("ANTHROPIC_API_KEY"), env.get("ANTHROPIC_AUTH_TOKEN")
    headers = {"anthropic-version": "2023-06-01"}
    if key:
        headers["x-api-key"] = key
    elif token:
        headers["authorization"] = f"Bearer {token}"
    return probe_models_url(f"{url}/v1/models", headers)


def probe_openai(base_url: str | None, key: str | None) -> str | None:
    """What Codex will reach: its provider's base URL (or the hosted API) with its key."""
    url = (base_url or OPENAI_DEFAULT_URL).rstrip("/")
    return probe_models_url(f"{url}/models", {"authorization": f"Bearer {key or ''}"})


__all__ = ["PROBE_TIMEOUT_SECONDS", "probe_anthropic", "probe_endpoint", "probe_models_url", "probe_openai"]
