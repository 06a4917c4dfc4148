"""The one sandbox layer every executor that runs a program goes through: `confined()` turns a
trial's argv into the argv of the chosen sandbox (and takes a docker container away after),
`resolve()` decides once per run what `auto` means here and checks what was asked for."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillassay import plugins
from skillassay.errors import InputError
from skillassay.sandbox import bwrap
from skillassay.sandbox.spec import SandboxSpec

WARNING = ("no sandbox: {why}. Trials run as you, with your files, your home folder and your API keys "
           "in reach of the skill's scripts; install bubblewrap (apt-get install bubblewrap) or pass "
           "--sandbox docker to confine them, or --sandbox none to silence this")


@dataclass(frozen=True)
class Resolved:
    spec: SandboxSpec
    warning: str | None = None  # auto fell back to none: say it once, before the trials


def resolve(spec: SandboxSpec, probe: Sequence[str] | None = None) -> Resolved:
    """auto -> bwrap where it works, else none with a warning; a kind asked for (a
    `skillassay.sandboxes` plugin) and not usable here -> exit 2 saying what is missing (a run
    must not silently go unconfined)."""
    if spec.kind != "auto":
        return Resolved(sandbox(spec.kind).check(spec, probe))
    why = bwrap.works()
    if why is None:
        return Resolved(replace(spec, kind="bwrap", chosen=spec.chosen or "auto: bwrap works here"))
    return Resolved(replace(spec, kind="none", chosen=f"auto: {why}"), WARNING.format(why=why))


def sandbox(kind: str) -> Any:
    """The sandbox plugin of this kind (plugins.py): `check(spec, probe)` and `wrap(...)`."""
    if plugins.find("sandboxes", kind) is None:
        raise InputError.one("--sandbox", kind, plugins.unknown("sandboxes", kind))
    return plugins.load("sandboxes", kind)


def resolved(spec: SandboxSpec) -> SandboxSpec:
    """The spec a trial runs under: `auto` is decided here when no run resolved it first (a
    trigger eval, a test building an executor by hand); the probe is cached per process."""
    return spec if spec.kind != "auto" else resolve(spec).spec


def named_paths(argv: Sequence[str]) -> list[Path]:
    """Folders of the existing absolute paths named on a command line (a script, its data):
    the command could not run without them, so they stay visible, read-only."""
    out: list[Path] = []
    for arg in argv:
        if os.path.isabs(arg) and os.path.exists(arg) and arg != "/":
            folder = Path(arg) if os.path.isdir(arg) else Path(arg).parent
            if folder != Path("/") and folder not in out:
                out.append(folder)
    return out


@contextlib.contextmanager
def confined(spec: SandboxSpec, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             readonly: Sequence[Path] = (), env: Mapping[str, str]) -> Iterator[list[str]]:
    """The argv that runs `argv` in the sandbox, `cwd` and `writable` the only folders it may
    change, `readonly` visible but unchangeable. The caller runs it with `env`."""
    spec = resolved(spec)
    with sandbox(spec.kind).wrap(spec, argv, cwd=cwd, writable=writable, readonly=readonly, env=env) as wrapped:
        yield wrapped
