"""executors/process_group.py: the one registry of the agents' process groups that a stopping run
ends (issue 40). Real `sh` processes and their grandchildren."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from process_support import alive

from skillassay.executors import process_group
from skillassay.executors.process_group import clear_stop, end_all, group, live_groups


@pytest.fixture(autouse=True)
def no_stop_left():
    clear_stop()
    yield
    clear_stop()


def started(argv: list[str], pids: Path, holder: dict) -> None:
    with group(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        holder["pgid"] = proc.pid
        proc.wait()
        holder["code"] = proc.returncode


def wait_for_pids(pids: Path, count: int, holder: dict | None = None) -> list[int]:
    """The children's pids once `count` are written, and (with `holder`) once the thread that
    started them has recorded its group: under load the children can write first."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if (pids.exists() and len(found := pids.read_text().split()) >= count
                and (holder is None or "pgid" in holder)):
            return [int(p) for p in found]
        time.sleep(0.02)
    raise AssertionError("the children did not start")


@pytest.mark.parametrize("trap", ["", "trap '' TERM; "])
def test_end_all_ends_every_group_with_its_grandchildren(tmp_path: Path, trap: str) -> None:
    """SIGTERM, then SIGKILL after the grace period for a group that ignores it."""
    pids = tmp_path / "pids"
    script = f"{trap}echo $$ >> {pids}; ( {trap}echo $(sh -c 'echo $PPID') >> {pids}; sleep 60 ) & wait"
    holder: dict = {}
    thread = threading.Thread(target=started, args=(["sh", "-c", script], pids, holder))
    thread.start()
    found = wait_for_pids(pids, 2, holder)
    assert holder["pgid"] in live_groups()
    t0 = time.monotonic()
    assert end_all(grace_seconds=0.5) == 1
    thread.join(10)
    assert not thread.is_alive()
    deadline = time.monotonic() + 5
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in found), found
    assert time.monotonic() - t0 < 5
    assert live_groups() == []
    assert process_group.stop_requested()


def test_a_group_started_after_the_stop_is_killed_at_once(tmp_path: Path) -> None:
    end_all()
    t0 = time.monotonic()
    with group(["sleep", "30"]) as proc:
        proc.wait(timeout=10)
    assert proc.returncode == -9 and time.monotonic() - t0 < 5
