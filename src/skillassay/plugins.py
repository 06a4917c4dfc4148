"""The one plugin registry: executors, assertions, judges, proposers, backends and sandboxes are
all found through entry-point groups (`skillassay.<kind>`), and skillassay's own built-ins are
registered there the same way as a third-party package's (pyproject.toml).

Why one: two registries that disagreed (one took the first of two plugins with one name, the
other the last, both silently) made a plugin's behaviour depend on install order. Here a name
two distributions both register is an InputError naming both (exit 2), and
SKILLASSAY_PLUGINS (a comma list of distribution names) restricts which distributions'
plugins load at all: the test suite sets it to `skillassay`, so a package installed beside it
cannot change what the tests measure.

The installed entry points are read once per process: finding them opens every installed
distribution's metadata (about 170 packages here, 25-50 ms). Nothing here imports a stage;
a plugin's module is imported only by `load`."""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Any

from skillassay.errors import InputError

KINDS = ("executors", "assertions", "judges", "proposers", "backends", "sandboxes")
SINGULAR = {"executors": "executor", "assertions": "assertion type", "judges": "judge", "proposers": "proposer",
            "backends": "backend", "sandboxes": "sandbox"}
ALLOW_ENV = "SKILLASSAY_PLUGINS"


def group_of(kind: str) -> str:
    """The entry-point group of a kind: `skillassay.judges`."""
    return f"skillassay.{kind}"


@dataclass(frozen=True)
class Plugin:
    """One registered plugin, described without importing it (listing stays quick)."""

    kind: str
    name: str
    value: str  # "module:attr" (its extras apart)
    distribution: str
    version: str
    extras: tuple[str, ...]  # what `pip install 'dist[EXTRA]'` adds for it to load
    entry_point: EntryPoint


@cache
def _installed() -> EntryPoints:
    found = entry_points()
    if isinstance(found, EntryPoints):  # Python 3.12
        return found
    with warnings.catch_warnings():  # 3.11: a deprecated mapping of group -> EntryPoints
        warnings.simplefilter("ignore", DeprecationWarning)
        return EntryPoints(ep for eps in found.values() for ep in eps)


def rescan() -> None:
    """Forget the scan (a package was installed, or sys.path changed, in this process)."""
    _installed.cache_clear()
    _index.cache_clear()
    _load.cache_clear()


def group(name: str) -> EntryPoints:
    """entry_points(group=name), from the one scan, unfiltered."""
    return _installed().select(group=name)


def _normal(name: str) -> str:
    """PEP 503 normalisation: `My_Plugin` and `my-plugin` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_distributions() -> frozenset[str] | None:
    """The allow-list (normalised names), or None: every installed distribution may register."""
    raw = os.environ.get(ALLOW_ENV)
    if raw is None:
        return None
    return frozenset(_normal(part.strip()) for part in raw.split(",") if part.strip())


def _describe(kind: str, ep: EntryPoint, seen: dict[int, tuple[str, str]]) -> Plugin:
    dist = getattr(ep, "dist", None)
    if dist is None:
        named = ("(unknown distribution)", "")
    else:  # one metadata read per distribution: skillassay's carries its whole README
        named = seen.get(id(dist)) or seen.setdefault(id(dist), (dist.metadata["Name"], dist.version))
    return Plugin(kind, ep.name, f"{ep.module}:{ep.attr}", named[0], named[1], tuple(ep.extras), ep)


@cache
def _index(kind: str, allow: frozenset[str] | None) -> dict[str, Plugin] | InputError:
    found: dict[str, Plugin] = {}
    clashes: list[str] = []
    seen: dict[int, tuple[str, str]] = {}
    for ep in group(group_of(kind)):
        plugin = _describe(kind, ep, seen)
        if allow is not None and _normal(plugin.distribution) not in allow:
            continue
        other = found.get(plugin.name)
        if other is not None and _normal(other.distribution) != _normal(plugin.distribution):
            clashes.append(f"'{plugin.name}' is registered by both {other.distribution} {other.version} "
                           f"({other.value}) and {plugin.distribution} {plugin.version} ({plugin.value})")
            continue
        found.setdefault(plugin.name, plugin)
    if clashes:
        return InputError.one(f"entry points {group_of(kind)}", "",
                              "; ".join(clashes) + f": uninstall one, or name the distributions to load in {ALLOW_ENV}")
    if (allow is None or "skillassay" in allow) and not any(p.distribution == "skillassay" for p in found.values()):
        # Its own plugins are entry points too: metadata from before a kind was added (an
        # editable install of an older checkout) would otherwise read as "unknown judge".
        return InputError.one(f"entry points {group_of(kind)}", "",
                              "skillassay's installed metadata registers none of its own: it predates this code; "
                              "reinstall it (pip install -e . in the checkout)")
    return found


def registered(kind: str) -> dict[str, Plugin]:
    """name -> Plugin for one kind, allow-list applied; InputError (exit 2) on a name two
    distributions both register: silently taking either would depend on install order."""
    if kind not in KINDS:
        raise ValueError(f"unknown plugin kind {kind!r}; kinds: {', '.join(KINDS)}")
    index = _index(kind, allowed_distributions())
    if isinstance(index, InputError):
        raise index
    return index


def names(kind: str) -> list[str]:
    return sorted(registered(kind))


def find(kind: str, name: str) -> Plugin | None:
    return registered(kind).get(name)


def load(kind: str, name: str) -> Any:
    """The object the plugin's entry point names, imported now; KeyError when not registered.
    A ModuleNotFoundError propagates: the caller knows which option asked for it."""
    plugin = find(kind, name)
    if plugin is None:
        raise KeyError(name)
    return _load(plugin.entry_point)


@cache
def _load(ep: EntryPoint) -> Any:
    return ep.load()


def unknown(kind: str, name: str) -> str:
    """The message for a name no installed plugin of this kind has."""
    from skillassay.errors import did_you_mean

    known = names(kind)
    return f"unknown {SINGULAR[kind]}{did_you_mean(name, known)}; installed: {', '.join(known) or '(none)'}"


__all__ = ["ALLOW_ENV", "KINDS", "Plugin", "allowed_distributions", "find", "group", "group_of", "load", "names",
           "registered", "rescan", "unknown"]
