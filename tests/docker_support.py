"""A docker daemon and an image for the docker sandbox tests, made here, offline: a private
dockerd (its own socket and data folders, started once per session, stopped after) and an image
imported by scripts/sandbox_image.py (a tiny root file system that borrows the host's /usr
read-only), as docs/sandbox.md tells users who cannot pull one."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from sandbox_image import docker_daemon, import_image  # noqa: E402 - scripts/ is no package

IMAGE = "skillassay-sandbox-test:1"
MOUNTS = ("/usr",)


@pytest.fixture(scope="session")
def docker_env() -> Iterator[dict[str, str]]:
    """The environment of a docker daemon that answers, with IMAGE in it; skips only where no
    daemon can run."""
    with contextlib.ExitStack() as stack:
        try:
            env = stack.enter_context(docker_daemon())
        except RuntimeError as exc:
            pytest.skip(str(exc))
        imported = import_image(IMAGE, env)
        assert imported.returncode == 0, imported.stderr
        try:
            yield env
        finally:
            subprocess.run(["docker", "image", "rm", "-f", IMAGE], capture_output=True, env=env, timeout=60)
