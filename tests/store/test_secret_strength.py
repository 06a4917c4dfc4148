"""store/secret_strength.py: which values a record may hold a hash of."""

from __future__ import annotations

import pytest

from skillassay.store.secret_strength import GUESS_BITS, strong_enough, value_bits


@pytest.mark.parametrize(("value", "strong"), [
    ("pw12345678", False),  # 10 lowercase and digits: 52 bits
    ("Kx7#pQ2!vM9&zR4$", True),  # 16 of all four ASCII classes: 105 bits
    ("sk-ant-api03-" + "Qw7Zx81kQ0pLm2nVb7cXz9aQwTy4Rt" * 3, True),
    ("", False), ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", True),  # the estimate's stated blind spot
])
def test_a_value_is_strong_when_guessing_it_costs_guess_bits(value: str, strong: bool) -> None:
    assert strong_enough(value) is strong
    assert (value_bits(value) >= GUESS_BITS) is strong


def test_an_entry_covering_part_of_a_value_is_worth_that_part() -> None:
    key = "Qw7Zx81kQ0pLm2nVb7cXz9aQwTy4Rt" * 2  # 60 characters, 357 bits
    assert strong_enough(key, 32 / 60) and not strong_enough(key, 10 / 60)
