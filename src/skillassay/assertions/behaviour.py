"""Checks on what the agent did: tools it called, whether it loaded the skill."""

from __future__ import annotations

from skillassay.assertions.base import AssertionConfigError, AssertionPlugin, RunView, Verdict


class ToolCalled(AssertionPlugin):
    """`name` (exact tool name as metrics.json tool_calls records it), optional `min` (default 1)."""

    type_name = "tool_called"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.name: str = self.require("name", str)
        self.min: int = self.require("min", int) if "min" in self.params else 1
        if self.min < 1:
            raise AssertionConfigError(f"'tool_called' parameter 'min' must be >= 1, got {self.min}")

    def describe(self) -> str:
        return f"The agent calls {self.name}" + (f" at least {self.min} times" if self.min > 1 else "")

    def check(self, run: RunView) -> Verdict:
        calls = run.metrics.tool_calls
        n = calls.get(self.name, 0)
        seen = ", ".join(f"{k} {v}" for k, v in sorted(calls.items())) or "no tool calls"
        return Verdict(n >= self.min, f"{self.name} called {n} time(s) (need {self.min}); recorded: {seen}")


class SkillTriggered(AssertionPlugin):
    type_name = "skill_triggered"
    reads_run_folder = False  # the answer and the run's figures only

    def describe(self) -> str:
        return "The agent loads the skill"

    def check(self, run: RunView) -> Verdict:
        value = run.metrics.skill_triggered
        if value is None:
            return Verdict(False, "Unknown: the executor did not record whether the skill was loaded "
                                  "(metrics.json skill_triggered is null; the baseline arm has no skill)")
        return Verdict(value, f"metrics.json skill_triggered is {str(value).lower()}")
