"""The judge's quote, checked by the program: a verdict counts only when the text the judge
quotes really occurs in what the run produced (its answer, output files, transcript).

A small model asked for evidence will write "true", or quote the task back, and pass a
Fahrenheit answer for "gives the temperature in Celsius"; a verdict whose quote is not in
the output is an opinion, not a grading, so it is left ungraded. The comparison forgives what
copying text changes without changing what it says: Unicode compatibility forms, curly
quotes, case, runs of whitespace, the quote marks the judge wraps its quote in, and "..."
where the judge left part of a passage out (the parts must then occur in order).

Each part must be a span of real length on its own (MIN_QUOTE_CHARS, or the whole source
when that is shorter): "o ... n ... w" occurs in order in almost any text, and a judge (or an
output that steers it) could stitch any word out of letters."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# "ok" or "F" alone proves nothing, and short pieces stitched with "..." prove anything. A quote
# of real length carries its context ("port 443", "is 21°C"); a shorter one only counts as the
# whole of a source that short.
MIN_QUOTE_CHARS = 8
_SHORTEST_WHOLE = 3  # a whole answer of "443" is a quote; "1" or "ok" never is
_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.+|…)\s*")
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00ab": '"', "\u00bb": '"'})
_WRAPPERS = "\"'` "


def normalise(text: str) -> str:
    """The form both sides are compared in (NFKC also turns "…" into "...")."""
    text = unicodedata.normalize("NFKC", text).translate(_CURLY)
    return _SPACE.sub(" ", text).strip().casefold()


def quote_parts(quote: str) -> list[str]:
    """The passages a quote claims, in order: wrappers stripped, split at ellipses."""
    text = normalise(quote).strip(_WRAPPERS)
    return [p for part in _ELLIPSIS.split(text) if (p := part.strip(_WRAPPERS))]


def _occurs_in_order(parts: list[str], text: str) -> bool:
    """Every part, each long enough by itself, found in `text` in this order."""
    shortest = min(MIN_QUOTE_CHARS, len(text))
    if not parts or any(len(part) < shortest for part in parts):
        return False
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


@dataclass(frozen=True)
class Sources:
    """What a quote may come from, as (label, normalised text) pairs, labels as a reader
    finds them in the run folder (answer.md, outputs/<file>, transcript.md). A transcript
    also holds the task as the user's message, so a quote of the task's words found only in
    an `echoing` source is the judge quoting the task back, not evidence."""

    texts: tuple[tuple[str, str], ...]
    task: str = ""
    echoing: frozenset[str] = frozenset()

    @classmethod
    def of(cls, labelled: Iterable[tuple[str, str | None]], task: str = "",
           echoing: Iterable[str] = ()) -> Sources:
        return cls(tuple((label, normalise(text)) for label, text in labelled if text and text.strip()),
                   normalise(task), frozenset(echoing))

    def find(self, quote: str) -> str | None:
        """Where the quote occurs (the first source holding all its parts in order), or None;
        None too for a quote too short to prove anything."""
        if too_short(quote):
            return None
        parts = quote_parts(quote)
        in_task = self.quotes_task(quote)
        return next((label for label, text in self.texts
                     if not (in_task and label in self.echoing) and _occurs_in_order(parts, text)), None)

    def quotes_task(self, quote: str) -> bool:
        return bool(self.task) and _occurs_in_order(quote_parts(quote), self.task)


def too_short(quote: str) -> bool:
    """No part of it long enough to show anything even in a short output: every part under 3
    characters (a part of 3 to 7 can still be the whole of a short answer, see _occurs_in_order)."""
    parts = quote_parts(quote)
    return not parts or all(len(p) < _SHORTEST_WHOLE for p in parts)
