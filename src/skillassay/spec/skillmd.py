"""SKILL.md checked against the Agent Skills rules (agentskills.io specification).

`skill.load_skill` only needs a name and a description to run; this check is stricter, because
a skill that breaks these rules may be skipped or mis-indexed by the agents that load it, which
would make a benchmark measure nothing. Every rule violation is reported (not just the first),
each naming SKILL.md, the frontmatter key and what was expected."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillassay.errors import InputError, Problem
from skillassay.spec.skill import name_problems, split_frontmatter
from skillassay.store.layout import SNAPSHOT_DIR

DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500


def _check_name(value: Any, folder: str | None) -> list[str]:
    if not isinstance(value, str):
        return [f"expected a string of a-z, 0-9 and '-', got {_yaml_type(value)}"]
    return name_problems(value, folder)


def _check_description(value: Any) -> list[str]:
    if not isinstance(value, str):
        return [f"expected a string saying what the skill does and when to use it, "
                f"got {_yaml_type(value)}"]
    if not value.strip():
        return ["must not be empty: say what the skill does and when to use it"]
    if len(value) > DESCRIPTION_MAX:
        return [f"must be at most {DESCRIPTION_MAX} characters, got {len(value)}"]
    return []


def _check_license(value: Any) -> list[str]:
    return [] if isinstance(value, str) else [f"expected a string, got {_yaml_type(value)}"]


def _check_compatibility(value: Any) -> list[str]:
    if not isinstance(value, str):
        return [f"expected a string, got {_yaml_type(value)}"]
    if not 1 <= len(value) <= COMPATIBILITY_MAX:
        return [f"must be 1-{COMPATIBILITY_MAX} characters, got {len(value)}"]
    return []


def _check_metadata(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"expected a mapping of string keys to string values, got {_yaml_type(value)}"]
    # YAML turns `version: 1.0` into a float; the spec wants strings, so say how to quote it.
    return [f"key {k!r}: expected a string value (quote it), got {_yaml_type(v)}"
            if isinstance(k, str) else f"key {k!r}: expected a string key, got {_yaml_type(k)}"
            for k, v in value.items() if not (isinstance(k, str) and isinstance(v, str))]


def _check_allowed_tools(value: Any) -> list[str]:
    if isinstance(value, str):
        return []
    if isinstance(value, list):
        return [f"item {i}: expected a string, got {_yaml_type(v)}"
                for i, v in enumerate(value) if not isinstance(v, str)]
    return [f"expected a string (space-separated) or a list of strings, got {_yaml_type(value)}"]


_OPTIONAL: dict[str, Callable[[Any], list[str]]] = {
    "license": _check_license,
    "compatibility": _check_compatibility,
    "metadata": _check_metadata,
    "allowed-tools": _check_allowed_tools,
}
ALLOWED_KEYS = ("name", "description", *_OPTIONAL)


def _yaml_type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    names = {bool: "a boolean", int: "a number", float: "a number", list: "a list",
             dict: "a mapping", str: "a string"}
    return names.get(type(value), type(value).__name__)


def is_snapshot(path: Path) -> bool:
    """An iteration's copy of its skill (`iteration-N/skill-snapshot/`): our own file, whose
    folder name is not the skill's, so the name-equals-folder rule does not apply to it."""
    resolved = path.resolve()
    return resolved.name == SNAPSHOT_DIR and re.fullmatch(r"iteration-\d+", resolved.parent.name) is not None


def check_skill_folder(path: Path) -> list[Problem]:
    """All rule violations of `path/SKILL.md`; an empty list means the skill is well-formed."""
    path = Path(path)
    md = path / "SKILL.md"
    if not path.is_dir():
        return [Problem(str(path), "", "skill folder not found (expected a folder with SKILL.md)")]
    if not md.is_file():
        return [Problem(str(md), "", "file not found: a skill folder must contain SKILL.md")]
    try:
        text = md.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [Problem(str(md), "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    except OSError as exc:
        return [Problem(str(md), "", f"cannot read: {exc.strerror}")]
    try:
        frontmatter, _body = split_frontmatter(text, md)
    except InputError as exc:
        return exc.problems

    file = str(md)
    problems: list[Problem] = []
    for key, what in (("name", "the skill's name (a-z, 0-9, '-'), equal to the folder name"),
                      ("description", "what the skill does and when to use it")):
        if key not in frontmatter:
            problems.append(Problem(file, key, f"required frontmatter key missing: {what}"))
    if "name" in frontmatter:
        folder = None if is_snapshot(path) else path.resolve().name
        problems += [Problem(file, "name", m) for m in _check_name(frontmatter["name"], folder)]
    if "description" in frontmatter:
        problems += [Problem(file, "description", m)
                     for m in _check_description(frontmatter["description"])]
    for key, value in frontmatter.items():
        if key in _OPTIONAL:
            problems += [Problem(file, key, m) for m in _OPTIONAL[key](value)]
        elif key not in ("name", "description"):
            problems.append(Problem(file, str(key), "unknown frontmatter key; allowed: "
                                    + ", ".join(ALLOWED_KEYS) + " (put custom data in metadata)"))
    return problems
