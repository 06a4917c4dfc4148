"""Where things live in a workspace (skill-creator compatible layout) and path safety."""

from __future__ import annotations

import re
from pathlib import Path

RUN_DIR = re.compile(r"run-(\d+)")  # a run folder's name, run-K (run_dir writes it)
SNAPSHOT_DIR = "skill-snapshot"  # the copy of the skill an iteration ran with
ANSWER_FILE = "answer.md"  # the agent's final text, written into outputs/ beside its files


def default_workspace(skill_dir: Path, skill_name: str) -> Path:
    """skill-creator puts `<skill-name>-workspace/` beside the skill folder."""
    return skill_dir.resolve().parent / f"{skill_name}-workspace"


def iteration_dir(workspace: Path, n: int) -> Path:
    return workspace / f"iteration-{n}"


def existing_iterations(workspace: Path) -> list[int]:
    out = []
    if workspace.is_dir():
        for p in workspace.iterdir():
            m = re.fullmatch(r"iteration-(\d+)", p.name)
            if m and p.is_dir():
                out.append(int(m.group(1)))
    return sorted(out)


def run_dir(iteration: Path, eval_slug: str, configuration: str, run_number: int) -> Path:
    return iteration / eval_slug / configuration / f"run-{run_number}"


def inside(base: Path, candidate: Path) -> bool:
    """True when candidate (after resolving symlinks and ..) stays inside base."""
    try:
        candidate.resolve().relative_to(base.resolve())
    except ValueError:
        return False
    return True
