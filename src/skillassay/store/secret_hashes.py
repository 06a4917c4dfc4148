"""Secrets remembered per iteration as salted hashes, so commands run later (`view --static`,
`report`, `grade`) mask them even when the variable that held them is no longer set.

At run time the redactor knows the values (the environment, `-o env`); an agent can still
write one into outputs/, which is its own work and kept as it is, and which the static page
embeds. Storing the values would defeat the point, so iteration.json keeps, for every form of
every value (as spelled, JSON-escaped, base64, hex: store/secret_forms.py), its length and a
salted SHA-256, plus the same for its last ANCHOR (32) bytes with a 24-bit checksum of them (the
sum of a fixed pseudo-random weight per byte). Masking slides a window of the anchor's length over
the text with numpy (one cumulative sum of the weights, a lookup table of the checksums: tens
of ms a megabyte), hashes only the windows whose checksum matches, and masks the form that
ends there when its own hash matches.

Pieces of a value (a key cut in parts, base64 wrapped over lines) are found by `blocks`, a
24-bit checksum and a 64-bit salted hash per view of each 16-byte block of the value
(store/secret_fragments.py, which says why never a hash per sliding window); a piece holding a
whole block is masked, grown over the rest of the piece.

What the record reveals: nothing that a salted hash of the value does not (a value weak
enough to guess is found by guessing either way), plus 24-bit checksums of 16 to 32 bytes;
each block entry has to be guessed a whole block at a time."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillassay.store.secret_forms import FRAGMENT
from skillassay.store.secret_fragments import Block, block_hit, block_sum, blocks_record, new_blocks, parse_blocks
from skillassay.store.secret_strength import strong_enough
from skillassay.store.secret_windows import (
    candidates,
    checksum,
    escapes_before,
    grown,
    masked,
    merged,
    off_escapes,
    table,
)

# `blocks` (pieces: store/secret_fragments.py) was added to the record under the same scheme:
# a record without it reads as before, and code that predates it ignores it.
SCHEME = "salted-sha256-anchor-v1"
# Bytes: the window slid over text; shorter forms are their own anchor. Twice FRAGMENT, so an
# anchor carries at least FRAGMENT bytes of the value in every form: 16 characters of the hex
# form are only 8 bytes of the key, and with their 24-bit checksum (which lets a search match
# halves of a guess against each other) their hash gave those 8 characters away in about 2**24
# hashes. Records written with the old anchor (OLD_ANCHOR) are still read.
ANCHOR = 2 * FRAGMENT
OLD_ANCHOR = FRAGMENT
Record = tuple[bytes, tuple["Remembered", ...], tuple[Block, ...]]  # salt, whole forms, blocks


def _digest(salt: bytes, data: bytes) -> str:
    return hashlib.sha256(salt + data).hexdigest()


@dataclass(frozen=True)
class Remembered:
    """One form: its length, its anchor's (length, checksum, hash), its own hash."""

    length: int
    anchor_len: int
    anchor_sum: int
    anchor_sha: str
    sha: str


def remember(values: Iterable[str], salt: bytes) -> list[Remembered]:
    from skillassay.store.secret_forms import form_groups

    out = {}
    for value in values:
        for group in form_groups(value, 1):
            for form in group.forms:
                data = form.encode("utf-8")
                anchor = data[-ANCHOR:]
                if not strong_enough(value, len(anchor) / len(data)):  # its hash would give it away
                    continue
                out[data] = Remembered(len(data), len(anchor), checksum(anchor), _digest(salt, anchor),
                                       _digest(salt, data))
    return list(out.values())


