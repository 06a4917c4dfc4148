"""What produced a result: skillassay's version and, for each plugin an iteration used, the
distribution that provided it and its version, recorded in iteration.json so a figure can be
traced to the code that made it (a changed assertion plugin can change a pass rate)."""

from __future__ import annotations

import platform
from collections.abc import Iterable
from typing import Any

from skillassay import __version__, plugins

EXECUTORS = "skillassay.executors"
ASSERTIONS = "skillassay.assertions"


def plugin_version(group: str, name: str) -> dict[str, Any]:
    """{name, distribution, version} of the entry point `name` in `group` (the first one, as the
    registries load it); distribution and version are null for a plugin no entry point names."""
    for ep in plugins.group(group):
        if ep.name == name:
            dist = ep.dist
            return {"name": name, "distribution": dist.name if dist else None,
                    "version": dist.version if dist else None}
    return {"name": name, "distribution": None, "version": None}


def versions(executor: str, assertion_types: Iterable[str], judge: str | None) -> dict[str, Any]:
    """iteration.json's `versions`."""
    return {
        "skillassay": __version__,
        "python": platform.python_version(),
        "executor": plugin_version(EXECUTORS, executor),
        "assertions": [plugin_version(ASSERTIONS, t) for t in sorted(set(assertion_types))],
        # the judges are built in (grade/judge.py): skillassay's version is theirs
        "judge": {"name": judge, "distribution": "skillassay", "version": __version__} if judge else None,
    }
