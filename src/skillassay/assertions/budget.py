"""Checks on the run's figures (tokens, time)."""

from __future__ import annotations

from skillassay.assertions.base import AssertionPlugin, RunView, Verdict


class MaxTokens(AssertionPlugin):
    type_name = "max_tokens"

    def configure(self) -> None:
        self.limit = self.require("value", (int, float))

    def describe(self) -> str:
        return f"The run uses at most {self.limit:g} tokens"

    def check(self, run: RunView) -> Verdict:
        used = run.timing.total_tokens
        if used is None:
            return Verdict(False, "No token count was recorded for this run (timing.json total_tokens missing)")
        return Verdict(used <= self.limit, f"Used {used} tokens (limit {self.limit:g})")


class MaxDuration(AssertionPlugin):
    type_name = "max_duration"

    def configure(self) -> None:
        self.limit = self.require("seconds", (int, float)) if "seconds" in self.params else self.require("value", (int, float))

    def describe(self) -> str:
        return f"The run takes at most {self.limit:g} s"

    def check(self, run: RunView) -> Verdict:
        took = run.timing.executor_duration_seconds
        if took is None:
            took = run.timing.total_duration_seconds
        if took is None:
            return Verdict(False, "No duration was recorded for this run (timing.json)")
        return Verdict(took <= self.limit, f"Took {took:.3f} s (limit {self.limit:g} s)")
