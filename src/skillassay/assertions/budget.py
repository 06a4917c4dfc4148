"""Checks on the run's figures (tokens, time, tool calls, cost)."""

from __future__ import annotations

from skillassay.assertions.base import AssertionPlugin, RunView, Verdict


class MaxTokens(AssertionPlugin):
    type_name = "max_tokens"
    reads_run_folder = False  # the answer and the run's figures only

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
    reads_run_folder = False  # the answer and the run's figures only

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


class MaxToolCalls(AssertionPlugin):
    type_name = "max_tool_calls"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.limit = self.require("value", int)

    def describe(self) -> str:
        return f"The run makes at most {self.limit} tool calls"

    def check(self, run: RunView) -> Verdict:
        m = run.metrics
        used = m.total_tool_calls or sum(m.tool_calls.values())
        detail = ", ".join(f"{k} {v}" for k, v in sorted(m.tool_calls.items())) or "none by name"
        return Verdict(used <= self.limit, f"Made {used} tool calls ({detail}; limit {self.limit})")


class MaxCost(AssertionPlugin):
    """Reads metrics.json usage.cost_usd, which executors fill when the price is known."""

    type_name = "max_cost"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.limit = self.require("usd", (int, float)) if "usd" in self.params else self.require("value", (int, float))

    def describe(self) -> str:
        return f"The run costs at most ${self.limit:g}"

    def check(self, run: RunView) -> Verdict:
        usage = (run.metrics.model_extra or {}).get("usage") or {}
        cost = usage.get("cost_usd")
        if cost is None:
            return Verdict(False, "No cost was recorded for this run (metrics.json usage.cost_usd missing)")
        return Verdict(cost <= self.limit, f"Cost ${cost:.6f} (limit ${self.limit:g})")
