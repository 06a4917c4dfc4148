"""A full disk is not a bug in skillassay (issue 40): `run` on a full disk stopped with exit 70
"internal error ... No space left on device". It stops with a clear message and the resumable
exit code (75), and once there is room the same command resumes the same iteration.

A real full disk: a 1 MiB tmpfs mounted for the test (root only; skipped where mount is not
allowed), with a skill whose 600 KB file leaves room for a few dozen trials only."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import repo_paths

from skillassay.errors import EXIT_RESUMABLE, disk_full
from skillassay.store.writebehind import WriteBehindError

REPO = repo_paths.REPO
EXAMPLE = REPO / "examples" / "acme-vpn"


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def run(skill: Path, ws: Path, write_behind: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "SKILLASSAY_WRITE_BEHIND": write_behind}
    return subprocess.run([sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "echo", "--trials",
                           "20", "--workspace", str(ws)], env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("write_behind", ["0", "1"])
def test_a_full_disk_stops_the_run_resumably(tmp_path: Path, tiny_disk: Path, write_behind: str) -> None:
    skill = tmp_path / "skills" / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    (skill / "blob.bin").write_bytes(os.urandom(600_000))
    ws = tiny_disk / "ws"
    proc = run(skill, ws, write_behind)
    assert proc.returncode == EXIT_RESUMABLE, proc.stderr
    assert "internal error" not in proc.stderr and "disk is full" in proc.stderr, proc.stderr
    assert "run the same command again" in proc.stderr, proc.stderr
    finished = len(list(ws.glob("iteration-1/*/*/run-*/grading.json")))
    assert finished > 0

    subprocess.run(["mount", "-o", "remount,size=16m", str(tiny_disk)], check=True)
    proc = run(skill, ws, write_behind)
    assert proc.returncode in (0, 1, 3), proc.stderr
    assert not (ws / "iteration-2").exists(), proc.stderr
    assert f"{finished} trials already graded" in proc.stderr, proc.stderr


def test_a_snapshot_copy_that_fills_the_disk_is_a_full_disk_too(tmp_path: Path, tiny_disk: Path) -> None:
    """shutil.copytree gathers its errors into one shutil.Error, without an errno."""
    skill = tmp_path / "skills" / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    (skill / "blob.bin").write_bytes(os.urandom(1_500_000))
    proc = run(skill, tiny_disk / "ws", "0")
    assert proc.returncode == EXIT_RESUMABLE, proc.stderr
    assert "disk is full" in proc.stderr, proc.stderr


def test_what_counts_as_a_full_disk() -> None:
    assert disk_full(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/ws/x"))
    assert disk_full(OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)))
    assert disk_full(WriteBehindError(f"writing the trial files failed: /ws/g.json: {os.strerror(errno.ENOSPC)}"))
    assert disk_full(shutil.Error([("a", "b", f"[Errno 28] {os.strerror(errno.ENOSPC)}: 'b'")]))
    wrapped = RuntimeError("while aggregating")
    wrapped.__cause__ = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert disk_full(wrapped)
    assert not disk_full(OSError(errno.EACCES, os.strerror(errno.EACCES)))
    assert not disk_full(ValueError("No space left on device"))  # only what the OS said
