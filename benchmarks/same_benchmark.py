"""Whether two aggregations wrote the same benchmark.json and benchmark.md apart from their
timestamps: the check that a speed change changed no statistic and no byte of the files.

    python benchmarks/same_benchmark.py REFERENCE_DIR OTHER_DIR

Each folder holds a benchmark.json and a benchmark.md (e.g. main's, copied aside, and this
branch's, on the same iteration). Exits 1 naming the first differing line when they differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def first_difference(a: bytes, b: bytes) -> str | None:
    """None when `a` and `b` are equal once every ISO timestamp is masked, else the first
    differing line of each."""
    ma, mb = STAMP.sub(b"<timestamp>", a), STAMP.sub(b"<timestamp>", b)
    if ma == mb:
        return None
    for n, (x, y) in enumerate(zip(ma.splitlines(), mb.splitlines(), strict=False), 1):
        if x != y:
            return f"line {n}: {x[:200]!r} != {y[:200]!r}"
    return f"one is longer ({len(ma)} vs {len(mb)} bytes once masked)"


def main() -> int:
    ref, other = Path(sys.argv[1]), Path(sys.argv[2])
    status = 0
    for name in ("benchmark.json", "benchmark.md"):
        diff = first_difference((ref / name).read_bytes(), (other / name).read_bytes())
        print(f"{name}: {'identical apart from timestamps' if diff is None else 'DIFFERS, ' + diff}")
        status |= diff is not None
    return status


if __name__ == "__main__":
    sys.exit(main())
