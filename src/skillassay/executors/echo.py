"""An instant executor that answers with exactly what it was shown (the skill context, when
given, and the prompt). Not a fake of any model: a real plugin for proving what each arm saw
and for measuring the tool's own overhead (benchmarks/overhead.py)."""

from __future__ import annotations

import time
from typing import ClassVar

from skillassay.executors.base import Executor, TrialRequest, TrialResult, Usage
from skillassay.executors.conversation import request_prompts, run_turns
from skillassay.executors.local import build_messages


class EchoExecutor(Executor):
    name: ClassVar[str] = "echo"
    handles_timeout: ClassVar[bool] = True
    supports_turns: ClassVar[bool] = True  # answers each turn with what that turn showed it

    @property
    def writes_workdir(self) -> bool:
        return bool(self.settings.options.get("write_file"))

    def run(self, request: TrialRequest) -> TrialResult:
        """Options: delay_seconds (sleep, to exercise concurrency, timeouts and kills; before
        each turn of a conversation), write_file (also write the answer to this file in the
        work dir). A conversation is answered turn by turn, each turn echoing its own message."""
        if not request.turns:
            return self.answer(request.prompt, request)
        return run_turns(request_prompts(request), lambda _k, prompt: self.answer(prompt, request))

    def answer(self, prompt: str, request: TrialRequest) -> TrialResult:
        """One turn: the skill context (when given) and this turn's message, echoed."""
        delay = float(self.settings.options.get("delay_seconds", 0))
        if delay:
            time.sleep(min(delay, self.settings.timeout_seconds))
            if delay > self.settings.timeout_seconds:
                return TrialResult(status="timeout", error=f"timed out after {self.settings.timeout_seconds:g}s",
                                   transcript=[{"type": "echo", "seed": request.seed, "timed_out": True}])
        messages = build_messages(prompt, request.skill)
        text = messages[-1]["content"]
        if self.settings.options.get("write_file"):
            (request.workdir / self.settings.options["write_file"]).write_text(text, encoding="utf-8")
        words = len(text.split())
        return TrialResult(
            final_text=text,
            usage=Usage(input_tokens=words, output_tokens=words, cost_usd=0.0),
            steps=1,
            skill_triggered=None if request.skill is None else True,
            transcript=[{"type": "echo", "seed": request.seed, "text": text}],
            agent_duration_ms=0,
            model="echo",
        )
