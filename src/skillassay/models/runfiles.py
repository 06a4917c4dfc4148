"""The per-run files: grading.json, metrics.json, timing.json (schemas.md)."""

from __future__ import annotations

from pydantic import Field

from skillassay.models.base import SpecModel


class ExpectationResult(SpecModel):
    text: str
    passed: bool | None = Field(description="None only when the judge could not grade it (reason in evidence).")
    evidence: str = ""


class GradingSummary(SpecModel):
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    total: int = Field(ge=0)
    pass_rate: float = Field(ge=0, le=1)


class ExecutionMetrics(SpecModel):
    tool_calls: dict[str, int] = Field(default_factory=dict)
    total_tool_calls: int = 0
    total_steps: int = 0
    errors_encountered: int = 0
    output_chars: int = 0
    transcript_chars: int = 0


class GradingTiming(SpecModel):
    executor_duration_seconds: float | None = None
    grader_duration_seconds: float | None = None
    total_duration_seconds: float | None = None


class Claim(SpecModel):
    claim: str
    type: str = Field(description="factual, process or quality")
    verified: bool
    evidence: str = ""


class UserNotesSummary(SpecModel):
    uncertainties: list[str] = Field(default_factory=list)
    needs_review: list[str] = Field(default_factory=list)
    workarounds: list[str] = Field(default_factory=list)


class EvalSuggestion(SpecModel):
    assertion: str | None = None
    reason: str


class EvalFeedback(SpecModel):
    suggestions: list[EvalSuggestion] = Field(default_factory=list)
    overall: str | None = None


class Grading(SpecModel):
    expectations: list[ExpectationResult]
    summary: GradingSummary
    execution_metrics: ExecutionMetrics | None = None
    timing: GradingTiming | None = None
    claims: list[Claim] | None = None
    user_notes_summary: UserNotesSummary | None = None
    eval_feedback: EvalFeedback | None = None


class TurnFigures(SpecModel):
    """One turn of a multi-turn trial in metrics.json / timing.json (issue 39): what that turn
    alone cost. The file's own figures stay the whole trial's totals."""

    turn: int = Field(ge=1)
    status: str | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = Field(None, ge=0)


class Metrics(SpecModel):
    """metrics.json. Our additions (skill_triggered, usage, error) sit beside the spec's fields."""

    tool_calls: dict[str, int] = Field(default_factory=dict)
    total_tool_calls: int = 0
    total_steps: int = 0
    files_created: list[str] = Field(default_factory=list)
    files_created_total: int | None = Field(
        None, description="How many files were created when files_created lists only the first of them "
                          "(store.bounded.LIST_CAP, sorted); absent when it lists them all.")
    errors_encountered: int = 0
    output_chars: int = 0
    transcript_chars: int = 0
    skill_triggered: bool | None = Field(None, description="Whether the agent loaded the skill (None: unknown).")
    error: str | None = Field(None, description="Why the trial failed, when it did.")
    status: str | None = Field(None, description="ok, error or timeout.")
    turns: list[TurnFigures] | None = Field(None, description="A multi-turn trial's figures per turn run.")


# Durations past ~31 years are no trial's: a damaged timing.json (5e268 s overflowed the
# geometric mean of the duration ratios). Refused on reading, so the file is reported.
MAX_SECONDS = 1e9


class Timing(SpecModel):
    total_tokens: int | None = None
    duration_ms: int | None = Field(None, le=int(MAX_SECONDS * 1000))
    total_duration_seconds: float | None = Field(None, le=MAX_SECONDS)
    executor_start: str | None = None
    executor_end: str | None = None
    executor_duration_seconds: float | None = Field(None, le=MAX_SECONDS)
    grader_start: str | None = None
    grader_end: str | None = None
    grader_duration_seconds: float | None = Field(None, le=MAX_SECONDS)
    turns: list[TurnFigures] | None = Field(None, description="A multi-turn trial's tokens and duration per turn.")
