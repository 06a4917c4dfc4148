"""Secrets never reach disk: API keys and the values of secret-looking environment variables
are masked in everything we write (transcripts, logs, reports)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL", re.IGNORECASE)
# Well-known key shapes, masked even when they did not come from our environment.
_KEY_SHAPES = re.compile(r"\b(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,})")


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    for value in secret_values(env):
        if value in text:
            text = text.replace(value, "[REDACTED]")
    return _KEY_SHAPES.sub("[REDACTED]", text)


def make_redactor(env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """A redactor with the secret values looked up once (hot path: every file of every trial)."""
    secrets = secret_values(env)

    def _redact(text: str) -> str:
        for value in secrets:
            if value in text:
                text = text.replace(value, "[REDACTED]")
        return _KEY_SHAPES.sub("[REDACTED]", text)

    return _redact
