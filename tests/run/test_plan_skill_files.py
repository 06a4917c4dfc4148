"""What a skill folder may hold (issue 40): a FIFO made `run` wait forever in hash_tree, before
any workspace existed and with no message; a 1 GiB sparse file took 44 s and 2.1 GB of memory.
Special files (FIFOs, sockets, devices) are refused with exit 2 naming them, a file over the
stated size limit (max_skill_file_bytes in the benchmark config) likewise, and hashing reads in
bounded memory. Real `skillassay` processes with a timeout, since the failure was a hang."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import repo_paths
from greeter_skill import make_skill

from skillassay.run.plan import hash_file, hash_tree

REPO = repo_paths.REPO


def skillassay(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillassay", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def run(skill: Path, ws: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return skillassay("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws), *extra)


def test_a_fifo_in_the_skill_folder_is_refused_naming_it(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    (skill / "references").mkdir()
    os.mkfifo(skill / "references" / "pipe")
    proc = run(skill, tmp_path / "ws")
    assert proc.returncode == 2, proc.stderr
    assert "references/pipe" in proc.stderr and "FIFO" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "ws").exists()
    validated = skillassay("validate", str(skill))
    assert validated.returncode == 2 and "references/pipe" in validated.stderr, validated.stderr


def test_a_socket_in_the_skill_folder_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(skill / "agent.sock"))
        proc = run(skill, tmp_path / "ws")
    finally:
        sock.close()
    assert proc.returncode == 2, proc.stderr
    assert "agent.sock" in proc.stderr and "socket" in proc.stderr, proc.stderr


def test_a_fifo_given_as_the_config_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    proc = run(skill, tmp_path / "ws", "--config", str(fifo))
    assert proc.returncode == 2, proc.stderr
    assert "config.json" in proc.stderr and "not a regular file" in proc.stderr, proc.stderr


def test_a_huge_sparse_file_is_refused_at_once(tmp_path: Path) -> None:
    """1 GiB, sparse: no disk used, but read whole it cost 44 s and 2.1 GB."""
    skill = make_skill(tmp_path / "skills")
    with open(skill / "model.bin", "wb") as fh:
        fh.truncate(2**30)
    t0 = time.monotonic()
    proc = run(skill, tmp_path / "ws")
    took = time.monotonic() - t0
    assert proc.returncode == 2, proc.stderr
    assert "model.bin" in proc.stderr and "max_skill_file_bytes" in proc.stderr, proc.stderr
    assert took < 30, took


def test_the_size_limit_is_the_configs(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", {"max_skill_file_bytes": 1000})
    (skill / "notes.md").write_text("x" * 2000, encoding="utf-8")
    proc = run(skill, tmp_path / "ws")
    assert proc.returncode == 2, proc.stderr
    assert "notes.md" in proc.stderr and "1,000" in proc.stderr, proc.stderr
    (skill / "notes.md").write_text("x" * 999, encoding="utf-8")
    proc = run(skill, tmp_path / "ws")
    assert proc.returncode in (0, 1, 3), proc.stderr


def test_hashing_reads_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "tree"
    folder.mkdir()
    with open(folder / "big.bin", "wb") as fh:
        fh.truncate(64 * 2**20)
    tracemalloc.start()
    try:
        tree, single = hash_tree(folder), hash_file(folder / "big.bin")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak:,} bytes for a 64 MiB file"
    assert len(tree) == len(single) == 64


@pytest.mark.parametrize("kind", ["fifo"])
def test_hash_tree_never_opens_a_special_file(tmp_path: Path, kind: str) -> None:
    """A FIFO reached some other way (a snapshot tampered with) must not hang hashing either."""
    os.mkfifo(tmp_path / "pipe")
    t0 = time.monotonic()
    hash_tree(tmp_path)
    assert time.monotonic() - t0 < 5
