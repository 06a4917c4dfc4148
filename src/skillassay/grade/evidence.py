"""The judge's quote, checked by the program: a verdict counts only when the text the judge
quotes really occurs in what the run produced (its answer, output files, transcript).

A small model asked for evidence will write "true", or quote the task back, and pass a
Fahrenheit answer for "gives the temperature in Celsius"; a verdict whose quote is not in
the output is an opinion, not a grading, so it is left ungraded. The comparison forgives what
copying text changes without changing what it says: Unicode compatibility forms, curly
quotes, case, runs of whitespace, the quote marks the judge wraps its quote in, and "..."
where the judge left part of a passage out (the parts must then occur in order)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# "ok" or "F" alone proves nothing; the shortest useful quotes are numbers like "443" or "21°C".
MIN_QUOTE_CHARS = 3
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
    return sum(len(p) for p in quote_parts(quote)) < MIN_QUOTE_CHARS
