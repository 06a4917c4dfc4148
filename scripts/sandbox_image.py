"""Build, offline, a docker image for `--sandbox docker` that borrows this machine's /usr:
a root file system of empty folders, the usual links into /usr and three /etc files, imported
with `docker import`. Run trials in it with `"mounts": ["/usr"]` in the config's `sandbox`, so
the agent CLIs installed under /usr (npm -g puts them in /usr/lib/node_modules) run inside.
Nothing of the user's home or /etc secrets goes in. docs/sandbox.md has a full-image recipe.

    python3 scripts/sandbox_image.py skillassay-agents:1
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

_FOLDERS = ("usr", "etc", "tmp", "root", "home", "proc", "sys", "dev", "var", "var/tmp", "run")
_ETC = (("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"), ("etc/group", "root:x:0:\n"),
        ("etc/hosts", "127.0.0.1 localhost\n"))


def rootfs_tar() -> bytes:
    """The image's whole file system as a tar archive (a few kB)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in _FOLDERS:
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder in ("tmp", "var/tmp") else 0o755
            tar.addfile(info)
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            if os.path.islink(f"/{name}"):  # merged-/usr systems: /bin -> usr/bin
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(f"/{name}")
                tar.addfile(info)
        for name, text in _ETC:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def import_image(tag: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["docker", "import", "-", tag], input=rootfs_tar(), capture_output=True, env=env,
                          timeout=120)


def docker_ok(env: dict[str, str]) -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, env=env, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextlib.contextmanager
def docker_daemon() -> Iterator[dict[str, str]]:
    """An environment whose DOCKER_HOST answers: the running daemon's, else a private dockerd
    (own socket and data folders under the temp folder, stopped and removed after; root only).
    RuntimeError says why none can run. For the tests and benchmarks/sandbox_cost.py."""
    env = dict(os.environ)
    if docker_ok(env):
        yield env
        return
    if shutil.which("dockerd") is None or os.getuid() != 0:
        raise RuntimeError("no docker daemon, and dockerd cannot be started here (not installed, or not root)")
    state = Path(tempfile.mkdtemp(prefix="skillassay-dockerd-"))
    env["DOCKER_HOST"] = f"unix://{state / 'docker.sock'}"
    with (state / "dockerd.log").open("wb") as log:
        daemon = subprocess.Popen(
            ["dockerd", "--iptables=false", "--bridge=none", "--host", env["DOCKER_HOST"],
             "--data-root", str(state / "data"), "--exec-root", str(state / "exec"),
             "--pidfile", str(state / "dockerd.pid")], stdout=subprocess.DEVNULL, stderr=log,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not docker_ok(env):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dockerd did not start: {(state / 'dockerd.log').read_text()[-500:]}")
            time.sleep(0.5)
        yield env
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    done = import_image(sys.argv[1])
    sys.stdout.write(done.stdout.decode())
    sys.stderr.write(done.stderr.decode())
    sys.exit(done.returncode)
