"""A docker daemon and an image for the docker sandbox tests, made here, offline: a private
dockerd (its own socket and data folders, started once per session, stopped after) and an image
imported from a tiny root file system that borrows the host's /usr read-only, as docs/sandbox.md
describes for users who cannot pull one."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

IMAGE = "skillassay-sandbox-test:1"
MOUNTS = ("/usr",)


def _docker_ok(env: dict[str, str]) -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, env=env, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _rootfs_tar() -> bytes:
    """Folders, the usual links into /usr, and the few /etc files a program looks up."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in ("usr", "etc", "tmp", "root", "home", "proc", "sys", "dev", "var", "var/tmp", "run"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder in ("tmp", "var/tmp") else 0o755
            tar.addfile(info)
        for name in ("bin", "sbin", "lib", "lib64"):
            if os.path.islink(f"/{name}"):
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(f"/{name}")
                tar.addfile(info)
        for name, text in (("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"), ("etc/group", "root:x:0:\n"),
                           ("etc/hosts", "127.0.0.1 localhost\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="session")
def docker_env() -> Iterator[dict[str, str]]:
    """DOCKER_HOST of a daemon that answers, with IMAGE in it; skips only where none can run."""
    env = dict(os.environ)
    started: subprocess.Popen[bytes] | None = None
    state = None
    if not _docker_ok(env):
        if shutil.which("dockerd") is None or os.getuid() != 0:
            pytest.skip("no docker daemon, and dockerd cannot be started here (not installed, or not root)")
        state = Path(tempfile.mkdtemp(prefix="skillassay-dockerd-"))
        sock = state / "docker.sock"
        env["DOCKER_HOST"] = f"unix://{sock}"
        log = (state / "dockerd.log").open("wb")
        started = subprocess.Popen(
            ["dockerd", "--iptables=false", "--bridge=none", "--host", env["DOCKER_HOST"],
             "--data-root", str(state / "data"), "--exec-root", str(state / "exec"),
             "--pidfile", str(state / "dockerd.pid")],
            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        log.close()  # the daemon holds its own copy
        deadline = time.monotonic() + 60
        while not _docker_ok(env):
            if started.poll() is not None or time.monotonic() > deadline:
                started.kill()
                pytest.skip(f"dockerd did not start: {(state / 'dockerd.log').read_text()[-500:]}")
            time.sleep(0.5)
    imported = subprocess.run(["docker", "import", "-", IMAGE], input=_rootfs_tar(), capture_output=True,
                              env=env, timeout=120)
    assert imported.returncode == 0, imported.stderr
    try:
        yield env
    finally:
        subprocess.run(["docker", "image", "rm", "-f", IMAGE], capture_output=True, env=env, timeout=60)
        if started is not None:
            started.terminate()
            try:
                started.wait(timeout=30)
            except subprocess.TimeoutExpired:
                started.kill()
            if state is not None:
                shutil.rmtree(state, ignore_errors=True)
