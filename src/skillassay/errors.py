"""One error type for bad input, so every command can turn it into exit code 2 with a message
that names the file and the field instead of a traceback."""

from __future__ import annotations

import json
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


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """' (did you mean 'x'?)' for the choice nearest a misspelt name, '' when none is near:
    a typo in a config or an eval file is the commonest bad input, and the fix is one word."""
    import difflib  # only on the error path

    near = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""
