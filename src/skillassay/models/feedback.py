"""feedback.json: the review viewer's file (skill-creator's viewer shape)."""

from __future__ import annotations

from pydantic import Field

from skillassay.models.base import SpecModel


class Review(SpecModel):
    run_id: str = Field(min_length=1, description="Run path relative to the iteration, e.g. eval-1/with_skill/run-1.")
    feedback: str
    timestamp: str


class Feedback(SpecModel):
    reviews: list[Review] = Field(default_factory=list)
    status: str = Field("in_progress", description="in_progress or complete.")
