"""executors.options: the `-o KEY=N` check every executor's whole-number options go through."""

from __future__ import annotations

from typing import Any

import pytest

from skillassay.errors import InputError
from skillassay.executors.options import positive_int_option


def test_an_option_not_given_is_none() -> None:
    assert positive_int_option({"other": 3}, "n_threads") is None


@pytest.mark.parametrize(("value", "number"), [(3, 3), ("12", 12), (1, 1)])
def test_a_whole_number_from_the_command_line_or_a_config_is_read(value: Any, number: int) -> None:
    assert positive_int_option({"n_threads": value}, "n_threads") == number


@pytest.mark.parametrize("value", [0, -2, "0", "x", "1.5", 1.5, True, None, [], {}])
def test_anything_else_is_bad_input_naming_the_option(value: Any) -> None:
    with pytest.raises(InputError) as caught:
        positive_int_option({"first_answer_seconds": value}, "first_answer_seconds")
    assert "first_answer_seconds" in str(caught.value)
