"""The entry points of the installed packages, read once per process: finding them means
opening every installed distribution's metadata (about 170 packages here, 25-50 ms), and both
the executor and the assertion plugins are looked up on every `run`."""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoints, entry_points


@cache
def _installed() -> EntryPoints:
    found = entry_points()
    # Python 3.11 returns a mapping of group -> EntryPoints (SelectableGroups); 3.12 EntryPoints.
    return found if isinstance(found, EntryPoints) else EntryPoints(ep for eps in found.values() for ep in eps)


def group(name: str) -> EntryPoints:
    """entry_points(group=name), from the one scan."""
    return _installed().select(group=name)
