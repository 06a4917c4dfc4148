"""Assertion plugins, discovered through the `skillassay.assertions` entry-point group."""

from __future__ import annotations

from functools import cache

from skillassay import plugins
from skillassay.assertions.base import (
    AssertionConfigError,
    AssertionPlugin,
    RunView,
    Verdict,
)
from skillassay.models import Assertion

GROUP = "skillassay.assertions"


@cache
def registry() -> dict[str, type[AssertionPlugin]]:
    return {ep.name: ep.load() for ep in plugins.group(GROUP)}


def build(spec: Assertion) -> AssertionPlugin:
    """Instantiate the plugin for spec.type; AssertionConfigError when unknown or misconfigured."""
    cls = registry().get(spec.type)
    if cls is None:
        from skillassay.errors import did_you_mean

        known = sorted(registry())
        raise AssertionConfigError(f"unknown assertion type '{spec.type}'{did_you_mean(spec.type, known)} "
                                   f"(known: {', '.join(known)})")
    return cls(spec)


__all__ = ["AssertionConfigError", "AssertionPlugin", "RunView", "Verdict", "build", "registry"]
