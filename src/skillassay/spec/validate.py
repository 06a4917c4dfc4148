"""The checks of spec files that need nothing above `spec/`: each JSON file against its model,
an eval set against its skill (name, input files), and our JSON Schemas for editors.

`run/preflight.py` combines these with the checks that need plugins (assertions, executors)
into the one validation path that `skillassay validate` and `skillassay run` share. Problems
are collected instead of stopping at the first, so one run lists everything to fix; unreadable
input (missing, empty, not UTF-8, not JSON) is a problem like any other, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path, PurePath

from skillassay.errors import InputError, Problem
from skillassay.models import KINDS, EvalSet, model_of
from skillassay.spec import trigger_evals
from skillassay.store.jsonio import load_model
from skillassay.store.layout import inside


def kind_of(path: Path) -> str | None:
    """The file kind from its name, or None. `evals.json` -> evals, `comparison-2.json` ->
    comparison, anything with "config" in its name -> config, `benchmark_old.json` -> benchmark."""
    name = path.name.lower()
    if not name.endswith(".json"):
        return None
    stem = name.removesuffix(".json")
    if stem == trigger_evals.KIND:  # a bare list, so no model kind: read as `triggers` reads it
        return stem
    if stem in KINDS:
        return stem
    if "config" in stem:
        return "config"
    # skill-creator names its blind comparisons comparison-1.json, comparison-2.json, ...
    for kind in KINDS:
        if stem.startswith((kind + "-", kind + "_")):
            return kind
    return None


# What `validate` tells apart: the models' kinds and the trigger eval set.
FILE_KINDS = (*KINDS, trigger_evals.KIND)


def unknown_kind(path: Path) -> Problem:
    return Problem(str(path), "", "cannot tell the file kind from its name; use --kind with one "
                   "of: " + ", ".join(FILE_KINDS))


def validate_file(path: Path, kind: str) -> list[Problem]:
    if kind == trigger_evals.KIND:
        return trigger_evals.trigger_eval_problems(path)
    try:
        load_model(path, model_of(kind))
    except InputError as exc:
        return exc.problems
    except RecursionError:  # json.loads on e.g. 100000 nested "[": not an InputError there
        return [Problem(str(path), "", "invalid JSON: nested too deeply to read")]
    return []


def skill_name_problems(eval_set: EvalSet, skill_name: str, path: Path) -> list[Problem]:
    """schemas.md: evals.json's skill_name matches the frontmatter's name."""
    if eval_set.skill_name != skill_name:
        message = f"must match the SKILL.md name {skill_name!r}, got {eval_set.skill_name!r}"
        return [Problem(str(path), "$.skill_name", message)]
    return []


def resolve_input_files(evals: EvalSet, evals_path: Path, skill_dir: Path | None
                        ) -> tuple[dict[int, list[Path]], list[Problem]]:
    """`files` are relative to the skill root (spec), or to the eval set's folder; anything
    resolving outside both (../, absolute paths elsewhere, symlinks out) is refused. Without a
    skill folder (an eval set validated on its own) only what can be judged without one is:
    absolute paths and `..` that climbs out of the eval set's folder."""
    roots = [skill_dir.resolve()] if skill_dir is not None else []
    roots.append(evals_path.parent.resolve())
    out: dict[int, list[Path]] = {}
    problems: list[Problem] = []
    for i, ev in enumerate(evals.evals):
        paths = []
        for j, rel in enumerate(ev.files):
            where = f"$.evals[{i}].files[{j}]"
            outside = Problem(str(evals_path), where, f"{rel!r} points outside the skill and eval set folders")
            escapes = PurePath(rel).is_absolute() or not any(inside(root, root / rel) for root in roots)
            if skill_dir is None:
                problems += [outside] if escapes else []
                continue
            found = next((c for c in (root / rel for root in roots) if c.is_file()), None)
            if found is not None and any(inside(root, found) for root in roots):
                paths.append(found.resolve())
            elif found is not None or escapes:
                problems.append(outside)
            else:
                problems.append(Problem(str(evals_path), where, f"input file {rel!r} not found under {roots[0]}"))
        out[ev.id] = paths
    return out, problems


def json_schemas(name: str | None) -> str:
    """JSON Schema text of one kind, or {kind: schema} of all kinds."""
    if name is None:
        data = {kind: model_of(kind).model_json_schema() for kind in KINDS}
    elif name in KINDS:
        data = model_of(name).model_json_schema()
    else:
        raise InputError.one(name, "", "unknown schema kind; expected one of: " + ", ".join(KINDS))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
