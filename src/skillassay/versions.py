"""What produced a result: skillassay's version and, for each plugin an iteration used, the
distribution that provided it and its version, recorded in iteration.json so a figure can be
traced to the code that made it (a changed assertion plugin can change a pass rate)."""

from __future__ import annotations

import platform
from collections.abc import Iterable
from typing import Any

from skillassay import __version__, plugins


def plugin_version(kind: str, name: str) -> dict[str, Any]:
    """{name, distribution, version} of the plugin the registry resolves `name` to (the one a
    run loads); distribution and version are null for a name no entry point registers."""
    found = plugins.find(kind, name)
    return {"name": name, "distribution": found.distribution if found else None,
            "version": found.version if found else None}


def versions(executor: str, assertion_types: Iterable[str], judge: str | None) -> dict[str, Any]:
    """iteration.json's `versions`."""
    return {
        "skillassay": __version__,
        "python": platform.python_version(),
        "executor": plugin_version("executors", executor),
        "assertions": [plugin_version("assertions", t) for t in sorted(set(assertion_types))],
        "judge": plugin_version("judges", judge) if judge else None,
    }
