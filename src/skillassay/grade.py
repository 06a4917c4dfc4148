"""Grading: turn a finished run (outputs, metrics, timing) into grading.json.

Typed assertions are checked by their plugins; plain-string expectations need a judge
(none configured -> ungraded with the reason, never silently passed or failed). A trial
passes when every graded expectation passes and none is left ungraded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillassay import assertions
from skillassay.assertions import AssertionConfigError, AssertionPlugin, RunView
from skillassay.errors import InputError, Problem
from skillassay.models import (
    Assertion,
    Eval,
    ExecutionMetrics,
    ExpectationResult,
    Grading,
    GradingSummary,
    Metrics,
    Timing,
)
from skillassay.models.runfiles import GradingTiming

ANSWER_FILE = "answer.md"


@dataclass(frozen=True)
class CompiledExpectation:
    """An expectation ready to grade: a built plugin, or a plain statement for the judge."""

    text: str
    plugin: AssertionPlugin | None
    negate: bool = False


def compile_expectations(ev: Eval, source: Path | str) -> list[CompiledExpectation]:
    """Build every plugin up front so a misconfigured assertion fails before any trial runs."""
    compiled, problems = [], []
    for i, exp in enumerate(ev.all_expectations()):
        if isinstance(exp, str):
            compiled.append(CompiledExpectation(exp, None))
            continue
        try:
            plugin = assertions.build(exp)
        except AssertionConfigError as exc:
            problems.append(Problem(str(source), f"$.evals[id={ev.id}].expectations[{i}]", str(exc)))
            continue
        compiled.append(CompiledExpectation(assertion_text(exp, plugin), plugin, exp.negate))
    if problems:
        raise InputError(problems)
    return compiled


def assertion_text(spec: Assertion, plugin: AssertionPlugin) -> str:
    if spec.text:
        return spec.text
    text = plugin.describe()
    return f"NOT: {text}" if spec.negate else text


def check(exp: CompiledExpectation, view: RunView) -> ExpectationResult:
    if exp.plugin is None:
        return ExpectationResult(text=exp.text, passed=None,
                                 evidence="Ungraded: plain-language expectation and no judge configured")
    try:
        verdict = exp.plugin.check(view)
    except Exception as exc:  # a plugin bug must not lose the run: record it as evidence
        return ExpectationResult(text=exp.text, passed=None, evidence=f"Ungraded: check raised {exc!r}")
    passed = verdict.passed != exp.negate
    evidence = verdict.evidence if not exp.negate else f"(negated) {verdict.evidence}"
    return ExpectationResult(text=exp.text, passed=passed, evidence=evidence)


def summarize(results: list[ExpectationResult]) -> GradingSummary:
    passed = sum(1 for r in results if r.passed is True)
    failed = sum(1 for r in results if r.passed is False)
    total = len(results)
    return GradingSummary(passed=passed, failed=failed, total=total,
                          pass_rate=round(passed / total, 4) if total else 0.0)


def grade(compiled: list[CompiledExpectation], view: RunView, grader_seconds: float | None = None) -> Grading:
    results = [check(exp, view) for exp in compiled]
    m, t = view.metrics, view.timing
    return Grading(
        expectations=results,
        summary=summarize(results),
        execution_metrics=ExecutionMetrics(
            tool_calls=m.tool_calls, total_tool_calls=m.total_tool_calls, total_steps=m.total_steps,
            errors_encountered=m.errors_encountered, output_chars=m.output_chars,
            transcript_chars=m.transcript_chars),
        timing=GradingTiming(
            executor_duration_seconds=t.executor_duration_seconds,
            grader_duration_seconds=grader_seconds,
            total_duration_seconds=t.total_duration_seconds),
    )


def trial_passed(grading: Grading) -> bool:
    s = grading.summary
    return s.total > 0 and s.passed == s.total


def run_view(run_dir: Path, metrics: Metrics, timing: Timing, prompt: str = "") -> RunView:
    answer = run_dir / "outputs" / ANSWER_FILE
    text = answer.read_text(encoding="utf-8", errors="replace") if answer.is_file() else ""
    return RunView(final_text=text, outputs_dir=run_dir / "outputs", metrics=metrics, timing=timing,
                   run_dir=run_dir, prompt=prompt)
