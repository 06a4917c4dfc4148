"""evals.json (schemas.md) and eval_metadata.json (skill-creator's per-eval file)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from skillassay.models.base import ClosedSpecModel, SpecModel, schema_ref

_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:60] or "eval"


class Assertion(SpecModel):
    """A typed, program-checkable expectation, e.g. {"type": "contains", "value": "4433"}.

    Parameters other than the common ones below are kept as extra fields and read by the
    assertion plugin named by `type`, so a new check needs no change here."""

    type: str = Field(min_length=1, description="Name of a registered assertion plugin.")
    negate: bool = Field(False, description="Invert the verdict (evidence is kept).")
    text: str | None = Field(None, description="Human-readable statement for reports; generated when absent.")

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


Expectation = str | Assertion


class Eval(ClosedSpecModel):
    id: int = Field(description="Unique integer identifier.")
    prompt: str = Field(min_length=1, description="The task to execute.")
    expected_output: str | None = Field(None, description="Human-readable description of success.")
    name: str | None = Field(None, description="Short name used in folder names and reports.")
    files: list[str] = Field(default_factory=list, description="Input files, relative to the skill root.")
    expectations: list[Expectation] = Field(
        default_factory=list,
        description="Plain strings (graded by an LLM judge) or typed assertions.",
    )
    assertions: list[Expectation] | None = Field(
        None, description="skill-creator's optional extra list; graded like expectations."
    )

    @field_validator("expectations", "assertions", mode="before")
    @classmethod
    def _strings_or_objects(cls, value: Any) -> Any:
        if isinstance(value, list):
            for i, item in enumerate(value):
                if not isinstance(item, str | dict):
                    raise ValueError(f"item {i} must be a string or an assertion object, got {type(item).__name__}")
        return value

    def all_expectations(self) -> list[Expectation]:
        return list(self.expectations) + list(self.assertions or [])

    @property
    def slug(self) -> str:
        """Folder name `eval-<id>-<name>` (skill-creator's layout)."""
        return f"eval-{self.id}-{slugify(self.name)}" if self.name else f"eval-{self.id}"


class EvalSet(ClosedSpecModel):
    schema_: str | None = schema_ref()
    skill_name: str = Field(min_length=1, description="Name matching the skill's frontmatter.")
    evals: list[Eval] = Field(min_length=1, description="The evals.")

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalSet:
        seen: set[int] = set()
        for e in self.evals:
            if e.id in seen:
                raise ValueError(f"duplicate eval id {e.id}: evals[].id must be unique")
            seen.add(e.id)
        return self


class EvalMetadata(SpecModel):
    """Per-eval file beside the configuration folders, written by skill-creator and by us."""

    eval_id: int | str
    eval_name: str | None = None
    prompt: str | None = None
    expectations: list[Expectation] | None = None
    assertions: list[Expectation] | None = None
