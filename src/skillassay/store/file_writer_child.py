"""The write-behind process (store/writebehind.py): writes the trial files the run sends it.

Run as a script (`python -I path/to/this/file.py`), not imported: it needs only the standard
library, so it starts in a few milliseconds without loading the package. It reads frames from
stdin, each a 4-byte little-endian length and a marshal'd tuple of (path, data, atomic)
entries, and writes them in order: in place (`atomic` false: a trial's files before its
grading.json, see jsonio.write_before_marker) or to a temp name then renamed (the grading.json
that commits the trial). An empty frame asks for an acknowledgement: one byte 0 on stdout once
everything before it is written. On the first failure it writes the error's text to stdout and
exits 1, so the run stops with that error instead of losing files silently. At end of input it
has written everything it was sent and exits 0."""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import signal
import struct
import sys
import threading
from typing import BinaryIO

# O_NOFOLLOW: a link where a file of ours goes (a workspace someone else prepared) is replaced,
# never written through: its target may be any file of the user's.
_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
          | getattr(os, "O_NOFOLLOW", 0))
_HEADER = struct.Struct("<I")


def write_in_place(path: str, data: bytes) -> None:
    try:
        fd = os.open(path, _FLAGS, 0o666)
    except FileNotFoundError:  # the run and outputs folders of a trial whose agent wrote nothing
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, _FLAGS, 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP or not os.path.islink(path):
            raise
        os.unlink(path)  # the link goes, its target is untouched
        fd = os.open(path, _FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_atomically(path: str, data: bytes) -> None:
    """jsonio.atomic_write_bytes's temp name (.<name>.<pid>.<thread>.tmp), which
    jsonio.remove_stale_temps recognises once this process is gone."""
    folder, name = os.path.split(path)
    tmp = f"{folder}/.{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        write_in_place(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    """n bytes from the binary stream, or None at end of input (the run closed the pipe)."""
    chunks, need = [], n
    while need:
        chunk = stream.read(need)
        if not chunk:
            return None
        chunks.append(chunk)
        need -= len(chunk)
    return b"".join(chunks)


def serve(inp: BinaryIO, out: BinaryIO) -> int:
    while True:
        header = read_exactly(inp, _HEADER.size)
        if header is None:
            return 0
        (size,) = _HEADER.unpack(header)
        if size == 0:
            out.write(b"\x00")
            out.flush()
            continue
        payload = read_exactly(inp, size)
        if payload is None:
            return 0  # the run died mid-frame: that trial was never committed, resume runs it
        path = "?"
        try:
            for path, data, atomic in marshal.loads(payload):
                (write_atomically if atomic else write_in_place)(path, data)
        except OSError as exc:
            out.write(f"{path}: {exc.strerror or exc}".encode("utf-8", "replace"))
            out.flush()
            return 1


def ignore_stop_signals() -> None:
    """A terminal's Ctrl-C (and its hang-up) reaches this process too, being in the run's process
    group: the run decides when to stop (run/interrupt.py), and this process ends when the run
    closes the pipe, having written everything it was sent. Dying here would lose those files."""
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


if __name__ == "__main__":
    ignore_stop_signals()
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer))
