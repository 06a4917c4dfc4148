"""Checks on the final answer's text."""

from __future__ import annotations

import re

from skillassay.assertions.base import (
    AssertionConfigError,
    AssertionPlugin,
    RunView,
    Verdict,
    quote,
)


class Contains(AssertionPlugin):
    type_name = "contains"
    reads_run_folder = False  # the answer and the run's figures only
    ignore_case = False

    def configure(self) -> None:
        self.value: str = self.require("value", str)
        if not self.value:  # "" is found in every answer: always a mistake in the eval
            raise AssertionConfigError(f"'{self.spec.type}' parameter 'value' must not be empty")

    def describe(self) -> str:
        return f"The output contains {self.value!r}" + (" (any case)" if self.ignore_case else "")

    def check(self, run: RunView) -> Verdict:
        hay, needle = run.final_text, self.value
        if self.ignore_case:
            hay, needle = hay.lower(), needle.lower()
        i = hay.find(needle)
        if i >= 0:
            return Verdict(True, f"Found {self.value!r} at char {i}: \"{quote(run.final_text, i, i + len(needle))}\"")
        return Verdict(False, f"{self.value!r} not found in output ({len(run.final_text)} chars): \"{quote(run.final_text, 0, 0, 80)}\"")


class IContains(Contains):
    type_name = "icontains"
    ignore_case = True


class NotContains(AssertionPlugin):
    type_name = "not_contains"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.inner = Contains(self.spec)

    def describe(self) -> str:
        return f"The output does not contain {self.inner.value!r}"

    def check(self, run: RunView) -> Verdict:
        v = self.inner.check(run)
        return Verdict(not v.passed, v.evidence)


class Regex(AssertionPlugin):
    type_name = "regex"
    reads_run_folder = False  # the answer and the run's figures only
    renamed = {"value": "pattern"}  # as file_matches

    def configure(self) -> None:
        pattern = self.require("pattern", str)
        flags = re.IGNORECASE if self.params.get("ignore_case") else 0
        try:
            self.regex = re.compile(pattern, flags | re.MULTILINE)
        except re.error as exc:
            raise AssertionConfigError(f"'regex' pattern {pattern!r} does not compile: {exc}") from None

    def describe(self) -> str:
        return f"The output matches /{self.regex.pattern}/"

    def check(self, run: RunView) -> Verdict:
        m = self.regex.search(run.final_text)
        if m:
            return Verdict(True, f"Matched {m.group(0)!r} at char {m.start()}: \"{quote(run.final_text, m.start(), m.end())}\"")
        return Verdict(False, f"No match for /{self.regex.pattern}/ in output: \"{quote(run.final_text, 0, 0, 80)}\"")


class Equals(AssertionPlugin):
    type_name = "equals"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.value: str = self.require("value", str)
        self.strip = bool(self.params.get("strip", True))

    def describe(self) -> str:
        return f"The output equals {self.value!r}"

    def check(self, run: RunView) -> Verdict:
        got = run.final_text.strip() if self.strip else run.final_text
        ok = got == self.value
        return Verdict(ok, f"Output is {quote(got, 0, 0, 80)!r}" + ("" if ok else f", expected {self.value!r}"))


class StartsWith(AssertionPlugin):
    type_name = "starts_with"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.value: str = self.require("value", str)

    def describe(self) -> str:
        return f"The output starts with {self.value!r}"

    def check(self, run: RunView) -> Verdict:
        got = run.final_text.lstrip()
        return Verdict(got.startswith(self.value), f"Output starts with {got[: len(self.value) + 20]!r}")