@dataclass(frozen=True)
class HashedSecrets:
    """The remembered forms and blocks of one or more iterations, ready to mask with."""

    salted: tuple[Record, ...]  # one per record
    # width -> (checksum -> [(salt, form)]) and (checksum -> [(salt, block hash)]): built once, read per write
    _by_width: dict[int, dict[int, list[tuple[bytes, Remembered]]]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    _blocks: dict[int, dict[int, list[tuple[bytes, bytes, int, int]]]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    _tables: dict[int, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        for salt, forms, blocks in self.salted:
            for f in forms:
                self._by_width.setdefault(f.anchor_len, {}).setdefault(f.anchor_sum, []).append((salt, f))
            for width, total, digest, before, after in blocks:
                self._blocks.setdefault(width, {}).setdefault(total, []).append((salt, digest, before, after))

    def _table(self, width: int) -> Any:
        """The lookup table of this width's checksums (low bits), made on first use."""
        if width not in self._tables:
            self._tables[width] = table([*self._by_width.get(width, {}), *self._blocks.get(width, {})])
        return self._tables[width]

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        pieces: list[tuple[int, int]] = []  # whole blocks, grown over the rest of their piece
        for width in sorted({*self._by_width, *self._blocks}):
            forms, blocks = self._by_width.get(width, {}), self._blocks.get(width, {})
            for at in candidates(data, width, self._table(width)):
                window = data[at:at + width]
                for salt, f in forms.get(checksum(window), ()):
                    end, start = at + width, at + width - f.length
                    if (start >= 0 and _digest(salt, window) == f.anchor_sha
                            and _digest(salt, data[start:end]) == f.sha):
                        found.append((escapes_before(data, start), end))
                for salt, digest, before, after in blocks.get(block_sum(window), ()):
                    if block_hit(salt, window, digest):  # the rest of the piece: as far as the form reaches
                        pieces += grown(data, at, at + width, before, after)
        return merged([*off_escapes(data, found), *off_escapes(data, merged(pieces))])

    def bytes(self, data: bytes, mask: bytes) -> bytes:
        return masked(data, self.spans(data), mask) if data else data

    def text(self, text: str, mask: str) -> str:
        data = text.encode("utf-8", errors="surrogatepass")
        out = self.bytes(data, mask.encode())
        return text if out is data else out.decode("utf-8", errors="replace")


# ------------------------------------------------------------------ the record in iteration.json


def new_record(values: Iterable[str], previous: Any = None) -> dict[str, Any]:
    """The record for iteration.json: the previous one's forms (a resumed run may have had
    other variables set) and these values', under one salt (the previous one's, if any)."""
    old = parse_record(previous)
    salt = old[0] if old else secrets.token_bytes(16)
    values = list(values)
    each = [remember([v], salt) for v in values]
    forms = {f.sha: f for f in (old[1] if old else ())}
    forms.update({f.sha: f for remembered in each for f in remembered})
    blocks = {*(old[2] if old else ()), *new_blocks(values, salt)}
    weak = sum(not remembered for remembered in each)  # none of its forms is safe to hash
    if isinstance(previous, Mapping) and isinstance(previous.get("too_weak_to_remember"), int):
        weak = max(weak, previous["too_weak_to_remember"])
    return {"scheme": SCHEME, "salt": salt.hex(), "anchor": ANCHOR, "too_weak_to_remember": weak,
            "forms": [[f.length, f.anchor_len, f.anchor_sum, f.anchor_sha, f.sha]
                      for f in sorted(forms.values(), key=lambda f: f.sha)],
            "blocks": blocks_record(blocks)}


def parse_record(data: Any) -> Record | None:
    """(salt, forms, blocks) from a record, None when absent or not in this scheme. Entries of
    the wrong shape are skipped: the record only ever adds masking. A record written before
    blocks were has none."""
    if not isinstance(data, Mapping) or data.get("scheme") != SCHEME or data.get("anchor") not in (ANCHOR, OLD_ANCHOR):
        return None
    anchor = int(data["anchor"])
    try:
        salt = bytes.fromhex(str(data.get("salt")))
    except ValueError:
        return None
    entries = data.get("forms")
    forms = []
    for entry in entries if isinstance(entries, list) else []:
        if (isinstance(entry, list) and len(entry) == 5 and all(isinstance(x, int) for x in entry[:3])
                and all(isinstance(x, str) for x in entry[3:]) and 0 < entry[1] <= min(entry[0], anchor)):
            forms.append(Remembered(*entry))
    blocks = parse_blocks(data.get("blocks"))
    return (salt, tuple(forms), blocks) if forms or blocks else None


__all__ = ["ANCHOR", "OLD_ANCHOR", "SCHEME", "HashedSecrets", "Record", "Remembered", "checksum", "new_record", "parse_record",
           "remember"]
