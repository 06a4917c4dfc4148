"""Secrets remembered per iteration as salted hashes, so commands run later (`view --static`,
`report`, `grade`) mask them even when the variable that held them is no longer set.

At run time the redactor knows the values (the environment, `-o env`); an agent can still
write one into outputs/, which is its own work and kept as it is, and which the static page
embeds. Storing the values would defeat the point, so iteration.json keeps, for every form of
every value (as spelled, JSON-escaped, base64, hex: store/secret_forms.py), its length and a
salted SHA-256, plus the same for its last ANCHOR bytes with a 28-bit checksum of them (sum
and position-weighted sum of the bytes). Masking slides a window of the anchor's length over
the text with numpy (cumulative sums: a few ms a megabyte), hashes only the windows whose
checksum matches, and masks the form that ends there when its own hash matches.

What the record reveals: nothing that a salted hash of the value does not (a value weak
enough to guess is found by guessing either way), plus 28 bits of checksum over 16 bytes.
A value split across a line break cannot be found from hashes: it is masked only while the
value itself is known (at run time, or with the variable set)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where masking runs: every command imports this module
    import numpy as np

SCHEME = "salted-sha256-anchor-v1"
ANCHOR = 16  # bytes: the window slid over text; shorter forms are their own anchor
_CHUNK = 1 << 20  # bytes per numpy pass (bounded memory on a large write)


def _digest(salt: bytes, data: bytes) -> str:
    return hashlib.sha256(salt + data).hexdigest()


def checksum(data: bytes) -> int:
    """Sum of the bytes and sum of byte x position, packed: what the numpy window computes."""
    total = sum(data)
    weighted = sum(b * i for i, b in enumerate(data))
    return (total << 16) | weighted


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
            for form in group.forms():
                data = form.encode("utf-8")
                anchor = data[-ANCHOR:]
                out[data] = Remembered(len(data), len(anchor), checksum(anchor), _digest(salt, anchor),
                                       _digest(salt, data))
    return list(out.values())


@dataclass(frozen=True)
class HashedSecrets:
    """The remembered forms of one or more iterations, ready to mask with."""

    salted: tuple[tuple[bytes, tuple[Remembered, ...]], ...]  # (salt, forms) per record

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        import numpy as np

        found: list[tuple[int, int]] = []
        view = np.frombuffer(data, dtype=np.uint8)
        for salt, forms in self.salted:
            by_len: dict[int, dict[int, list[Remembered]]] = {}
            for f in forms:
                by_len.setdefault(f.anchor_len, {}).setdefault(f.anchor_sum, []).append(f)
            for width, sums in by_len.items():
                for at in _windows(view, width, np.fromiter(sums, dtype=np.int64)):
                    for f in sums[_window_sum(data[at:at + width])]:
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


def _window_sum(window: bytes) -> int:
    return checksum(window)


def _windows(view: np.ndarray, width: int, wanted: np.ndarray) -> list[int]:
    """Start offsets of the `width`-byte windows whose checksum is in `wanted`."""
    import numpy as np

    hits: list[int] = []
    n = len(view)
    for base in range(0, max(n - width + 1, 0), _CHUNK):
        part = view[base:base + _CHUNK + width - 1].astype(np.int64)
        if len(part) < width:
            break
        pos = np.arange(len(part), dtype=np.int64)
        c = np.concatenate(([0], np.cumsum(part)))
        w = np.concatenate(([0], np.cumsum(part * pos)))
        sums = c[width:] - c[:-width]
        weighted = (w[width:] - w[:-width]) - pos[:len(sums)] * sums
        keys = (sums << 16) | weighted
        hits += (base + np.nonzero(np.isin(keys, wanted))[0]).tolist()
    return hits


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
    forms = []
    for entry in data.get("forms") or []:
        if (isinstance(entry, list) and len(entry) == 5 and all(isinstance(x, int) for x in entry[:3])
                and all(isinstance(x, str) for x in entry[3:]) and 0 < entry[1] <= min(entry[0], ANCHOR)):
            forms.append(Remembered(*entry))
    return (salt, tuple(forms)) if forms else None


__all__ = ["ANCHOR", "SCHEME", "HashedSecrets", "Remembered", "checksum", "new_record", "parse_record", "remember"]
