"""Served mode's /api/run answers, kept per run and checked on every request against the files
they were built from (a stat of each, never a read): a crowd of reviewers opening the same runs
shares one rendering (markdown, highlighting, masking and JSON: ~5 ms of CPU a run, most of what
200 requests at once cost), and a file that changes is rendered again on the next request.

What is checked: the run's own files (grading.json, timing.json, transcript.md, metrics.json),
the eval's eval_metadata.json, outputs/ and every folder below it (a file added or removed
anywhere in the tree changes its folder's mtime), each listed file, and with --previous the previous run's files and feedback.
An answer whose files changed while it was being built (a change time within RACY_NS of the
check, as git's "racily clean" index entries) is sent but not kept."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.viewer.build import Index

MAX_BYTES = 64 << 20  # answers kept in all; the least recently asked go first
RACY_NS = 2_000_000_000
MAX_FOLDERS = 4_096  # folders in one run's outputs/ whose stat is checked; an answer over it is not kept

Stamp = tuple[tuple[int, int, int, int] | None, ...]


def stamp_of(paths: tuple[str, ...]) -> Stamp:
    """Each path's (mtime, change time, size, inode), None where it does not exist. The change
    time cannot be set back by the writer (utime sets mtime only)."""
    out: list[tuple[int, int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino))
    return tuple(out)


def racy(stamp: Stamp, now_ns: int, window_ns: int = RACY_NS) -> bool:
    return any(s is not None and now_ns - max(s[0], s[1]) < window_ns for s in stamp)


def folders_under(root: Path, cap: int = MAX_FOLDERS) -> list[Path] | None:
    """Every folder below root, links not followed (a stat-free scandir walk), or None when
    there are more than `cap`: a file added anywhere changes the mtime of the folder it lands
    in, so these and root are what an answer built from the tree must be checked against."""
    # Not os.walk: it lists links to folders among a folder's subfolders (is_dir follows them),
    # and a link's target may be anywhere on disk; this walk counts real folders only.
    found: list[Path] = []
    stack = [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                subs = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        found += subs
        if len(found) > cap:
            return None
        stack += subs
    return sorted(found)


def run_dependencies(index: Index, run_id: str, payload: dict[str, Any], previous: Path | None) -> tuple[str, ...] | None:
    """The files and folders `payload` (build.run_payload's) was made from; None when they cannot
    be named (--previous without a matching run: which run it finds depends on folders not named)
    or are too many to check on each request (more than MAX_FOLDERS folders in outputs/)."""
    ref = index.by_id[run_id]
    it = index.iteration_dir
    run_dir = it / ref.run_id
    outputs = run_dir / "outputs"
    paths = [it / ref.eval_dir / "eval_metadata.json", run_dir / "grading.json", run_dir / "timing.json",
             run_dir / "transcript.md", outputs, outputs / "metrics.json"]
    for entry in payload.get("files") or []:
        name = str(entry.get("name") or "")
        if not name or (name.startswith("[") and entry.get("size") is None):  # the "[N more files]" line
            continue
        paths.append(outputs / name)
    folders = folders_under(outputs)
    if folders is None:
        return None
    paths += folders
    if previous is not None:
        prev = payload.get("previous")
        if not isinstance(prev, dict):
            return None
        prev_dir = previous / str(prev["run_id"])
        paths += [previous, previous / "feedback.json", prev_dir, prev_dir / "grading.json",
                  prev_dir / "outputs" / "answer.md"]
    return tuple(map(os.fspath, paths))


@dataclass(frozen=True)
class Entry:
    paths: tuple[str, ...]
    stamp: Stamp
    body: bytes


class RunCache:
    """run id -> the answer's bytes. `build(run_id)` gives (bytes, the paths they came from or
    None: not kept), or None for an unknown run. One build per run at a time: 200 requests for a
    run nobody opened yet wait for one rendering instead of making 200."""

    def __init__(self, build: Callable[[str], tuple[bytes, tuple[str, ...] | None] | None],
                 max_bytes: int = MAX_BYTES, racy_ns: int | None = None) -> None:
        self._build = build
        self._max_bytes = max_bytes
        self._racy_ns = racy_ns
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self.builds = 0  # how many times an answer was built (tests, benchmarks)

    def _fresh(self, run_id: str) -> bytes | None:
        with self._lock:
            entry = self._entries.get(run_id)
            if entry is not None:
                self._entries.move_to_end(run_id)
        if entry is not None and stamp_of(entry.paths) == entry.stamp:
            return entry.body
        return None

    def get(self, run_id: str) -> bytes | None:
        body = self._fresh(run_id)
        if body is not None:
            return body
        with self._lock:
            building = self._building.setdefault(run_id, threading.Lock())
        with building:
            body = self._fresh(run_id)  # another request built it while this one waited
            if body is not None:
                return body
            built = self._build(run_id)
            with self._lock:
                self.builds += 1
            if built is None:
                return None
            body, paths = built
            if paths is not None:
                stamp = stamp_of(paths)
                if not racy(stamp, time.time_ns(), RACY_NS if self._racy_ns is None else self._racy_ns):
                    self._keep(run_id, Entry(paths, stamp, body))
            return body

    def _keep(self, run_id: str, entry: Entry) -> None:
        with self._lock:
            old = self._entries.pop(run_id, None)
            self._bytes -= len(old.body) if old is not None else 0
            if len(entry.body) > self._max_bytes:
                return
            self._entries[run_id] = entry
            self._bytes += len(entry.body)
            while self._bytes > self._max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped.body)


__all__ = ["RunCache", "run_dependencies", "stamp_of"]
