"""How hard a remembered hash is to guess, so the record in iteration.json never gives a
value away (store/secret_hashes.py, secret_fragments.py).

A salted hash hides a value only as well as the value resists guessing, and each entry of the
record also holds a 24-bit checksum that is a sum over its bytes: a search can match halves of
a guess against each other on it, which takes about 24 bits off the work. So an entry is
written only when the part of the value it covers is worth more than GUESS_BITS: 64 bits of
work left after the checksum's 24. An 8-letter password (38 bits) or a hex token's 16-byte
block (64 bits) is not remembered: it is masked in everything the run writes, and later only
while its variable is set; the record counts such values so `view --static` can say so.

The estimate is deliberately simple and errs high only for values that are not random
(`aaaaaaaa…`), which nobody keeps in a secret variable: the characters' classes present
(lowercase, uppercase, digits, ASCII punctuation, anything else) give an alphabet, and each
character is worth log2 of it."""

from __future__ import annotations

import math
import string

GUESS_BITS = 88.0  # 2**64 salted hashes left after a 24-bit checksum narrows the search
_CLASSES = ((set(string.ascii_lowercase), 26), (set(string.ascii_uppercase), 26), (set(string.digits), 10),
            (set(string.punctuation + " "), 33))
_OTHER = 32  # a non-ASCII script's letters (Cyrillic 33, Greek 24, accented Latin about 30)


def value_bits(value: str) -> float:
    """The guessing cost of the whole value, in bits (module docstring)."""
    chars = set(value)
    alphabet = sum(size for members, size in _CLASSES if chars & members)
    alphabet += _OTHER if any(ord(c) > 127 for c in chars) else 0
    return len(value) * math.log2(alphabet) if alphabet > 1 else 0.0


def strong_enough(value: str, covered: float = 1.0) -> bool:
    """Whether an entry that hashes `covered` (a fraction, by bytes) of the value is safe to
    write: the part it covers is worth at least GUESS_BITS."""
    return value_bits(value) * min(covered, 1.0) >= GUESS_BITS


__all__ = ["GUESS_BITS", "strong_enough", "value_bits"]
