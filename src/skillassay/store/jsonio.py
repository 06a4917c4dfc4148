"""Reading and writing our JSON files. Writes are atomic (temp file + rename in the same
folder) so a killed run never leaves half a file; reads turn every failure into InputError
naming the file and the JSON path."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from skillassay.errors import InputError, Problem
from skillassay.models.base import unknown_key_message

M = TypeVar("M", bound=BaseModel)


@contextlib.contextmanager
def atomic_open(path: Path | str) -> Iterator[TextIO]:
    """A text file handle whose content replaces `path` atomically (temp file in the same
    folder + os.replace) when the block ends without error; on error the temp file goes."""
    # Hot path (six files per trial): plain string paths, and a per-process, per-thread temp
    # name that is unique without mkstemp's cost.
    folder, name = os.path.split(os.fspath(path))
    tmp = f"{folder}/.{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    # newline="\n": the same bytes on every OS, and aggregate writes runs[] as bytes beneath the
    # text layer, which would otherwise mix LF into a CRLF file on Windows.
    try:
        try:
            fh = open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fh = open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        with fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def now_iso() -> str:
    """The one timestamp format of every file we write (UTC, microseconds, trailing Z)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def atomic_write_text(path: Path | str, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def dump_json(data: Any) -> str:
    """Pretty JSON via pydantic-core's Rust encoder (the stdlib encoder falls back to pure
    Python whenever indent is set: ~25x slower, and this runs several times per trial)."""
    if isinstance(data, BaseModel):
        return data.model_dump_json(indent=2, by_alias=True, exclude_unset=True) + "\n"
    return to_json(data, indent=2).decode("utf-8") + "\n"


def write_json(path: Path | str, data: Any) -> None:
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
        raise InputError.one(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError.one(path, "", f"cannot read: {exc.strerror}") from None
    if not text.strip():
        raise InputError.one(path, "", "file is empty, expected a JSON object")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.one(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None


def json_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


_SCALAR_BRANCHES = {"str", "int", "float", "bool", "none", "list", "dict"}


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _is_branch_tag(part: int | str, node: Any) -> bool:
    """pydantic puts union member names (`str`, `Assertion`, `literal[...]`) into loc. A part is
    such a tag only if it is not a real key of the input there, so user keys ("Read", "A") stay."""
    if not isinstance(part, str) or (isinstance(node, dict) and part in node):
        return False
    return "[" in part or part in _SCALAR_BRANCHES or part[:1].isupper()


def validation_problems(
    path: Path | str, exc: ValidationError, data: Any = None, model: type[BaseModel] | None = None
) -> list[Problem]:
    """One Problem per wrong place. Union branches that cannot match the input's JSON type
    (the `str` branch when an object was given) are dropped, and what is left at one place is
    merged into one message, so `{"value": 1}` as an expectation reads as a missing `type`."""
    found: list[tuple[str, str, str | None, bool]] = []  # (where, message, union node, noise)
    for err in exc.errors(include_url=False):
        node, loc, union, noise = data, [], None, False
        for part in err["loc"]:
            if _is_branch_tag(part, node):
                if union is None:
                    union = json_path(tuple(loc))
                    if isinstance(node, dict):
                        noise = part in _SCALAR_BRANCHES
                    else:
                        noise = err["type"] in {"model_type", "dict_type"}
                continue
            loc.append(part)
            if isinstance(node, dict):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                node = None
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "model_type":  # "valid dictionary or instance of Stat" is pydantic-speak
            msg = f"expected a JSON object, got {_json_type(err['input'])}"
        if "[key]" in err["loc"]:
            msg = f"invalid key: {msg}"
        if err["type"] == "extra_forbidden" and model is not None:
            msg = unknown_key_message(model, err["loc"])
        found.append((json_path(tuple(loc)), msg, union, noise))
    # Drop noise only when its union has another branch's error to show instead.
    useful = {u for _, _, u, noise in found if u is not None and not noise}
    merged: dict[str, list[str]] = {}
    for where, msg, union, noise in found:
        if noise and union in useful:
            continue
        if msg not in merged.setdefault(where, []):
            merged[where].append(msg)
    return [Problem(str(path), where, "; or ".join(msgs)) for where, msgs in merged.items()]


def load_model(path: Path, model: type[M]) -> M:
    data = read_json(path)
    return parse_model(data, model, path)


def parse_model(data: Any, model: type[M], path: Path | str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(validation_problems(path, exc, data, model)) from None
