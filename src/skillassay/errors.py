"""One error type for bad input, so every command can turn it into exit code 2 with a message
that names the file and the field instead of a traceback."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Problem:
    """One thing wrong with one input: where (file, JSON path or key) and what was expected."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.location}" if self.location else self.file
        return f"{where}: {self.message}"


@dataclass
class InputError(Exception):
    """Bad input from the user (exit 2). Carries every problem found, not just the first."""

    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def one(cls, file: str | Path, location: str, message: str) -> InputError:
        return cls([Problem(str(file), location, message)])

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


def describe_error(exc: Exception) -> str:
    """Why a JSON file could not be read, in a few words for a message that names the file."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, expected a JSON file"
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or type(exc).__name__}"
    return str(exc)


EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INTERNAL = 70  # a bug in skillassay (BSD's EX_SOFTWARE): never 1, which CI reads as a failed gate
EXIT_RESUMABLE = 75  # stopped by the machine, not the data (disk full): BSD's EX_TEMPFAIL, "try again later"

_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
_DISK_FULL_TEXT = tuple(os.strerror(e) for e in _DISK_FULL)  # "No space left on device", "Disk quota exceeded"


def disk_full(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, is the OS saying the disk (or the
    user's quota) is full: a machine's state to fix and resume after, not a bug. Some carry no
    errno, only the OS's words: shutil.copytree's gathered shutil.Error, and the write-behind
    process's report (store/writebehind.py)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and (current.errno in _DISK_FULL
                                             or any(t in str(current) for t in _DISK_FULL_TEXT)):
            return True
        current = current.__cause__ or current.__context__
    return False


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """' (did you mean 'x'?)' for the choice nearest a misspelt name, '' when none is near:
    a typo in a config or an eval file is the commonest bad input, and the fix is one word."""
    import difflib  # only on the error path

    near = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""
