"""Fences around what the judge grades, so graded text cannot pose as the prompt's own parts.

The judge's prompt is markdown: its sections (`## Expectations to grade`) are what the judge
acts on. An agent's output pasted in plainly can open a section of its own, with its own
expectations or grading notes, and a judge that follows them passes wrong answers (the quote
check does not help: the injected note names its own quote). So every piece of graded material
(the task, the answer, output files, transcript, notes) goes between a line `<data-N>` and a
line `</data-N>`, where N is a random nonce drawn per prompt and checked to occur in none of
the material: the content cannot close its fence early or open a new one, because it cannot
know N. The system prompt names the fence and tells the judge that what is inside is data."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass

NONCE_BYTES = 8  # 16 hex digits: guessing one is out of reach, and a short prompt stays short


@dataclass(frozen=True)
class Fence:
    nonce: str

    @property
    def open(self) -> str:
        return f"<data-{self.nonce}>"

    @property
    def close(self) -> str:
        return f"</data-{self.nonce}>"


def fence_for(contents: Iterable[str], draw: Callable[[int], str] = secrets.token_hex) -> Fence:
    """A fence whose nonce occurs in none of `contents` (drawn again on the astronomically
    rare collision), so no text inside can forge its end."""
    texts = [c for c in contents if c]
    while True:
        nonce = draw(NONCE_BYTES)
        if nonce and not any(nonce in text for text in texts):
            return Fence(nonce)


__all__ = ["Fence", "fence_for"]
