"""Assertion plugins, found through the plugin registry (the `skillassay.assertions` entry-point
group, built-ins included)."""

from __future__ import annotations

from skillassay import plugins
from skillassay.assertions.base import (
    AssertionConfigError,
    AssertionPlugin,
    RunView,
    Verdict,
)
from skillassay.models import Assertion

KIND = "assertions"


def registry() -> dict[str, type[AssertionPlugin]]:
    """type name -> plugin class, every registered assertion imported."""
    return {name: plugins.load(KIND, name) for name in plugins.names(KIND)}


def build(spec: Assertion) -> AssertionPlugin:
    """Instantiate the plugin for spec.type; AssertionConfigError when unknown or misconfigured."""
    if plugins.find(KIND, spec.type) is None:
        from skillassay.errors import did_you_mean

        known = plugins.names(KIND)
        raise AssertionConfigError(f"unknown assertion type '{spec.type}'{did_you_mean(spec.type, known)} "
                                   f"(known: {', '.join(known)})")
    cls: type[AssertionPlugin] = plugins.load(KIND, spec.type)
    return cls(spec)


__all__ = ["AssertionConfigError", "AssertionPlugin", "RunView", "Verdict", "build", "registry"]
