"""Reading what an agent left behind in bounded memory and time. An output folder may hold a
2 GiB file or 200,000 small ones: readers take a head and a tail of a file, never all of it,
hash in chunks up to a stated size, and list at most a stated number of names (with the count
of the rest), so what a run produced cannot make grading, metrics.json or the viewer slow or big."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

LIST_CAP = 1_000  # names of output files listed in metrics.json, the judge's inputs, the viewer
CHUNK = 1 << 16  # bytes per read when hashing or sending a file
HASH_CAP = 256 << 20  # a file beyond this is described by its size, not hashed


@dataclass(frozen=True)
class Listing:
    """The first `cap` file names under a folder, sorted, and how many there are in all."""

    names: list[str]
    total: int

    @property
    def omitted(self) -> int:
        return self.total - len(self.names)


def capped(names: list[str], cap: int = LIST_CAP) -> Listing:
    """A listing of names already collected (sorted here)."""
    ordered = sorted(names)
    return Listing(ordered[:cap], len(ordered))


def list_files(root: Path, cap: int = LIST_CAP, *, links: bool = False) -> Listing:
    """Regular files under root as relative POSIX paths, symlinks never followed (listed too
    when `links`, for a caller that says where they point). Every entry is counted (a
    stat-free scandir walk), only `cap` names are kept."""
    names: list[str] = []
    total = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
            elif entry.is_file(follow_symlinks=False) or links and entry.is_symlink():
                total += 1
                names.append(path)
                if len(names) > 4 * cap:  # keep the smallest names seen, in bounded memory
                    names = sorted(names)[:cap]
    return Listing(sorted(names)[:cap], total)


def read_head_tail(path: Path, head: int, tail: int) -> tuple[bytes, bytes, int]:
    """(first `head` bytes, last `tail` bytes not already in the head, file size): at most
    head + tail bytes are read, whatever the file's size."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        first = fh.read(head)
        if size <= len(first) or tail <= 0:
            return first, b"", size
        start = max(len(first), size - tail)
        fh.seek(start)
        return first, fh.read(tail), size


def decode_text(data: bytes, *, at_start: bool = True, at_end: bool = True) -> str | None:
    """UTF-8 text, or None for binary (a NUL byte, or bytes that do not decode). A character
    cut where a bounded read began (`at_start` False) or ended (`at_end` False) is dropped."""
    if b"\x00" in data:
        return None
    if not at_start:
        skip = 0
        while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
            skip += 1
        data = data[skip:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not at_end and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8", errors="replace")
        return None


def read_text_capped(path: Path, limit: int) -> tuple[str, int]:
    """(text, size): a text file's first and last characters within about `limit` characters
    (head 2/3, tail 1/3, a marker saying how much was cut between), undecodable bytes replaced.
    Reads at most 4 * limit bytes. ("", 0) when there is no such file."""
    try:
        head, tail, size = read_head_tail(path, 4 * limit * 2 // 3 + 4, 4 * (limit - limit * 2 // 3) + 4)
    except OSError:
        return "", 0
    if not tail:
        text = head.decode("utf-8", errors="replace")
        if len(text) <= limit:
            return text, size
        return join_head_tail(text, "", limit, size), size
    return join_head_tail(head.decode("utf-8", errors="replace"), tail.decode("utf-8", errors="replace"),
                          limit, size), size


def join_head_tail(head: str, tail: str, limit: int, size: int) -> str:
    """Head 2/3 and tail 1/3 of `limit` characters, with a marker naming the bytes left out."""
    if limit <= 0:
        return ""
    keep_head = limit * 2 // 3
    keep_tail = limit - keep_head
    if not tail:  # everything was read: the tail comes from the same text
        head, tail = head[:keep_head], head[keep_head:][-keep_tail:] if keep_tail else ""
    shown_head, shown_tail = head[:keep_head], tail[-keep_tail:] if keep_tail else ""
    cut = size - len(shown_head.encode("utf-8")) - len(shown_tail.encode("utf-8"))
    return f"{shown_head}\n…[{cut:,} bytes cut]…\n{shown_tail}"


def file_digest(path: Path, cap: int = HASH_CAP) -> str | None:
    """sha256 of a file read in chunks; None when it is over `cap` bytes (its size says enough)."""
    if path.stat().st_size > cap:
        return None
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
