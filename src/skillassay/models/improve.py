"""Improve-mode files: history.json, comparison.json, analysis.json (schemas.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from skillassay.models.base import SpecModel


class HistoryEntry(SpecModel):
    version: str
    parent: str | None
    expectation_pass_rate: float = Field(ge=0, le=1)
    grading_result: Literal["baseline", "won", "lost", "tie"]
    is_current_best: bool


class History(SpecModel):
    started_at: str
    skill_name: str
    current_best: str
    iterations: list[HistoryEntry]

    @model_validator(mode="after")
    def _best_exists(self) -> History:
        versions = {it.version for it in self.iterations}
        if self.iterations and self.current_best not in versions:
            raise ValueError(f"current_best {self.current_best!r} is not one of iterations[].version")
        return self


Score = int


class ContentRubric(SpecModel):
    correctness: float = Field(ge=1, le=5)
    completeness: float = Field(ge=1, le=5)
    accuracy: float = Field(ge=1, le=5)


class StructureRubric(SpecModel):
    organization: float = Field(ge=1, le=5)
    formatting: float = Field(ge=1, le=5)
    usability: float = Field(ge=1, le=5)


class RubricSide(SpecModel):
    content: ContentRubric
    structure: StructureRubric
    content_score: float
    structure_score: float
    overall_score: float


class OutputQuality(SpecModel):
    score: float
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)


class ExpectationDetail(SpecModel):
    text: str
    passed: bool


class SideExpectations(SpecModel):
    passed: int
    total: int
    pass_rate: float
    details: list[ExpectationDetail] = Field(default_factory=list)


class Comparison(SpecModel):
    winner: Literal["A", "B", "TIE"]
    reasoning: str
    rubric: dict[Literal["A", "B"], RubricSide] | None = None
    output_quality: dict[Literal["A", "B"], OutputQuality] | None = None
    expectation_results: dict[Literal["A", "B"], SideExpectations] | None = None


class ComparisonSummary(SpecModel):
    winner: str
    winner_skill: str | None = None
    loser_skill: str | None = None
    comparator_reasoning: str | None = None


class InstructionFollowingSide(SpecModel):
    score: float
    issues: list[str] = Field(default_factory=list)


class InstructionFollowing(SpecModel):
    winner: InstructionFollowingSide
    loser: InstructionFollowingSide


class ImprovementSuggestion(SpecModel):
    priority: Literal["high", "medium", "low"]
    category: str
    suggestion: str
    expected_impact: str | None = None


class TranscriptInsights(SpecModel):
    winner_execution_pattern: str | None = None
    loser_execution_pattern: str | None = None


class Analysis(SpecModel):
    comparison_summary: ComparisonSummary
    winner_strengths: list[str] = Field(default_factory=list)
    loser_weaknesses: list[str] = Field(default_factory=list)
    instruction_following: InstructionFollowing | None = None
    improvement_suggestions: list[ImprovementSuggestion] = Field(default_factory=list)
    transcript_insights: TranscriptInsights | None = None
