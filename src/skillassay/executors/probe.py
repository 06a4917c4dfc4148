"""One free request to a model endpoint before any trial: a server that is down or a key it
refuses is named in seconds (exit 2), instead of after minutes of trials that all fail the
same way. Shared by the API executors and the agent CLIs (whose endpoint and key are the
ones the CLI will use)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

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
        return f"the endpoint {client.base_url} is not answering ({exc.__cause__ or exc})"
    except (sdk.AuthenticationError, sdk.PermissionDeniedError) as exc:
        return f"the endpoint {client.base_url} refused the key (HTTP {exc.status_code})"
    except sdk.APIStatusError:
        pass
    return None


def probe_anthropic(base_url: str | None, env: Mapping[str, str] = os.environ) -> str | None:
    """What Claude Code will reach: ANTHROPIC_BASE_URL (or the hosted API) with
    ANTHROPIC_API_KEY, else the bearer token ANTHROPIC_AUTH_TOKEN."""
    import anthropic

    url = base_url or env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_URL
    key, token = env.get("ANTHROPIC_API_KEY"), env.get("ANTHROPIC_AUTH_TOKEN")
    with anthropic.Anthropic(base_url=url, api_key=key or None, auth_token=None if key else token,
                             timeout=PROBE_TIMEOUT_SECONDS, max_retries=0) as client:
        return probe_endpoint(client, anthropic)


def probe_openai(base_url: str | None, key: str | None) -> str | None:
    """What Codex will reach: its provider's base URL (or the hosted API) with its key."""
    import openai

    with openai.OpenAI(base_url=base_url or OPENAI_DEFAULT_URL, api_key=key or "",
                       timeout=PROBE_TIMEOUT_SECONDS, max_retries=0) as client:
        return probe_endpoint(client, openai)


__all__ = ["PROBE_TIMEOUT_SECONDS", "probe_anthropic", "probe_endpoint", "probe_openai"]
