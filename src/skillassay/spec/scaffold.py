"""`skillassay init`: starter evals and a benchmark config beside an existing skill.

The starter files are deliberately incomplete (TODO prompts and placeholder values) but
well-formed, so the author only edits text, never structure. Every placeholder starts with
PLACEHOLDER, and `validate` and `run` refuse an eval set that still holds one: trials of
"TODO: replace..." prompts measure nothing, yet would become the "previous" iteration that the
next run is compared with. They show both kinds of expectation: a typed assertion (checked by
a program) and a plain statement (graded by an LLM judge)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillassay.errors import InputError, Problem
from skillassay.models import Assertion, BenchmarkConfig, EvalSet
from skillassay.models.base import SpecModel
from skillassay.spec.skill import load_skill
from skillassay.store.jsonio import parse_model, write_json

EVALS_FILE = "evals.json"
CONFIG_FILE = "benchmark_config.json"
# The start of every placeholder text in the starter evals (and nothing a real eval says first).
PLACEHOLDER = "TODO: "


def _task(description: str) -> str:
    """The description's first sentence, as the thing the starter prompts ask for."""
    first = re.split(r"(?<=[.!?])\s", " ".join(description.split()), maxsplit=1)[0]
    return first.rstrip(".!?")


def starter_evals(skill_name: str, description: str) -> dict[str, Any]:
    task = _task(description)
    kinds = [
        ("typical-use", "a typical, realistic user request"),
        ("edge-case", "a harder or unusual user request (messy input, missing details)"),
        ("multi-step", "a user request that needs several steps or input files"),
    ]
    evals = []
    for i, (name, what) in enumerate(kinds, start=1):
        evals.append({
            "id": i,
            "name": name,
            "prompt": f"{PLACEHOLDER}replace with {what} for a skill that does this: {task}.",
            "expected_output": f"{PLACEHOLDER}describe what a good answer to {name} looks like.",
            "files": [],
            "expectations": [
                {"type": "contains", "value": f"{PLACEHOLDER}text a correct answer must contain"},
                f"{PLACEHOLDER}a statement about the output that a judge can check against evidence",
            ],
        })
    return {"skill_name": skill_name, "evals": evals}


def starter_config(skill_name: str) -> dict[str, Any]:
    """The spec's Step 1 example. Paths are relative to the config file's folder (evals/), so
    the skill folder can be moved or checked out anywhere."""
    return {
        "skill_name": skill_name,
        "skill_path": "..",
        "eval_set_path": EVALS_FILE,
        "trials_per_eval": 3,
        "baseline_type": "no_skill",
        "previous_benchmark": None,
        "thresholds": {
            "min_pass_rate": 0.8,
            "max_avg_tokens": 100000,
            "max_avg_duration_seconds": 120,
            "min_improvement_ratio": 1.0,
        },
    }


def init_skill(skill_dir: Path) -> list[Path]:
    """Write evals/evals.json and evals/benchmark_config.json; return their paths.

    Refuses before writing anything if either exists: hand-written evals are the most
    valuable file in a skill and must never be replaced by a template."""
    skill = load_skill(Path(skill_dir))
    folder = skill.path / "evals"
    targets = [folder / EVALS_FILE, folder / CONFIG_FILE]
    existing = [p for p in targets if p.exists()]
    if existing:
        raise InputError([Problem(str(p), "", "already exists; not overwriting it (move it away "
                                  "to scaffold a fresh one)") for p in existing])
    # The dicts are written as built (readable key order, 120 not 120.0), but only after the
    # models accept them, so a template that drifts from the spec fails here, not in a run.
    files: dict[Path, tuple[Any, type[SpecModel]]] = {
        targets[0]: (starter_evals(skill.name, skill.description), EvalSet),
        targets[1]: (starter_config(skill.name), BenchmarkConfig),
    }
    for path, (data, model) in files.items():
        parse_model(data, model, path)
    for path, (data, _model) in files.items():
        write_json(path, data)
    return targets


def _texts(eval_set: EvalSet) -> list[tuple[str, object]]:
    """(JSON path, value) of every text an author writes in an eval set."""
    out: list[tuple[str, object]] = []
    for i, ev in enumerate(eval_set.evals):
        where = f"$.evals[{i}]"
        out += [(f"{where}.prompt", ev.prompt), (f"{where}.expected_output", ev.expected_output)]
        for key in ("expectations", "assertions"):
            for j, exp in enumerate(getattr(ev, key) or []):
                if isinstance(exp, Assertion):
                    params = {"text": exp.text, **exp.params}
                    out += [(f"{where}.{key}[{j}].{name}", value) for name, value in params.items()]
                else:
                    out.append((f"{where}.{key}[{j}]", exp))
    return out


def placeholder_problems(eval_set: EvalSet, path: Path | str) -> list[Problem]:
    """Every placeholder `init` wrote that is still in the eval set, named by its JSON path."""
    return [Problem(str(path), where, "placeholder left by `skillassay init`: replace it with your own "
                    "text (nothing runs until every placeholder is edited)")
            for where, value in _texts(eval_set)
            if isinstance(value, str) and value.startswith(PLACEHOLDER)]
