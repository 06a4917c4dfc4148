"""Reading and writing our JSON files. Writes are atomic (temp file + rename in the same
folder) so a killed run never leaves half a file; reads turn every failure into InputError
naming the file and the JSON path."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from skillassay.errors import InputError, Problem

M = TypeVar("M", bound=BaseModel)


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and os.replace it, which is atomic on POSIX."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def dump_json(data: Any) -> str:
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json", by_alias=True)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, dump_json(data))


def read_json(path: Path) -> Any:
    """Parse a JSON file; any failure (missing, folder, empty, bad encoding, bad JSON) is an
    InputError that names the file and, for syntax errors, the line and column."""
    if not path.exists():
        raise InputError.one(path, "", "file not found")
    if path.is_dir():
        raise InputError.one(path, "", "is a directory, expected a JSON file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.one(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        raise InputError.one(path, "", f"cannot read: {exc.strerror}")
    if not text.strip():
        raise InputError.one(path, "", "file is empty, expected a JSON object")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.one(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}")


def json_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validation_problems(path: Path | str, exc: ValidationError) -> list[Problem]:
    problems = []
    for err in exc.errors(include_url=False):
        # pydantic puts union/tagged-union member names into loc; they are noise to a user.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in {"str", "Assertion"})))
        problems.append(Problem(str(path), json_path(loc), err["msg"]))
    return problems


def load_model(path: Path, model: type[M]) -> M:
    data = read_json(path)
    return parse_model(data, model, path)


def parse_model(data: Any, model: type[M], path: Path | str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(validation_problems(path, exc)) from None
