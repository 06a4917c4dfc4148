"""The forms a known secret value takes when an agent re-encodes it: base64 (standard and
URL-safe, with and without padding, and at each of the three byte alignments inside a longer
blob), hex, JSON string escapes, the value split in two across a line break; and pieces of
any of them (fragment_forms), as a key cut in parts or base64 wrapped over lines.

A literal search finds a value only as spelled; an agent asked to "print the key" may print
it base64-encoded (`echo $KEY | base64`, wrapped at 76 columns) or in pieces, and then
grading.json and benchmark.json carried it. Each encoding is searched for as a literal (memchr-speed); forms
that contain a shorter one (the full base64 contains its aligned core) are tried only when
that one occurs, so the common text pays one scan per independent form."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

_STD_TO_URL = str.maketrans("+/", "-_")
# What may stand between the two halves of a value split across lines: spaces, a line break
# (raw, or as JSON spells it inside a string), spaces. Pieces of FRAGMENT characters are found
# however they are separated (fragment_forms); this finds a value cut in two whose shorter
# half is shorter than that, as long as a line break is all that separates them.
_BREAK = r"[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*"
# Characters: the shortest piece of a secret's form masked wherever it appears, however the
# pieces are separated. 16 base64 characters carry 12 bytes (96 bits of a random key's
# characters): a run that long of a known value's form does not turn up in other text by
# chance, while a piece that short is no longer worth much to whoever reads it.
FRAGMENT = 16


def json_spellings(value: str) -> set[str]:
    """A value as it appears in plain text and inside a JSON string (quotes, backslashes and
    non-ASCII escaped), so a file written by any of our JSON encoders is covered."""
    return {value, *(json.dumps(value, ensure_ascii=a)[1:-1] for a in (False, True))}


def base64_core(data: bytes, offset: int) -> str:
    """The characters of the standard base64 of `data` placed `offset` (0-2) bytes into a
    longer blob that depend on `data` alone: what any blob holding `data` at that alignment
    contains, whatever comes before or after."""
    enc = base64.b64encode(b"\0" * offset + data).decode("ascii")
    start = -(-8 * offset // 6)  # the first character whose 6 bits all come from data
    end = 8 * (offset + len(data)) // 6  # past the last one
    return enc[start:end]


@dataclass(frozen=True)
class FormGroup:
    """Forms masked (longest first) when `probe`, a part of every one of them, occurs: one
    scan of the text for the common case, where it does not."""

    probe: str
    forms: tuple[str, ...]


def _group(forms: Iterable[str], min_len: int) -> list[FormGroup]:
    """One group when the forms share a part of at least `min_len` characters (a base64 core
    in both alphabets shares its run without + / - _), else one group per form."""
    ordered = tuple(sorted(set(forms), key=len, reverse=True))
    shortest = ordered[-1]
    shared = max(re.split(r"[+/_-]", shortest), key=len)
    if len(ordered) > 1 and len(shared) >= min_len and all(shared in f for f in ordered):
        return [FormGroup(shared, ordered)]
    return [FormGroup(f, (f,)) for f in ordered]


def form_groups(value: str, min_len: int) -> list[FormGroup]:
    """Every form of `value` to mask, grouped by the literal each is found through."""
    raw = value.encode("utf-8")
    groups = [FormGroup(s, (s,)) for s in json_spellings(value)]
    full = base64.b64encode(raw).decode("ascii")
    fulls = {full, full.rstrip("=")}
    for offset in range(3):
        core = base64_core(raw, offset)
        forms = {core, core.translate(_STD_TO_URL)}
        if offset == 0:  # the value alone: its whole encoding, padded or not, in both alphabets
            forms |= fulls | {f.translate(_STD_TO_URL) for f in fulls}
        groups += _group((f for f in forms if len(f) >= min_len), min_len) if len(core) >= min_len else []
    groups += [FormGroup(h, (h,)) for h in (raw.hex(), raw.hex().upper())]
    seen: set[tuple[str, ...]] = set()
    unique = []
    for g in groups:
        if len(g.probe) >= min_len and g.forms not in seen:
            seen.add(g.forms)
            unique.append(g)
    return unique


@dataclass(frozen=True)
class SplitForm:
    """The value cut in two across a line break. Either half is at least half the value, so a
    text holding neither `head` nor `tail` (the value's two halves) cannot hold a split: the
    regex runs only when one of them occurs."""

    head: str
    tail: str
    bytes_pattern: re.Pattern[bytes]


def split_form(value: str) -> SplitForm:
    half = len(value) // 2
    pattern = "|".join(f"{re.escape(value[:k])}{_BREAK}{re.escape(value[k:])}" for k in range(1, len(value)))
    return SplitForm(value[:half], value[half:], re.compile(pattern.encode("utf-8")))


def all_forms(values: Iterable[str], min_len: int) -> tuple[list[FormGroup], list[SplitForm]]:
    """The groups, those with the longest forms first (a form is never masked inside a longer
    one before that one is), and the split forms, of all values."""
    groups: dict[tuple[str, ...], FormGroup] = {}
    splits = []
    for value in values:
        for g in form_groups(value, min_len):
            groups.setdefault(g.forms, g)
        splits.append(split_form(value))
    return sorted(groups.values(), key=lambda g: len(g.forms[0]), reverse=True), splits


def fragment_forms(value: str) -> set[str]:
    """The forms whose every run of FRAGMENT characters is masked wherever it appears: the
    value as spelled and JSON-escaped, its whole base64 and each aligned core in both
    alphabets, its hex in both cases. A line of wrapped base64 or a piece of a key cut up is
    such a run, whatever separates the pieces. The same forms as form_groups', ungrouped."""
    return {form for group in form_groups(value, 1) for form in group.forms}


__all__ = ["FRAGMENT", "FormGroup", "SplitForm", "all_forms", "base64_core", "form_groups", "fragment_forms", "json_spellings",
           "split_form"]
