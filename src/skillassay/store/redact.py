"""Secrets never reach disk: API keys and the values of secret-looking environment variables
are masked in everything we write (transcripts, logs, reports).

`disk_redactor` is applied by store/jsonio to every file skillassay writes, so no writer can
forget it; `redact`/`make_redactor` mask text before it is shown or handed on (CLI output).
Besides the process environment it masks the values of `-o env` entries (`register_env`),
which reach the agent as environment variables without ever being in ours."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL", re.IGNORECASE)
# Well-known key shapes, masked even when they did not come from our environment.
_KEY_SHAPES_TEXT = r"\b(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,})"
_KEY_SHAPES = re.compile(_KEY_SHAPES_TEXT)
MASK = "[REDACTED]"
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary text everywhere
_registered: set[str] = set()


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for code we run but do not trust (a check from evals.json): no keys."""
    return {k: v for k, v in env.items() if not looks_secret(k)}


def register_env(entries: Mapping[object, object] | None) -> None:
    """Mask from now on the values of these extra environment entries (`-o env`) whose names
    look secret: they are written nowhere in plain text, iteration.json included."""
    for key, value in (entries or {}).items():
        if looks_secret(str(key)) and len(str(value)) >= _MIN_SECRET:
            _registered.add(str(value))


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    for value in secret_values(env):
        if value in text:
            text = text.replace(value, MASK)
    return _KEY_SHAPES.sub(MASK, text)


def make_redactor(env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """A redactor with the secret values looked up once (hot path: every file of every trial)."""
    secrets = secret_values(env)

    def _redact(text: str) -> str:
        for value in secrets:
            if value in text:
                text = text.replace(value, MASK)
        return _KEY_SHAPES.sub(MASK, text)

    return _redact


@dataclass(frozen=True)
class DiskRedactor:
    """One pattern for every secret and key shape, for text and for UTF-8 bytes (benchmark.json's
    runs[] is written as bytes beneath the text layer)."""

    text_pattern: re.Pattern[str]
    bytes_pattern: re.Pattern[bytes]

    def text(self, text: str) -> str:
        return self.text_pattern.sub(MASK, text)

    def bytes(self, data: bytes) -> bytes:
        return self.bytes_pattern.sub(MASK.encode(), data)


def _spellings(value: str) -> Iterable[str]:
    """A value as it appears in plain text and inside a JSON string (quotes, backslashes and
    non-ASCII escaped), so a file written by any of our JSON encoders is covered."""
    yield value
    for ensure_ascii in (False, True):
        yield json.dumps(value, ensure_ascii=ensure_ascii)[1:-1]


@functools.lru_cache(maxsize=32)
def _compiled(secrets: frozenset[str]) -> DiskRedactor:
    spelled = sorted({s for v in secrets for s in _spellings(v)}, key=len, reverse=True)
    text = "|".join([*map(re.escape, spelled), _KEY_SHAPES_TEXT])
    return DiskRedactor(re.compile(text), re.compile(text.encode()))


def disk_redactor() -> DiskRedactor:
    """The redactor for a file about to be written: the environment as it is now, plus what
    register_env added. Cheap once compiled (cached by the set of secrets)."""
    return _compiled(frozenset(secret_values()).union(_registered))


def copy_redacted(src: str, dst: str) -> str:
    """shutil.copy2 for a skill snapshot, with secrets in text files masked (a key pasted into
    an evals.json prompt must not be kept in the snapshot either). Binary files copy as they are."""
    with open(src, "rb") as fh:
        data = fh.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return shutil.copy2(src, dst)
    masked = disk_redactor().bytes(data)
    if masked == data:
        return shutil.copy2(src, dst)
    with open(dst, "wb") as out:
        out.write(masked)
    shutil.copystat(src, dst)
    return dst


__all__ = ["MASK", "DiskRedactor", "copy_redacted", "disk_redactor", "looks_secret", "make_redactor",
           "redact", "register_env", "secret_values", "without_secrets"]
