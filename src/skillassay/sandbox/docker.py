"""Docker: one container per trial from a named image, the trial's folders mounted at the same
paths, CPU, memory and network as configured (resources change agent scores, so they are
recorded). The argv is pure; the preflight asks the daemon, the image and the agent's program
once, before any trial, and says what is missing."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from skillassay.sandbox.spec import DEFAULT_NETWORK, SandboxSpec

# Host variables that describe the host, not the trial: the image has its own.
_HOST_ONLY = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "_", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYENV_ROOT",
                        "PYENV_SHELL", "VIRTUAL_ENV", "TMPDIR", "DOCKER_HOST", "DOCKER_CONFIG"})


def container_name() -> str:
    return f"skillassay-{uuid.uuid4().hex[:16]}"


def docker_argv(argv: Sequence[str], *, spec: SandboxSpec, name: str, cwd: Path, writable: Sequence[Path],
                readonly: Sequence[Path], env: Mapping[str, str]) -> list[str]:
    """`docker run --rm` of `argv` in the image. Environment values go by name only (`-e NAME`,
    read from the docker client's own environment), so they never appear on a command line."""
    out = ["docker", "run", "--rm", "--name", name, "--network", spec.network or DEFAULT_NETWORK,
           "--security-opt", "no-new-privileges"]
    if spec.cpus:
        out += ["--cpus", str(spec.cpus)]
    if spec.memory:
        out += ["--memory", str(spec.memory)]
    if os.getuid() != 0:
        out += ["--user", f"{os.getuid()}:{os.getgid()}"]
    for folder in writable:
        out += ["-v", f"{folder}:{folder}"]
    for shown in [*spec.mounts, *map(str, readonly)]:
        out += ["-v", f"{shown}:{shown}:ro"]
    for key in sorted(env):
        if key not in _HOST_ONLY:
            out += ["-e", key]
    return [*out, "-w", str(cwd), str(spec.image), *argv]


def remove_argv(name: str) -> list[str]:
    """Killing the docker client does not stop its container: this does (idempotent)."""
    return ["docker", "rm", "-f", name]


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def preflight(spec: SandboxSpec, probe: Sequence[str] | None) -> tuple[str | None, str | None]:
    """(what is missing or None, the image's digest): the daemon answers, the image is there,
    and `probe` (the agent CLI's `--version`, say) exits 0 in it."""
    try:
        info = _docker("info", "--format", "{{.ServerVersion}}", timeout=30)
    except FileNotFoundError:
        return "the docker CLI is not installed", None
    except subprocess.TimeoutExpired:
        return "the docker daemon did not answer within 30 s", None
    if info.returncode != 0:
        return f"the docker daemon is not reachable: {info.stderr.strip()[-300:]}", None
    image = _docker("image", "inspect", "--format", "{{.Id}}", str(spec.image))
    if image.returncode != 0:
        return (f"image {spec.image!r} not found (`docker images` lists what is there; docs/sandbox.md "
                "says how to build one offline)"), None
    digest = image.stdout.strip()
    if probe:
        mounts = [arg for folder in spec.mounts for arg in ("-v", f"{folder}:{folder}:ro")]
        check = _docker("run", "--rm", "--network", "none", *mounts, str(spec.image), *probe, timeout=120)
        if check.returncode != 0:
            said = (check.stderr or check.stdout).strip()[-300:] or f"exit {check.returncode}"
            return f"`{' '.join(probe)}` fails in image {spec.image!r}: {said}", digest
    return None, digest
