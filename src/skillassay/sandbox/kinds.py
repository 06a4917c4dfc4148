"""The built-in sandboxes as plugins (entry-point group `skillassay.sandboxes`): each says
whether it can run here and turns a trial's argv into the argv that runs it confined. `auto`
is not a plugin: confine.resolve picks bwrap where it works, else none with a warning."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from skillassay.errors import InputError
from skillassay.sandbox import bwrap, docker
from skillassay.sandbox.spec import SandboxSpec


class Unconfined:
    """`none`: the argv as it is (the run warns once when auto fell back to it)."""

    @staticmethod
    def check(spec: SandboxSpec, probe: Sequence[str] | None) -> SandboxSpec:
        return replace(spec, chosen=spec.chosen or "asked for")

    @staticmethod
    @contextlib.contextmanager
    def wrap(spec: SandboxSpec, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             readonly: Sequence[Path], env: Mapping[str, str]) -> Iterator[list[str]]:
        yield list(argv)


class Bubblewrap:
    """`bwrap`: the host read-only, only the trial's folders writable (sandbox/bwrap.py)."""

    @staticmethod
    def check(spec: SandboxSpec, probe: Sequence[str] | None) -> SandboxSpec:
        why = bwrap.works()
        if why is not None:
            raise InputError.one("--sandbox", "bwrap", f"cannot sandbox here: {why}")
        return replace(spec, chosen=spec.chosen or "asked for")

    @staticmethod
    @contextlib.contextmanager
    def wrap(spec: SandboxSpec, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             readonly: Sequence[Path], env: Mapping[str, str]) -> Iterator[list[str]]:
        yield bwrap.bwrap_argv(argv, cwd=cwd, writable=writable, readonly=readonly, env=env)


class Docker:
    """`docker`: a container of a locally built image, removed after (sandbox/docker.py)."""

    @staticmethod
    def check(spec: SandboxSpec, probe: Sequence[str] | None) -> SandboxSpec:
        if spec.digest is not None:  # resolved before (a Ray node gets the driver's spec)
            return spec
        missing, digest = docker.preflight(spec, probe)
        if missing:
            raise InputError.one("--sandbox", "docker", f"cannot sandbox here: {missing}")
        return replace(spec, digest=digest, chosen=spec.chosen or "asked for")

    @staticmethod
    @contextlib.contextmanager
    def wrap(spec: SandboxSpec, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             readonly: Sequence[Path], env: Mapping[str, str]) -> Iterator[list[str]]:
        name = docker.container_name()
        try:
            yield docker.docker_argv(argv, spec=spec, name=name, cwd=cwd, writable=writable,
                                     readonly=readonly, env=env)
        finally:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(docker.remove_argv(name), capture_output=True, timeout=60,
                               stdin=subprocess.DEVNULL)
