"""Checks for the `-o KEY=VALUE` options executors read (exit 2 naming the option when one is
wrong), shared so each executor states its options' rules in one line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillassay.errors import InputError


def positive_int_option(options: Mapping[str, Any], key: str) -> int | None:
    """An `-o KEY=N` option that must be a whole number >= 1; None when not given."""
    if key not in options:
        return None
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, int | str):
        value = None
    try:
        number = int(value) if value is not None else 0
    except ValueError:
        number = 0
    if number < 1:
        raise InputError.one("-o", f"{key}={options[key]}", f"{key} must be a whole number >= 1")
    return number
