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


def registered_name(kind: str, cls: type) -> str | None:
    """The name `cls` is registered under in `kind`, read from the entry points' values without
    importing any plugin (a backend instance knows its class, not the name it was chosen by)."""
    value = f"{cls.__module__}:{cls.__qualname__}"
    return next((name for name in plugins.names(kind) if (found := plugins.find(kind, name)) and found.value == value),
                None)


def versions(executor: str, assertion_types: Iterable[str], judge: str | None, *,
             sandbox: str | None = None, backend: str | None = None) -> dict[str, Any]:
    """iteration.json's `versions`: sandbox and backend only when known (additive keys)."""
    return {
        "skillassay": __version__,
        "python": platform.python_version(),
        "executor": plugin_version("executors", executor),
        "assertions": [plugin_version("assertions", t) for t in sorted(set(assertion_types))],
        "judge": plugin_version("judges", judge) if judge else None,
        **({"sandbox": plugin_version("sandboxes", sandbox)} if sandbox else {}),
        **({"backend": plugin_version("backends", backend)} if backend else {}),
    }
