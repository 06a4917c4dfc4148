"""comparison_previous.json: `compare`'s (and `run`'s) comparison of an iteration with the one
before. Not skill-creator's blind comparison (comparison-N.json, `Comparison`): its own kind,
so `validate` accepts the file the tool writes. The statistics inside stay free-form; what the
gate and the report read is required."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from skillassay.models.base import SpecModel


class ComparedEval(SpecModel):
    eval_id: int | str
    eval_name: str | None = None
    label: str = Field(description="regressed, possible regression, improved, possible improvement or unchanged.")
    raw_flip: str | None = Field(None, description="The plain PASS->FAIL / FAIL->PASS / unchanged flip.")
    p_regression_adjusted: float | None = None
    p_improvement_adjusted: float | None = None


class IterationComparison(SpecModel):
    schema_version: Literal[1]
    kind: Literal["iteration_comparison"] = "iteration_comparison"
    current: dict[str, Any] = Field(description="The iteration compared: path and number.")
    previous: dict[str, Any] = Field(description="The iteration compared with: path, number, how it was found.")
    per_eval: list[ComparedEval]
    metrics: dict[str, Any] = Field(default_factory=dict, description="Suite figures, before and after.")
    notes: list[str] = Field(default_factory=list)
