"""What the stopping tests ask of a process by pid, from /proc (Linux)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped is not running)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
