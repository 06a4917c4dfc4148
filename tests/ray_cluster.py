"""A real Ray cluster on this machine for the tests and benchmarks/ray_scaling.py: a head and
more nodes joined to it, each a `ray start` with its own short temp dir (Ray's socket paths
must stay under 107 characters), token auth off (RAY_AUTH_MODE=disabled: loopback only).

Stopping never uses `ray stop`, which kills every Ray process of the machine, other users'
clusters included: a node's processes are found by its own temp dir in their command line
and killed by pid."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ray_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """What a node (and so its workers) runs with: this checkout's src first on the path."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return {**env, **(extra or {})}


def ray_bin() -> str:
    found = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    return found


@dataclass
class Node:
    temp_dir: Path
    env: dict[str, str]

    def pids(self) -> list[int]:
        """This node's processes: those whose command line names its temp dir, and their
        descendants (workers and agents rename themselves `ray::...`)."""
        needle = str(self.temp_dir).encode()
        own: set[int] = set()
        parent: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if needle in fh.read():
                        own.add(int(entry))
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parent[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        grew = True
        while grew:
            more = {pid for pid, ppid in parent.items() if ppid in own and pid not in own}
            own |= more
            grew = bool(more)
        return sorted(own)

    def kill(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@dataclass
class Cluster:
    address: str
    nodes: list[Node] = field(default_factory=list)
    startup_seconds: float = 0.0

    def add_node(self, slots: int, env: dict[str, str] | None = None, cpus: int = 2) -> Node:
        node = start_node(["--address", self.address], slots, env, cpus)
        self.nodes.append(node)
        return node

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.kill()
        for node in self.nodes:
            shutil.rmtree(node.temp_dir, ignore_errors=True)


def start_node(args: list[str], slots: int, env: dict[str, str] | None, cpus: int) -> Node:
    temp = Path(tempfile.mkdtemp(prefix="sar", dir="/tmp"))
    node_env = ray_env(env)
    cmd = [ray_bin(), "start", *args, "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus),
           "--resources", json.dumps({"skillassay_slots": slots}), "--temp-dir", str(temp),
           "--disable-usage-stats"]
    done = subprocess.run(cmd, env=node_env, capture_output=True, text=True, timeout=120)
    node = Node(temp, node_env)
    if done.returncode != 0:
        node.kill()
        raise RuntimeError(f"ray start failed ({done.returncode}): {done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return node


def start_cluster(slots: int = 4, head_env: dict[str, str] | None = None, cpus: int = 2) -> Cluster:
    t0 = time.perf_counter()
    port = free_port()
    head = start_node(["--head", "--port", str(port), "--include-dashboard", "false"], slots, head_env, cpus)
    cluster = Cluster(f"127.0.0.1:{port}", [head])
    cluster.startup_seconds = time.perf_counter() - t0
    return cluster
