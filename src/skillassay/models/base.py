"""The base of every persisted model.

Unknown fields survive a load/save round trip (extra="allow"). Files are written with
`exclude_unset`: a field is written when the file had it or the code set it, so a file we
load and save keeps exactly its own keys and values, and code that builds a model for
writing passes every field it wants on disk (defaults are for reading). A Python-level
serializer hook would do this more implicitly but costs ~25x the serialisation time, on the
hot path of every trial."""

from __future__ import annotations

import difflib
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field


class SpecModel(BaseModel):
    # defer_build: a model's validator is built on its first use, not at import. A command
    # uses a handful of the ~55 models (a 1-trial run imported them all in 0.1 s of its start).
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def to_json_dict(self) -> dict[str, Any]:
        """What write_json puts on disk, as plain data."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class ClosedSpecModel(SpecModel):
    """A file the user writes by hand (benchmark config, eval set): an unknown key is a typo
    until proven otherwise, and a typo silently ignored changes the measurement (a misspelt
    threshold is a threshold never checked), so unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


def schema_ref() -> Any:
    """The `$schema` key a top-level file may carry for editors pointed at `skillassay schema`.
    Excluded from dumps: it changes nothing measured, so it stays out of fingerprints."""
    return Field(None, alias="$schema", exclude=True, description="JSON Schema URL, for editors.")


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _model_at(tp: Any, loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class found at `loc` (a pydantic error location) under the type `tp`."""
    if not loc:
        if get_origin(tp) in (Union, types.UnionType):  # an optional block: `adaptive: Adaptive | None`
            return next((m for a in get_args(tp) if (m := _model_at(a, ())) is not None), None)
        return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None
    part, rest = loc[0], loc[1:]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        fields = {f.alias or n: f for n, f in tp.model_fields.items()} | dict(tp.model_fields)
        field = fields.get(str(part))
        return _model_at(field.annotation, rest) if field is not None else None
    args = get_args(tp)
    if get_origin(tp) in (Union, types.UnionType):
        named = [a for a in args if getattr(a, "__name__", None) == part]
        if named:  # a union branch tag in the location
            return _model_at(named[0], rest)
        return next((m for a in args if (m := _model_at(a, loc)) is not None), None)
    if get_origin(tp) in (list, tuple, set, frozenset) and isinstance(part, int) and args:
        return _model_at(args[0], rest)
    if get_origin(tp) is dict and len(args) == 2:
        return _model_at(args[1], rest)
    return None


def unknown_key_message(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """What to say for the unknown key at `loc`: the nearest known key (difflib), else the
    known keys, so `min_pass_rat` reads as the typo of `min_pass_rate` it is."""
    key = str(loc[-1]) if loc else ""
    owner = _model_at(model, tuple(loc[:-1]))
    known = [k for k in _keys(owner) if k != "$schema"] if owner is not None else []
    near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if near:
        return f"unknown key {key!r}; did you mean {near[0]!r}?"
    return f"unknown key {key!r}; known keys: {', '.join(known)}" if known else f"unknown key {key!r}"
