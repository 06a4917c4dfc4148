"""The sliding-window search shared by the redactor's fragment masking (store/secret_fragments.py)
and the remembered hashes (store/secret_hashes.py): a window of fixed width slid over the text
with numpy, a checksum per window (the sum of a fixed pseudo-random weight per byte: one
cumulative sum, tens of ms a megabyte), and a lookup table of the checksums looked for, so only
the few windows whose checksum matches are looked at in Python.

Also the span arithmetic both need: overlapping spans merged, a span grown over the rest of a
piece it was found inside, and spans kept off JSON escapes (masking `n` of a `\\n` would leave
a lone backslash, and the file would no longer be JSON)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from typing import Any  # numpy is imported where masking runs: every command imports this module

_CHUNK = 1 << 20  # bytes per numpy pass (bounded memory on a large write)
_TABLE_BITS = 20  # the candidate lookup table: 2**20 booleans per window width

# Each byte value's fixed pseudo-random weight (20 bits, derived from SHA-256 so it never
# changes): a window's checksum is the sum of its bytes' weights, spread over 24 bits, so a
# window of ordinary text rarely matches a remembered one by chance (about 2 in a million).
_WEIGHTS = tuple(int.from_bytes(hashlib.sha256(b"skillassay-anchor-weight" + bytes([b])).digest()[:3], "big") & 0xFFFFF
                 for b in range(256))

# What a piece of a key's form is made of (key alphabets, base64 and its padding, hex): a span
# found inside such a run is grown over it, never across anything else (a space, a quote, a
# dot, a backslash), which is what separates pieces or ends a sentence.
_PIECE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_LEFT = _PIECE - {ord("=")}


def checksum(data: bytes) -> int:
    """The sum of the bytes' weights: what the numpy window computes."""
    return sum(_WEIGHTS[b] for b in data)


def table(sums: Iterable[int]) -> Any:
    """The lookup table of these checksums (their low bits), for `candidates`."""
    import numpy as np

    out = np.zeros(1 << _TABLE_BITS, dtype=bool)
    out[[s & ((1 << _TABLE_BITS) - 1) for s in sums]] = True
    return out


def candidates(data: bytes, width: int, lookup: Any) -> list[int]:
    """Start offsets of the `width`-byte windows whose checksum's low bits are marked in
    `lookup` (a few in a million windows by chance); the caller checks what is there. One
    chunk at a time, so a large write costs bounded memory."""
    import numpy as np

    n = len(data)
    if n < width:
        return []
    weights = _weights_array()
    view = np.frombuffer(data, dtype=np.uint8)
    low = (1 << _TABLE_BITS) - 1
    hits: list[int] = []
    for base in range(0, n - width + 1, _CHUNK):
        part = weights[view[base:base + _CHUNK + width - 1]]
        c = np.empty(len(part) + 1, dtype=np.uint32)  # wraps: only the low 20 bits are read
        c[0] = 0
        np.cumsum(part, dtype=np.uint32, out=c[1:])
        window = c[width:] - c[:-width]
        window &= low
        hits += (base + np.flatnonzero(lookup[window])).tolist()
    return hits


@functools.cache
def _weights_array() -> Any:
    import numpy as np

    return np.array(_WEIGHTS, dtype=np.uint32)


def merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans as one: the windows of one piece become one mask."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def grown(data: bytes, start: int, end: int, before: int, after: int) -> list[tuple[int, int]]:
    """A span widened by up to `before` and `after` bytes over piece characters: a remembered
    block is found only whole, and the rest of the piece around it is part of the form too.
    Not leftwards over `=` (base64 padding ends a blob, a `key=` before it is no part of it)."""
    s, e = start, end
    while s > max(0, start - before) and data[s - 1] in _LEFT:
        s -= 1
    while e < min(len(data), end + after) and data[e] in _PIECE:
        e += 1
    return [(s, e)]


def _backslashes_before(data: bytes, at: int, floor: int = 0) -> int:
    """How many backslashes stand just before `at` (not looking before `floor`)."""
    k = 0
    while at - k > floor and data[at - k - 1] == 0x5C:
        k += 1
    return k


def _escaped(data: bytes, at: int) -> bool:
    """Whether the byte at `at` follows an escaping backslash (an odd run of them)."""
    return _backslashes_before(data, at) % 2 == 1


def _escape_end(data: bytes, at: int) -> int:
    """When `at` falls inside a JSON escape (`\\x` or `\\uXXXX`), where that escape ends; else `at`."""
    for back in range(1, 6):
        b = at - back
        if b < 0:
            break
        if data[b] == 0x5C and not _escaped(data, b):
            length = 6 if data[b + 1:b + 2] == b"u" else 2
            return b + length if b + length > at else at
    return at


def escapes_before(data: bytes, start: int) -> int:
    """A match that begins with an escape (`\\u00e9...`, `\\n...`) begins, in a JSON string
    inside a JSON string, after the backslashes that escape that escape: those go with it."""
    return start - _backslashes_before(data, start) if data[start:start + 1] == b"\\" else start


def off_escapes(data: bytes, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans moved so none starts or ends inside a JSON escape: a start inside one moves past
    it (the escape is not the secret's), an end inside one moves past it too (the escape is
    masked whole)."""
    out = []
    for start, end in spans:
        s, e = _escape_end(data, start), _escape_end(data, end)
        if s < e:
            out.append((s, e))
    return merged(out)


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80  # 10xxxxxx: the second to fourth byte of a UTF-8 character


def whole_characters(data: bytes, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans widened to whole UTF-8 characters: a window is 16 bytes, not 16 characters, and a
    mask that cut a character in two would leave invalid UTF-8 in the file (benchmark.json's
    bytes) or a U+FFFD in text."""
    out = []
    for start, end in spans:
        while start > 0 and start < len(data) and _is_continuation(data[start]):
            start -= 1
        while end < len(data) and _is_continuation(data[end]):
            end += 1
        out.append((start, end))
    return merged(out)


def masked(data: bytes, spans: list[tuple[int, int]], mask: bytes) -> bytes:
    if not spans:
        return data
    parts, at = [], 0
    for start, end in whole_characters(data, spans):
        # Backslashes just before: an even run escapes nothing at this level, but one level down
        # (a JSON string inside a JSON string) it escapes what the mask replaced: it goes with it.
        run = _backslashes_before(data, start, at)
        if run % 2 == 0:
            start -= run
        parts += [data[at:start], mask]
        at = end
    parts.append(data[at:])
    return b"".join(parts)


__all__ = ["candidates", "checksum", "escapes_before", "grown", "masked", "merged", "off_escapes", "table", "whole_characters"]
