"""Secrets never reach disk: API keys and the values of secret-looking environment variables
are masked in everything we write (transcripts, logs, reports), in every form an agent may
re-encode them to (base64, hex: store/secret_forms.py) and in pieces of 16 characters or more
(a key cut in parts, base64 wrapped over lines: store/secret_fragments.py), and so is the
userinfo of any URL (`http://user:pw@host`).

`disk_redactor` is applied by store/jsonio to every file skillassay writes, so no writer can
forget it; `redact`/`make_redactor` mask text before it is shown or handed on (CLI output).
Besides the process environment it masks the values of `-o env` entries (`register_env`),
which reach the agent as environment variables without ever being in ours: every one of them
is secret unless named in `-o public_env`. The values known at run time are remembered in
iteration.json as salted hashes (store/secret_hashes.py); later commands on that iteration
`remember` them, and mask what the hashes match even with the variables unset."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, AnyStr

from skillassay.errors import InputError
from skillassay.store.secret_forms import FRAGMENT, FormGroup, SplitForm, all_forms
from skillassay.store.secret_fragments import KnownFragments, known_fragments
from skillassay.store.secret_hashes import HashedSecrets, parse_record
from skillassay.store.secret_windows import escapes_before, masked, off_escapes

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL", re.IGNORECASE)
MASK = "[REDACTED]"
_MASK_BYTES = MASK.encode()
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary text everywhere
_PIECE = FRAGMENT  # a text shorter than this holds no piece of a secret worth a search
_registered: set[str] = set()
_remembered: list[HashedSecrets] = []  # the iterations' remembered secrets, one object (cache key)


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for code we run but do not trust (a check from evals.json): no keys."""
    return {k: v for k, v in env.items() if not looks_secret(k)}


def register_env(entries: Mapping[object, object] | None, public: Iterable[object] = ()) -> None:
    """Mask from now on the values of these extra environment entries (`-o env`), every one
    but those named in `public` (`-o public_env`): a name does not say whether its value is
    secret (`DB_URL` holds a password), so the user says which are not. They are written
    nowhere in plain text, iteration.json included."""
    shown = {str(name) for name in public}
    for key, value in (entries or {}).items():
        if str(key) not in shown and len(str(value)) >= _MIN_SECRET:
            _registered.add(str(value))


def register_env_option(options: Mapping[str, object]) -> None:
    """`-o env={...}` masked from now on but for the names in `-o public_env=["NAME", ...]`."""
    public = options.get("public_env", [])
    if not isinstance(public, list) or not all(isinstance(n, str) for n in public):
        raise InputError.one("--option public_env", json.dumps(public), "expected a JSON list of variable names")
    env = options.get("env")
    if isinstance(env, Mapping):
        register_env(env, public)


def remember(record: Any) -> bool:
    """Mask from now on what an iteration's `redacted_secrets` record (iteration.json) holds
    hashes of. True when it held any."""
    parsed = parse_record(record)
    if parsed is None:
        return False
    now = _remembered[0].salted if _remembered else ()
    if parsed not in now:
        _remembered[:] = [HashedSecrets((*now, parsed))]
    return True


def known_values() -> list[str]:
    """The values the disk redactor masks now (environment and `-o env`): what a run remembers."""
    names = frozenset(getattr(os.environ, "_data", None) or os.environ)
    values = (os.environ.get(n, "") for n in _secret_names(names))
    return sorted({v for v in values if len(v) >= _MIN_SECRET}.union(_registered))


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    return make_redactor(env)(text)


