"""Where a trial's files go: written here and now, or handed to a write-behind process.

A trial's own files (answer, transcripts, metrics, timing, grading.json last) cost a quarter
of the run's own time per trial in system calls: with an instant model, 6 files of ~25
microseconds each on this VM's tmpfs, beside ~0.7 ms for the whole trial (py-spy, 10,000
trials). A thread cannot take that off the run: CPython's GIL hands a writer thread back the
interpreter once per switch interval, after each call, and with the writes in a thread the
per-trial time did not move (0.729 vs 0.743 ms, 4 interleaved rounds of 6,000 trials). A child
process can: the run sends each trial's files, already encoded and redacted, down a pipe (one
write of a few KB) and the child (store/file_writer_child.py, stdlib only) writes them on the
other core, in order, grading.json last and atomically, so a trial is committed exactly as
before. What changes is when: a trial is on disk a little after it is graded, not at once.

- Everything that reads a run folder first asks the child to catch up (`sync`): grading whose
  checks read files (assertion plugins with reads_run_folder, the judge), and the end of
  execution (`close`), before anything is aggregated or reported.
- Killed, the run loses at most the trials still in the pipe, which have no grading.json on
  disk and so run again on resume, like a trial killed mid-write. The child, when the run
  dies, writes what it has been sent and exits at the pipe's end.
- A write that fails (disk full, permissions) stops the child with its error; the run raises
  it at the next hand-over (an OSError naming the file), as a failed write raised before.

Only worth it for many trials: starting the child costs this process ~3 ms, about what 100
trials' writes cost it, so small runs (and `grade`, and the Ray driver) write directly.
SKILLASSAY_WRITE_BEHIND=0 writes directly always, =1 uses the child for any run (the tests)."""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from skillassay.store.jsonio import atomic_write_bytes, write_before_marker

FileEntry = tuple[str, bytes, bool]  # path, bytes as they go on disk (redacted), atomic rename?
MIN_TRIALS = 200  # below this the child's start costs more than the writes it saves
_HEADER = struct.Struct("<I")
_PIPE_BYTES = 1 << 20  # a pipe of 1 MB (Linux F_SETPIPE_SZ): ~200 trials in flight, not 13
_CHILD = Path(__file__).with_name("file_writer_child.py")


class FileSink(Protocol):
    def submit(self, files: list[FileEntry]) -> None:
        """Write these files, in order (a trial's grading.json last)."""

    def sync(self) -> None:
        """Return once everything submitted is on disk."""


class Collect:
    """Keeps what is submitted, for the caller to send on with the files it adds."""

    def __init__(self) -> None:
        self.files: list[FileEntry] = []

    def submit(self, files: list[FileEntry]) -> None:
        self.files.extend(files)

    def sync(self) -> None:
        pass


class DirectWriter:
    """Writes each file at once, in this process."""

    def submit(self, files: list[FileEntry]) -> None:
        for path, data, atomic in files:
            (atomic_write_bytes if atomic else write_before_marker)(path, data)

    def sync(self) -> None:
        pass


DIRECT = DirectWriter()


class WriteBehindError(OSError):
    """The write-behind process could not write a file (its message names it)."""


class WriteBehind:
    """Files handed to store/file_writer_child.py through a pipe. Thread-safe: concurrent
    trials' frames never interleave."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-I", os.fspath(_CHILD)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, bufsize=0, close_fds=True)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._fd = self._proc.stdin.fileno()
        with contextlib.suppress(OSError, AttributeError):  # Linux only; a small pipe only costs waits
            fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()  # a sync's frame and its reply, one thread at a time
        self._failed: str | None = None

    def _error(self) -> WriteBehindError:
        return WriteBehindError(f"writing the trial files failed: {self._failed}")

    def _send(self, frame: bytes) -> None:
        with self._lock:
            if self._failed is not None:
                raise self._error()
            try:
                view = memoryview(frame)
                while view:
                    view = view[os.write(self._fd, view):]
            except BrokenPipeError:
                self._failed = self._reason()
                raise self._error() from None

    def _reason(self) -> str:
        assert self._proc.stdout is not None
        self._proc.wait()
        said = self._proc.stdout.read().decode("utf-8", "replace").strip()
        return said or f"the writer process exited with status {self._proc.returncode}"

    def submit(self, files: list[FileEntry]) -> None:
        payload = marshal.dumps(files)
        self._send(_HEADER.pack(len(payload)) + payload)

    def sync(self) -> None:
        assert self._proc.stdout is not None
        with self._sync_lock:
            self._send(_HEADER.pack(0))
            first = self._proc.stdout.read(1)
            if first == b"\x00":
                return
            with self._lock:
                self._failed = first.decode("utf-8", "replace") + self._reason()
        raise self._error()

    def close(self) -> None:
        """Wait for every file sent, then for the child; raise if one could not be written."""
        assert self._proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self._proc.stdin.close()
        with self._lock:
            if self._proc.wait() != 0 and self._failed is None:
                self._failed = self._reason()
        if self._failed is not None:
            raise self._error()


@contextlib.contextmanager
def trial_file_sink(trials: int, enabled: bool = True) -> Iterator[FileSink]:
    """The sink for a run of `trials` trials: a write-behind process for many, else DIRECT.
    On the way out every file sent is written (an exception in the run included: those trials
    are finished and graded) before the caller reads anything back."""
    choice = os.environ.get("SKILLASSAY_WRITE_BEHIND", "")  # "0": never; "1": whatever the size
    if not enabled or trials == 0 or choice == "0" or (choice != "1" and trials < MIN_TRIALS):
        yield DIRECT
        return
    sink = WriteBehind()
    try:
        yield sink
    except BaseException:
        with contextlib.suppress(WriteBehindError):
            sink.close()  # the run's own error is the one to report
        raise
    sink.close()
