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


class Turn(ClosedSpecModel):
    """One user message of a multi-turn eval, with what its answer must show (issue 39)."""

    prompt: str = Field(min_length=1, description="The user's message for this turn.")
    expectations: list[Expectation] = Field(
        default_factory=list,
        description="Graded against this turn's answer (and the files as they stand at the end).",
    )

    @field_validator("expectations", mode="before")
    @classmethod
    def _strings_or_objects(cls, value: Any) -> Any:
        return _check_expectation_items(value)


def _check_expectation_items(value: Any) -> Any:
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str | dict):
                raise ValueError(f"item {i} must be a string or an assertion object, got {type(item).__name__}")
    return value


class Eval(ClosedSpecModel):
    id: int = Field(description="Unique integer identifier.")
    prompt: str = Field(min_length=1, description=(
        "The task to execute. For a multi-turn eval, its first message (filled from turns[0].prompt "
        "when absent, so skill-creator's readers still find one)."))
    turns: list[Turn] | None = Field(None, min_length=2, description=(
        "A conversation instead of one prompt: the user's messages in order (2 or more), each with "
        "its own expectations; the eval's `expectations` then judge the whole conversation (the last "
        "answer, the files at the end)."))
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
        return _check_expectation_items(value)

    @model_validator(mode="before")
    @classmethod
    def _first_turn_is_prompt(cls, data: Any) -> Any:
        """A conversation's first message is its `prompt`: filled in when absent; when both are
        given (a file we wrote, or skill-creator's) they must agree."""
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list) or not data["turns"]:
            return data
        first = data["turns"][0]
        first_prompt = first.get("prompt") if isinstance(first, dict) else None
        if "prompt" not in data:
            return {**data, "prompt": first_prompt} if isinstance(first_prompt, str) else data
        if isinstance(first_prompt, str) and data["prompt"] != first_prompt:
            raise ValueError("give `turns` or `prompt`, not both: a multi-turn eval's prompt is its first "
                             "turn's (turns[0].prompt), and this one differs from it")
        return data

    def all_expectations(self) -> list[Expectation]:
        """Every expectation graded for a trial of this eval, in grading.json's order: each
        turn's in conversation order, then the eval's own (the whole conversation)."""
        per_turn = [e for t in self.turns or [] for e in t.expectations]
        return per_turn + list(self.expectations) + list(self.assertions or [])

    def expectation_turns(self) -> list[int | None]:
        """The turn (1-based) each of all_expectations() belongs to; None: the whole
        conversation. Empty for a single-prompt eval, whose grading names no turn."""
        if not self.turns:
            return []
        per_turn = [k for k, t in enumerate(self.turns, 1) for _ in t.expectations]
        return per_turn + [None] * (len(self.expectations) + len(self.assertions or []))

    def expectation_paths(self) -> list[str]:
        """Where each of all_expectations() is written in the eval, for error messages."""
        per_turn = [f"turns[{k}].expectations[{i}]" for k, t in enumerate(self.turns or [])
                    for i in range(len(t.expectations))]
        own = [f"expectations[{i}]" for i in range(len(self.expectations))]
        extra = [f"assertions[{i}]" for i in range(len(self.assertions or []))]
        return per_turn + own + extra

    @property
    def turn_prompts(self) -> list[str]:
        """The user's messages in order: the one prompt for a single-prompt eval."""
        return [t.prompt for t in self.turns] if self.turns else [self.prompt]

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
    turns: list[Turn] | None = None
    assertions: list[Expectation] | None = None