def make_redactor(env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """A redactor with the secret values looked up once (hot path: every file of every trial):
    those of `env` (default: ours), the `-o env` values and the iterations' remembered ones."""
    return _compiled(frozenset(secret_values(env)).union(_registered), _hashed()).text


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


_USERINFO_LEAD = "://"
_USERINFO = re.compile(r"://[^\s/?#@\"'<>\\]+@")
_USERINFO_BYTES = re.compile(_USERINFO.pattern.encode())


@dataclass(frozen=True)
class DiskRedactor:
    """Every secret value in every form, key shape and URL userinfo, masked in text and in
    UTF-8 bytes (benchmark.json's runs[] is written as bytes beneath the text layer)."""

    groups: tuple[FormGroup, ...]  # each value's forms, by the literal that finds them
    splits: tuple[SplitForm, ...] = ()
    fragments: KnownFragments | None = None  # their pieces, however separated
    hashed: HashedSecrets | None = None  # values remembered by the iteration, known by hash only

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(f for g in self.groups for f in g.forms)

    def text(self, text: str) -> str:
        for group in self.groups:
            if group.probe in text:
                for form in group.forms:
                    if form in text:
                        text = (_masked_text(text, re.compile(re.escape(form.encode()))) if "\\" in text
                                else text.replace(form, MASK))
        for split in self.splits:
            if split.head in text or split.tail in text:
                text = _masked_text(text, split.bytes_pattern)
        if self.fragments is not None and len(text) >= _PIECE:
            data = text.encode("utf-8", errors="surrogatepass")
            spans = self.fragments.spans(data)
            if spans:
                text = masked(data, spans, _MASK_BYTES).decode("utf-8", errors="replace")
        for lead, pattern in _TEXT_SHAPES:
            if lead in text:
                text = _mask_shapes(text, pattern, MASK)
        if _USERINFO_LEAD in text:
            text = _USERINFO.sub("://" + MASK + "@", text)
        return self.hashed.text(text, MASK) if self.hashed is not None else text

    def bytes(self, data: bytes) -> bytes:
        for group in self.groups:
            if group.probe.encode() in data:
                for form in group.forms:
                    needle = form.encode()
                    if needle in data:
                        data = (_masked_bytes(data, re.compile(re.escape(needle))) if b"\\" in data
                                else data.replace(needle, _MASK_BYTES))
        for split in self.splits:
            if split.head.encode() in data or split.tail.encode() in data:
                data = _masked_bytes(data, split.bytes_pattern)
        if self.fragments is not None:
            data = masked(data, self.fragments.spans(data), _MASK_BYTES)
        for lead, pattern in _BYTES_SHAPES:
            if lead in data:
                data = _mask_shapes(data, pattern, _MASK_BYTES)
        if b"://" in data:
            data = _USERINFO_BYTES.sub(b"://" + _MASK_BYTES + b"@", data)
        return self.hashed.bytes(data, _MASK_BYTES) if self.hashed is not None else data


def _masked_bytes(data: bytes, pattern: re.Pattern[bytes]) -> bytes:
    """pattern's matches masked, kept off JSON escapes (secret_windows.off_escapes): a value
    found inside a JSON string inside a JSON string (a tool's input in a transcript) starts
    after an escaping backslash, and masking from there left `\\[REDACTED]`, which is no JSON."""
    spans = [(escapes_before(data, a), b) for a, b in (m.span() for m in pattern.finditer(data))]
    return masked(data, off_escapes(data, spans), _MASK_BYTES) if spans else data



def _masked_text(text: str, pattern: re.Pattern[bytes]) -> str:
    data = text.encode("utf-8", errors="surrogatepass")
    out = _masked_bytes(data, pattern)
    return text if out is data else out.decode("utf-8", errors="surrogatepass")


def mask_userinfo(url: str) -> str:
    """A URL as it may be shown: `http://user:pw@host` -> `http://[REDACTED]@host`."""
    return _USERINFO.sub("://" + MASK + "@", url) if _USERINFO_LEAD in url else url


@functools.lru_cache(maxsize=32)
def _compiled(secrets: frozenset[str], hashed: HashedSecrets | None = None) -> DiskRedactor:
    groups, splits = all_forms(sorted(secrets, key=len, reverse=True), _MIN_SECRET)
    return DiskRedactor(tuple(groups), tuple(splits), known_fragments(secrets), hashed)


def _hashed() -> HashedSecrets | None:
    return _remembered[0] if _remembered else None


@functools.lru_cache(maxsize=8)
def _secret_names(names: frozenset[str | bytes]) -> tuple[str, ...]:
    return tuple(n for n in map(os.fsdecode, names) if looks_secret(n))


def disk_redactor() -> DiskRedactor:
    """The redactor for a file about to be written: the environment as it is now, plus what
    register_env added. It runs for every file of every trial, so the secret-looking names are
    found once per set of variable names and only their values are read each time."""
    names = frozenset(getattr(os.environ, "_data", None) or os.environ)  # POSIX: raw keys, no decoding
    values = (os.environ.get(n, "") for n in _secret_names(names))
    return _compiled(frozenset(v for v in values if len(v) >= _MIN_SECRET).union(_registered), _hashed())


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


__all__ = ["MASK", "DiskRedactor", "copy_redacted", "disk_redactor", "known_values", "looks_secret",
           "make_redactor", "mask_userinfo", "redact", "register_env", "register_env_option", "remember", "secret_values",
           "without_secrets"]
