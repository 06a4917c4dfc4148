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
from typing import AnyStr

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL", re.IGNORECASE)
MASK = "[REDACTED]"
_MASK_BYTES = MASK.encode()
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
    return make_redactor(env)(text)


def make_redactor(env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """A redactor with the secret values looked up once (hot path: every file of every trial)."""
    return _compiled(frozenset(secret_values(env))).text


# Well-known key shapes, masked even when they did not come from our environment. Each is led
# by its literal prefix, without `\b`: a pattern that starts with a literal is searched for at
# memchr speed (~400 MB/s here), one that starts with `\b` or an alternation is tried at every
# position (~25 MB/s), and benchmark.json can be hundreds of MB. `_mask_shapes` checks the word
# boundary at each match instead.
_SHAPES = (r"sk-(?:ant-[A-Za-z0-9_\-]{8,}|[A-Za-z0-9_\-]{16,})",  # Anthropic, OpenAI
           r"AKIA[0-9A-Z]{16}",  # AWS access key id
           r"gh[pousr]_[A-Za-z0-9]{20,}", r"github_pat_[A-Za-z0-9_]{20,}",  # GitHub
           r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
           r"xox[abprs]-[A-Za-z0-9\-]{10,}")  # Slack
# Each shape's literal lead, looked for first with `in` (C speed, no call into re): most text
# holds none, and then the six searches are skipped.
_LEADS = ("sk-", "AKIA", "gh", "github_pat_", "AIza", "xox")
_TEXT_SHAPES = tuple((lead, re.compile(p)) for lead, p in zip(_LEADS, _SHAPES, strict=True))
_BYTES_SHAPES = tuple((lead.encode(), re.compile(p.encode())) for lead, p in zip(_LEADS, _SHAPES, strict=True))


def _mask_shapes(data: AnyStr, pattern: re.Pattern[AnyStr], mask: AnyStr) -> AnyStr:
    """pattern.sub(mask, data) for matches that start at a word boundary, as `\\b` would."""
    parts, start, pos = [], 0, 0
    while (m := pattern.search(data, pos)) is not None:
        at = m.start()
        before = data[at - 1:at]
        if before and (before.isalnum() or before in ("_", b"_")):
            pos = at + 1  # `task-...` is no key, but a key may start later inside the match
            continue
        parts += [data[start:at], mask]
        start = pos = m.end()
    if not parts:
        return data
    parts.append(data[start:])
    return data[:0].join(parts)


@dataclass(frozen=True)
class DiskRedactor:
    """Every secret value and key shape, masked in text and in UTF-8 bytes (benchmark.json's
    runs[] is written as bytes beneath the text layer)."""

    secrets: tuple[str, ...]  # longest first, each also as spelled inside a JSON string

    def text(self, text: str) -> str:
        for value in self.secrets:
            if value in text:
                text = text.replace(value, MASK)
        for lead, pattern in _TEXT_SHAPES:
            if lead in text:
                text = _mask_shapes(text, pattern, MASK)
        return text

    def bytes(self, data: bytes) -> bytes:
        for value in self.secrets:
            raw = value.encode()
            if raw in data:
                data = data.replace(raw, MASK.encode())
        for lead, pattern in _BYTES_SHAPES:
            if lead in data:
                data = _mask_shapes(data, pattern, _MASK_BYTES)
        return data


def _spellings(value: str) -> Iterable[str]:
    """A value as it appears in plain text and inside a JSON string (quotes, backslashes and
    non-ASCII escaped), so a file written by any of our JSON encoders is covered."""
    yield value
    for ensure_ascii in (False, True):
        yield json.dumps(value, ensure_ascii=ensure_ascii)[1:-1]


@functools.lru_cache(maxsize=32)
def _compiled(secrets: frozenset[str]) -> DiskRedactor:
    return DiskRedactor(tuple(sorted({s for v in secrets for s in _spellings(v)}, key=len, reverse=True)))


@functools.lru_cache(maxsize=8)
def _secret_names(names: frozenset[str | bytes]) -> tuple[str, ...]:
    return tuple(n for n in map(os.fsdecode, names) if looks_secret(n))


def disk_redactor() -> DiskRedactor:
    """The redactor for a file about to be written: the environment as it is now, plus what
    register_env added. It runs for every file of every trial, so the secret-looking names are
    found once per set of variable names and only their values are read each time."""
    names = frozenset(getattr(os.environ, "_data", None) or os.environ)  # POSIX: raw keys, no decoding
    values = (os.environ.get(n, "") for n in _secret_names(names))
    return _compiled(frozenset(v for v in values if len(v) >= _MIN_SECRET).union(_registered))


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
