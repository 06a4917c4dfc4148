"""Checks on the files a run left in its outputs/ folder (paths confined to it). `file` names
the file, as in the JSON checks (`path` is its old name here)."""

from __future__ import annotations

import fnmatch
import re

from skillassay.assertions.base import AssertionConfigError, AssertionPlugin, RunView, Verdict, quote
from skillassay.assertions.paths import list_outputs, output_file, relative_param


class FileExists(AssertionPlugin):
    type_name = "file_exists"
    renamed = {"path": "file"}

    def configure(self) -> None:
        self.path: str = relative_param(self.spec.type, "file", self.require("file", str))

    def describe(self) -> str:
        return f"outputs/{self.path} exists"

    def check(self, run: RunView) -> Verdict:
        path, why = output_file(run, self.path)
        if path is None:
            return Verdict(False, why + f"; present: {', '.join(list_outputs(run)[:10]) or 'none'}")
        return Verdict(True, f"outputs/{self.path} exists ({path.stat().st_size} bytes)")

    def read_text(self, run: RunView) -> tuple[str | None, str]:
        """(the file's text, "") or (None, why it cannot be read) for the content checks."""
        path, why = output_file(run, self.path)
        return (None, why) if path is None else (path.read_text(encoding="utf-8", errors="replace"), "")


class FileContains(FileExists):
    type_name = "file_contains"

    def configure(self) -> None:
        super().configure()
        self.value: str = self.require("value", str)
        if not self.value:
            raise AssertionConfigError("'file_contains' parameter 'value' must not be empty")

    def describe(self) -> str:
        return f"outputs/{self.path} contains {self.value!r}"

    def check(self, run: RunView) -> Verdict:
        text, why = self.read_text(run)
        if text is None:
            return Verdict(False, why)
        i = text.find(self.value)
        if i < 0:
            return Verdict(False, f"{self.value!r} not in outputs/{self.path} ({len(text)} chars): \"{quote(text, 0, 0, 80)}\"")
        return Verdict(True, f"Found {self.value!r} in outputs/{self.path} at char {i}: \"{quote(text, i, i + len(self.value))}\"")


class FileMatches(FileExists):
    type_name = "file_matches"

    def configure(self) -> None:
        super().configure()
        pattern = self.require("pattern", str)
        flags = re.MULTILINE | (re.IGNORECASE if self.params.get("ignore_case") else 0)
        try:
            self.regex = re.compile(pattern, flags)
        except re.error as exc:
            raise AssertionConfigError(f"'file_matches' pattern {pattern!r} does not compile: {exc}") from None

    def describe(self) -> str:
        return f"outputs/{self.path} matches /{self.regex.pattern}/"

    def check(self, run: RunView) -> Verdict:
        text, why = self.read_text(run)
        if text is None:
            return Verdict(False, why)
        m = self.regex.search(text)
        if not m:
            return Verdict(False, f"No match for /{self.regex.pattern}/ in outputs/{self.path}: \"{quote(text, 0, 0, 80)}\"")
        return Verdict(True, f"Matched {m.group(0)!r} in outputs/{self.path}: \"{quote(text, m.start(), m.end())}\"")


class FileCount(AssertionPlugin):
    """`glob` (fnmatch on the relative POSIX path, `**` spans folders) with min/max/equals.

    answer.md and metrics.json are written by skillassay itself, so they are not counted
    unless the glob names them explicitly."""

    type_name = "file_count"
    OWN_FILES = ("answer.md", "metrics.json")

    def configure(self) -> None:
        self.glob: str = relative_param(self.spec.type, "glob", self.require("glob", str))
        self.bounds = {k: self.require(k, int) for k in ("min", "max", "equals") if k in self.params}
        if not self.bounds:
            raise AssertionConfigError("'file_count' needs at least one of 'min', 'max', 'equals'")
        if any(v < 0 for v in self.bounds.values()):
            raise AssertionConfigError(f"'file_count' bounds must be >= 0, got {self.bounds}")

    def describe(self) -> str:
        rules = ", ".join(f"{k} {v}" for k, v in self.bounds.items())
        return f"outputs/ has files matching {self.glob!r} ({rules})"

    def matching(self, run: RunView) -> list[str]:
        files = list_outputs(run)
        return [f for f in files if fnmatch.fnmatchcase(f, self.glob)
                and (f not in self.OWN_FILES or f == self.glob)]

    def check(self, run: RunView) -> Verdict:
        found = self.matching(run)
        n = len(found)
        ok = (n >= self.bounds.get("min", 0) and n <= self.bounds.get("max", n)
              and n == self.bounds.get("equals", n))
        listed = ", ".join(found[:10]) + (" …" if n > 10 else "")
        return Verdict(ok, f"{n} file(s) match {self.glob!r}" + (f": {listed}" if n else ""))
