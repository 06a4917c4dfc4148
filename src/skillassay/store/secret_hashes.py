"""Secrets remembered per iteration as salted hashes, so commands run later (`view --static`,
`report`, `grade`) mask them even when the variable that held them is no longer set.

At run time the redactor knows the values (the environment, `-o env`); an agent can still
write one into outputs/, which is its own work and kept as it is, and which the static page
embeds. Storing the values would defeat the point, so iteration.json keeps, for every form of
every value (as spelled, JSON-escaped, base64, hex: store/secret_forms.py), its length and a
salted SHA-256, plus the same for its last ANCHOR bytes with a 24-bit checksum of them (the
sum of a fixed pseudo-random weight per byte). Masking slides a window of the anchor's length over
the text with numpy (one cumulative sum of the weights, a lookup table of the checksums: tens
of ms a megabyte), hashes only the windows whose checksum matches, and masks the form that
ends there when its own hash matches.

What the record reveals: nothing that a salted hash of the value does not (a value weak
enough to guess is found by guessing either way), plus a 24-bit checksum of 16 bytes.
A value split across a line break cannot be found from hashes: it is masked only while the
value itself is known (at run time, or with the variable set)."""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any  # numpy is imported where masking runs: every command imports this module

SCHEME = "salted-sha256-anchor-v1"
ANCHOR = 16  # bytes: the window slid over text; shorter forms are their own anchor
_CHUNK = 1 << 20  # bytes per numpy pass (bounded memory on a large write)


def _digest(salt: bytes, data: bytes) -> str:
    return hashlib.sha256(salt + data).hexdigest()


# Each byte value's fixed pseudo-random weight (20 bits, derived from SHA-256 so it never
# changes): a window's checksum is the sum of its bytes' weights, spread over 24 bits, so a
# window of ordinary text rarely matches a remembered one by chance (about 2 in a million).
_WEIGHTS = tuple(int.from_bytes(hashlib.sha256(b"skillassay-anchor-weight" + bytes([b])).digest()[:3], "big") & 0xFFFFF
                 for b in range(256))
_TABLE_BITS = 20  # the candidate lookup table: 2**20 booleans per anchor width


def checksum(data: bytes) -> int:
    """The sum of the bytes' weights: what the numpy window computes."""
    return sum(_WEIGHTS[b] for b in data)


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
                out[data] = Remembered(len(data), len(anchor), checksum(anchor), _digest(salt, anchor),
                                       _digest(salt, data))
    return list(out.values())


@dataclass(frozen=True)
class HashedSecrets:
    """The remembered forms of one or more iterations, ready to mask with."""

    salted: tuple[tuple[bytes, tuple[Remembered, ...]], ...]  # (salt, forms) per record
    # width -> (anchor checksum -> [(salt, form)]): built once, read per write
    _by_width: dict[int, dict[int, list[tuple[bytes, Remembered]]]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    _tables: dict[int, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        for salt, forms in self.salted:
            for f in forms:
                self._by_width.setdefault(f.anchor_len, {}).setdefault(f.anchor_sum, []).append((salt, f))

    def _table(self, width: int) -> Any:
        """The lookup table of this width's checksums (low bits), made on first use."""
        if width not in self._tables:
            import numpy as np

            table = np.zeros(1 << _TABLE_BITS, dtype=bool)
            table[[key & ((1 << _TABLE_BITS) - 1) for key in self._by_width[width]]] = True
            self._tables[width] = table
        return self._tables[width]

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        for width, sums in self._by_width.items():
            for at in _candidates(data, width, self._table(width)):
                for salt, f in sums.get(checksum(data[at:at + width]), ()):
                    end, start = at + width, at + width - f.length
                    if (start >= 0 and _digest(salt, data[at:end]) == f.anchor_sha
                            and _digest(salt, data[start:end]) == f.sha):
                        found.append((start, end))
        return _merged(found)

    def bytes(self, data: bytes, mask: bytes) -> bytes:
        spans = self.spans(data) if data else []
        if not spans:
            return data
        parts, at = [], 0
        for start, end in spans:
            parts += [data[at:start], mask]
            at = end
        parts.append(data[at:])
        return b"".join(parts)

    def text(self, text: str, mask: str) -> str:
        data = text.encode("utf-8", errors="surrogatepass")
        masked = self.bytes(data, mask.encode())
        return text if masked is data else masked.decode("utf-8", errors="replace")


def _candidates(data: bytes, width: int, table: Any) -> list[int]:
    """Start offsets of the `width`-byte windows whose checksum's low bits are marked in
    `table` (a few in a million windows by chance); their full checksum and hashes are checked
    by the caller. One chunk at a time, so a large write costs bounded memory."""
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
        hits += (base + np.flatnonzero(table[window])).tolist()
    return hits


@functools.cache
def _weights_array() -> Any:
    import numpy as np

    return np.array(_WEIGHTS, dtype=np.uint32)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# ------------------------------------------------------------------ the record in iteration.json


def new_record(values: Iterable[str], previous: Any = None) -> dict[str, Any]:
    """The record for iteration.json: the previous one's forms (a resumed run may have had
    other variables set) and these values', under one salt (the previous one's, if any)."""
    old = parse_record(previous)
    salt = old[0] if old else secrets.token_bytes(16)
    forms = {f.sha: f for f in (old[1] if old else ())}
    forms.update({f.sha: f for f in remember(values, salt)})
    return {"scheme": SCHEME, "salt": salt.hex(), "anchor": ANCHOR,
            "forms": [[f.length, f.anchor_len, f.anchor_sum, f.anchor_sha, f.sha]
                      for f in sorted(forms.values(), key=lambda f: f.sha)]}


def parse_record(data: Any) -> tuple[bytes, tuple[Remembered, ...]] | None:
    """(salt, forms) from a record, None when absent or not in this scheme. Entries of the wrong
    shape are skipped: the record only ever adds masking."""
    if not isinstance(data, Mapping) or data.get("scheme") != SCHEME or data.get("anchor") != ANCHOR:
        return None
    try:
        salt = bytes.fromhex(str(data.get("salt")))
    except ValueError:
        return None
    entries = data.get("forms")
    forms = []
    for entry in entries if isinstance(entries, list) else []:
        if (isinstance(entry, list) and len(entry) == 5 and all(isinstance(x, int) for x in entry[:3])
                and all(isinstance(x, str) for x in entry[3:]) and 0 < entry[1] <= min(entry[0], ANCHOR)):
            forms.append(Remembered(*entry))
    return (salt, tuple(forms)) if forms else None


__all__ = ["ANCHOR", "SCHEME", "HashedSecrets", "Remembered", "checksum", "new_record", "parse_record", "remember"]
