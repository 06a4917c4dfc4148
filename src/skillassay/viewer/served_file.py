"""An output file as the served viewer sends it (`/api/file`): masked as the static page and
`report` mask it (the secrets known now and those the iteration's runs remembered as hashes:
store/redact.py), and read, masked and sent in bounded pieces, so a 2 GiB output costs a few MB.

Masking piece by piece must not miss a secret that straddles two pieces. Every match the
redactor makes is either bounded (a secret's forms, its split across a line: at most `reach`
bytes) or has no whitespace in it (key shapes, URL userinfo). So a piece ends just before a
whitespace byte at least `reach` bytes before the end of what has been read, where masking the
two sides apart gives what masking them together gives (checked on the `reach` bytes each side):
nothing crosses that cut."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

from skillassay.store.redact import MASK, DiskRedactor

READ = 1 << 20  # bytes read at a time
MAX_PENDING = 8 << 20  # text with no usable cut this long is cut anyway (no whitespace at all)
_SLACK = 256  # line-break whitespace a split secret may hold (secret_forms._BREAK)
_TRIES = 8  # cuts tried per read before reading more


def reach_of(redactor: DiskRedactor) -> int:
    """Bytes a bounded match can span: the longest form (UTF-8), split (two halves and the break
    between) or remembered form, and the mask itself."""
    longest = max((len(f.encode("utf-8")) for f in redactor.secrets), default=0)
    splits = max((len((s.head + s.tail).encode("utf-8")) + _SLACK for s in redactor.splits), default=0)
    hashed = max((f.length for _, forms, _ in redactor.hashed.salted for f in forms), default=0) \
        if redactor.hashed is not None else 0
    return max(longest, splits, hashed, len(MASK)) + 16


def _clean_cut(buf: bytes, at: int, mask: Callable[[bytes], bytes], reach: int) -> bool:
    window = buf[max(0, at - reach):at + reach]
    left = at - max(0, at - reach)
    return mask(window[:left]) + mask(window[left:]) == mask(window)


def _cut(buf: bytes, mask: Callable[[bytes], bytes], reach: int) -> int:
    """Where the next piece ends (0: read more first)."""
    limit = len(buf) - reach
    tries = 0
    while limit > 0 and tries < _TRIES:
        at = buf.rfind(b" ", 0, limit)
        for sep in (b"\n", b"\t", b"\r"):
            at = max(at, buf.rfind(sep, 0, limit))
        if at <= 0:
            break
        if _clean_cut(buf, at, mask, reach):
            return at
        limit, tries = at, tries + 1
    return max(len(buf) - reach, 0) if len(buf) >= MAX_PENDING else 0


def masked_pieces(fh: BinaryIO, mask: Callable[[bytes], bytes], reach: int, read: int = READ) -> Iterator[bytes]:
    """The file's bytes masked, in pieces of about `read` bytes (never the whole file)."""
    pending = b""
    while block := fh.read(read):
        pending += block
        while (at := _cut(pending, mask, reach)) > 0:
            yield mask(pending[:at])
            pending = pending[at:]
    if pending:
        yield mask(pending)


__all__ = ["READ", "masked_pieces", "reach_of"]
