"""`skillassay validate` and `skillassay schema`: check spec files and skill folders before a
benchmark spends money on them, and publish our JSON Schemas for editors and other tools.

Validation collects problems instead of stopping at the first, so one run of `validate` over a
workspace lists everything to fix. Unreadable input (missing, empty, not UTF-8, not JSON) is a
problem like any other, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from skillassay.errors import InputError, Problem
from skillassay.models import MODELS, EvalSet
from skillassay.spec.skillmd import check_skill_folder
from skillassay.store.jsonio import load_model

KINDS = tuple(MODELS)


def kind_of(path: Path) -> str | None:
    """The file kind from its name, or None. `evals.json` -> evals, `comparison-2.json` ->
    comparison, anything with "config" in its name -> config, `benchmark_old.json` -> benchmark."""
    name = path.name.lower()
    if not name.endswith(".json"):
        return None
    stem = name.removesuffix(".json")
    if stem in MODELS:
        return stem
    if "config" in stem:
        return "config"
    # skill-creator names its blind comparisons comparison-1.json, comparison-2.json, ...
    for kind in MODELS:
        if stem.startswith((kind + "-", kind + "_")):
            return kind
    return None


def _unknown_kind(path: Path) -> Problem:
    return Problem(str(path), "", "cannot tell the file kind from its name; use --kind with one "
                   "of: " + ", ".join(KINDS))


def validate_file(path: Path, kind: str) -> list[Problem]:
    try:
        load_model(path, MODELS[kind])
    except InputError as exc:
        return exc.problems
    except RecursionError:  # json.loads on e.g. 100000 nested "[": not an InputError there
        return [Problem(str(path), "", "invalid JSON: nested too deeply to read")]
    return []


def validate_skill(path: Path) -> list[Problem]:
    """SKILL.md, plus the eval set and benchmark config `init` writes, when they exist."""
    problems = check_skill_folder(path)
    evals = path / "evals" / "evals.json"
    if evals.is_file():
        evals_problems = validate_file(evals, "evals")
        problems += evals_problems
        if not evals_problems:
            problems += _skill_name_matches(path, evals)
    config = path / "evals" / "benchmark_config.json"
    if config.is_file():
        problems += validate_file(config, "config")
    return problems


def _skill_name_matches(path: Path, evals: Path) -> list[Problem]:
    """schemas.md: evals.json's skill_name matches the frontmatter's name."""
    from skillassay.spec.skill import load_skill

    try:
        skill_name = load_skill(path).name
    except InputError:
        return []  # already reported by the SKILL.md check
    eval_set = load_model(evals, EvalSet)
    if eval_set.skill_name != skill_name:
        message = f"must match the SKILL.md name {skill_name!r}, got {eval_set.skill_name!r}"
        return [Problem(str(evals), "$.skill_name", message)]
    return []


def validate_paths(paths: list[Path], kind: str | None) -> list[Problem]:
    """Every problem in every path. Folders are skill folders; files are spec JSON files."""
    if kind is not None and kind not in MODELS:
        return [Problem("--kind", "", f"unknown kind {kind!r}; expected one of: "
                        + ", ".join(KINDS))]
    problems: list[Problem] = []
    for path in map(Path, paths):
        if path.is_dir():
            if (path / "SKILL.md").is_file():
                problems += validate_skill(path)
            else:
                problems.append(Problem(str(path), "", "is a folder without SKILL.md; expected "
                                        "a skill folder or a JSON file"))
        elif not path.exists():
            problems.append(Problem(str(path), "", "file not found"))
        elif path.name == "SKILL.md":
            problems += check_skill_folder(path.parent)
        else:
            file_kind = kind or kind_of(path)
            problems += validate_file(path, file_kind) if file_kind else [_unknown_kind(path)]
    return problems


def json_schemas(name: str | None) -> str:
    """JSON Schema text of one kind, or {kind: schema} of all kinds."""
    if name is None:
        data = {kind: model.model_json_schema() for kind, model in MODELS.items()}
    elif name in MODELS:
        data = MODELS[name].model_json_schema()
    else:
        raise InputError.one(name, "", "unknown schema kind; expected one of: " + ", ".join(KINDS))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
