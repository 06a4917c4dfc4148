"""A section kept as plain data but checked against a typed model where it is read, and
described by that model in the JSON Schema (`skillassay schema`). Used for what analyze/ builds
as dicts (benchmark.json's `statistics` and `adaptive`): validating into a model and dumping it
back would reorder keys and rewrite numbers, and the readers walk the data as read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema


def where(loc: tuple[int | str, ...], root: str = "") -> str:
    """A pydantic error location as the readers say it: statistics.per_eval[0].eval_name."""
    out = root
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def problem_at(model: type[BaseModel], value: Any, root: str = "$") -> tuple[str, str] | None:
    """(where, what) for the first value the model refuses, else None."""
    try:
        model.model_validate(value)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        return where(tuple(err["loc"]), root), str(err["msg"])
    return None


def first_problem(model: type[BaseModel], value: Any, root: str) -> str | None:
    """'at <where>: <what>' for the first value the model refuses, else None."""
    found = problem_at(model, value, root)
    return None if found is None else f"at {found[0]}: {found[1]}"


class CheckedAs:
    """Annotated[dict[str, Any], CheckedAs(Model, "name")]: the dict, once Model accepts it."""

    def __init__(self, model: type[BaseModel], name: str) -> None:
        self.model, self.name = model, name

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def check(value: dict[str, Any]) -> dict[str, Any]:
            problem = first_problem(self.model, value, self.name)
            if problem is not None:
                raise ValueError(problem)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(self.model.__pydantic_core_schema__)
