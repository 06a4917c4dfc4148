"""What an agent CLI's trial needs from the sandbox layer: the model API reached through a
metering proxy that holds the key (so the CLI, and every command it runs, sees a placeholder),
and the check that no folder above the trial hands the agent instructions or skills."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillassay.sandbox import MeteringProxy, SandboxSpec, scrubbed
from skillassay.sandbox.proxy import Allowance

# What Claude Code and Codex load from every folder above their cwd.
AGENT_FILES = (".claude", "CLAUDE.md", "AGENTS.md", ".agents")


def contaminating(folder: Path) -> list[Path]:
    """The agent files in `folder`'s parents (not in `folder` itself, where the with-skill arm
    installs its skill): any of them reaches both arms and voids the comparison."""
    found = []
    for parent in Path(folder).resolve().parents:
        found += [parent / name for name in AGENT_FILES if (parent / name).exists()]
    return found


def temp_contamination() -> str | None:
    """Why trials may not run unconfined under the temp folder (where agent CLIs' trials run),
    or None: checked before the first trial, since under `none` nothing hides those files."""
    found = contaminating(Path(tempfile.gettempdir()) / "trial")
    if not found:
        return None
    return (f"{', '.join(map(str, found))} would be loaded by the agent in both arms (agent CLIs read "
            "skills and instructions from every folder above the trial): remove it, set TMPDIR to a "
            "clean folder, or run with a sandbox (--sandbox bwrap or docker)")


@dataclass(frozen=True)
class ApiRoute:
    """How a CLI reaches its model API: the real base URL, the credential headers the proxy
    adds, the placeholders the CLI gets instead of the keys, and the variable that carries the
    base URL (None when it goes on the command line, as for Codex)."""

    upstream: str
    credentials: dict[str, str]
    placeholders: dict[str, str] = field(default_factory=dict)
    base_url_env: str | None = None


@contextlib.contextmanager
def agent_env(spec: SandboxSpec, env: Mapping[str, str], route: ApiRoute,
              allowance: Allowance | None = None) -> Iterator[tuple[dict[str, str], MeteringProxy | None]]:
    """(the CLI's environment, the proxy) for one trial. Confined: no secret in the
    environment, the API through a proxy that holds the key. Unconfined: `env` as it is."""
    if not spec.isolated:
        yield dict(env), None
        return
    with MeteringProxy(route.upstream, route.credentials, allowance=allowance) as proxy:
        keep = dict(route.placeholders)
        if route.base_url_env:
            keep[route.base_url_env] = proxy.url
        yield scrubbed(env, keep), proxy
