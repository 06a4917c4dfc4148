"""Pieces of a known secret: every run of FRAGMENT characters of any of its forms
(store/secret_forms.fragment_forms) is masked wherever it appears, so a key cut in parts
(`echo "${K:0:54} ${K:54}"`, joined by `" + "`, a blank line between) or base64 wrapped over
lines (`echo "$K" | base64` wraps at 76 columns) is masked whatever separates the pieces.

While the values are known (run time, or the variable set) every FRAGMENT-byte window of every
form is looked up: found by checksum (store/secret_windows.py), confirmed by comparing bytes,
and the windows of one piece merge into one mask.

Later commands know the values only by iteration.json's salted hashes (store/secret_hashes.py),
and hashing every window would give the key away: with a known prefix (`sk-ant-api03-`) a
reader would guess the next window one character at a time. So the record holds, per block of
the value (its disjoint FRAGMENT-byte blocks and its last FRAGMENT bytes), a 24-bit checksum and
a 64-bit salted hash of views that each depend on that block alone: the block, the first 20
characters of its base64 at each alignment in both alphabets, its hex in both cases. Every
entry takes guessing a whole block (about 16 characters), never one character after another;
the last block is what the record already held as the value's anchor. A piece is found from
hashes when it holds a whole block (2*FRAGMENT-1 characters of the value, about 44 of its
base64, 62 of its hex), and the mask is grown over the rest of the piece around it."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillassay.store.secret_forms import FRAGMENT, base64_core, fragment_forms
from skillassay.store.secret_strength import strong_enough
from skillassay.store.secret_windows import candidates, checksum, merged, off_escapes, table

_STD_TO_URL = bytes.maketrans(b"+/", b"-_")
_B64_VIEW = 20  # characters of a block's base64 kept: the shortest of its three aligned cores
_DIGEST = 8  # bytes of the salted SHA-256 kept per entry: 2**-64 a chance match
_SUM = 3  # bytes of the checksum, kept modulo 2**24 (a 32-byte window's sum is longer)
_SUM_MASK = (1 << 8 * _SUM) - 1
_REACH = 2  # bytes each of how far the form reaches before and after the view, at most 65535
# (width, checksum, truncated salted hash, characters of the form before and after the view)
Block = tuple[int, int, bytes, int, int]


@dataclass(frozen=True)
class KnownFragments:
    """Every FRAGMENT-byte window of every form of the values known now."""

    windows: frozenset[bytes]
    _lookup: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        if len(data) < FRAGMENT:
            return []
        if "table" not in self._lookup:  # numpy only once there is something to find
            self._lookup["table"] = table(checksum(w) for w in self.windows)
        hits = [(at, at + FRAGMENT) for at in candidates(data, FRAGMENT, self._lookup["table"])
                if data[at:at + FRAGMENT] in self.windows]
        return off_escapes(data, merged(hits)) if hits else []


def known_fragments(values: Iterable[str]) -> KnownFragments | None:
    windows: set[bytes] = set()
    for value in values:
        for form in fragment_forms(value):
            data = form.encode("utf-8")
            windows.update(data[i:i + FRAGMENT] for i in range(len(data) - FRAGMENT + 1))
    return KnownFragments(frozenset(windows)) if windows else None


def block_views(value: str) -> set[tuple[bytes, int, int]]:
    """What the record keeps a hash of for `value`: each block's own views (module docstring),
    with how many characters of the whole form may stand before and after each (base64: an
    upper bound, its alignment unknown), so a mask grows over the rest of a piece and no
    further."""
    raw = value.encode("utf-8")
    if len(raw) < FRAGMENT:
        return set()
    views = set()
    for start in {*range(0, len(raw) - FRAGMENT + 1, FRAGMENT), len(raw) - FRAGMENT}:
        block, rest = raw[start:start + FRAGMENT], len(raw) - start - FRAGMENT
        views |= {(block, start, rest), (block.hex().encode(), 2 * start, 2 * rest),
                  (block.hex().upper().encode(), 2 * start, 2 * rest)}
        before, after = -(-4 * (start + 2) // 3) + 1, -(-4 * (rest + 2) // 3) + 3  # + alignment, padding
        for offset in range(3):
            core = base64_core(block, offset)[:_B64_VIEW].encode("ascii")
            views |= {(core, before, after), (core.translate(_STD_TO_URL), before, after)}
    return views


def new_blocks(values: Iterable[str], salt: bytes) -> set[Block]:
    """(width, checksum, hash, before, after) of every view of every value, under `salt`."""
    cap = (1 << 8 * _REACH) - 1
    return {(len(v), checksum(v) & _SUM_MASK, hashlib.sha256(salt + v).digest()[:_DIGEST], min(b, cap), min(a, cap))
            for value in values if strong_enough(value, _B64_VIEW * 3 / 4 / len(value.encode("utf-8")))
            for v, b, a in block_views(value)}


def blocks_record(blocks: Iterable[Block]) -> dict[str, str]:
    """{width: base64 of (checksum, hash, before, after) entries}: 20 characters an entry in
    iteration.json."""
    by_width: dict[int, list[bytes]] = {}
    for width, total, digest, before, after in sorted(blocks):
        by_width.setdefault(width, []).append(total.to_bytes(_SUM, "big") + digest + before.to_bytes(_REACH, "big")
                                              + after.to_bytes(_REACH, "big"))
    return {str(w): base64.b64encode(b"".join(e)).decode("ascii") for w, e in sorted(by_width.items())}


def parse_blocks(data: Any) -> tuple[Block, ...]:
    """The entries of a record's `blocks`; anything damaged is skipped (it only adds masking)."""
    out: list[Block] = []
    step = _SUM + _DIGEST + 2 * _REACH
    for key, packed in data.items() if isinstance(data, Mapping) else ():
        try:
            width, raw = int(key), base64.b64decode(str(packed), validate=True)
        except ValueError:
            continue
        if FRAGMENT <= width <= 4 * FRAGMENT:
            for i in range(0, len(raw) - step + 1, step):
                at = i + _SUM + _DIGEST
                out.append((width, int.from_bytes(raw[i:i + _SUM], "big"), raw[i + _SUM:at],
                            int.from_bytes(raw[at:at + _REACH], "big"), int.from_bytes(raw[at + _REACH:i + step], "big")))
    return tuple(out)


def block_hit(salt: bytes, window: bytes, digest: bytes) -> bool:
    return hashlib.sha256(salt + window).digest()[:_DIGEST] == digest


def block_sum(window: bytes) -> int:
    """The checksum an entry holds for this window."""
    return checksum(window) & _SUM_MASK


__all__ = ["Block", "KnownFragments", "block_hit", "block_sum", "block_views", "blocks_record", "known_fragments", "new_blocks", "parse_blocks"]
