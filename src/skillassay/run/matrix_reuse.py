"""An unchanged agent's finished trials are reused (issue 37): when a matrix iteration starts
because the agent list changed, an agent whose own fingerprint (skill, evals, its settings and
seed) equals that of an earlier iteration's same agent, or of an earlier one-agent iteration,
made the same measurement there, so its graded runs of the unchanged evals are copied in,
as reuse.reuse_unchanged_skill_runs does for a changed eval set, instead of paid for again."""

from __future__ import annotations

from pathlib import Path

from skillassay.errors import InputError
from skillassay.run.reuse import copy_runs, same_eval, source_fingerprint, write_provenance
from skillassay.store.agents_layout import AGENTS_DIR
from skillassay.store.layout import existing_iterations, iteration_dir


def candidates(workspace: Path, top: Path, name: str) -> list[Path]:
    """Earlier iterations' folders that may hold this agent's runs, latest first: the same
    agent of a matrix iteration, then a one-agent iteration."""
    out = []
    for n in reversed(existing_iterations(workspace)):
        it = iteration_dir(workspace, n)
        if it.resolve() == top.resolve():
            continue
        out += [it / AGENTS_DIR / name, it]  # name was checked (agent_dir) before this is called
    return out


def reuse_unchanged_agent(workspace: Path, top: Path, name: str, target: Path, fingerprint: dict[str, str],
                          slugs: list[str], trials: int, configurations: list[str]) -> int:
    """How many runs were copied into `target` (runs it already has are kept)."""
    for source in candidates(workspace, top, name):
        if not (source / "iteration.json").is_file():
            continue
        try:
            fp = source_fingerprint(source)
        except InputError:
            continue
        if fp != fingerprint:
            continue
        same = [slug for slug in slugs if same_eval(source, target, slug)]
        copied = 0
        for configuration in configurations:
            runs = copy_runs(source, target, configuration, same, trials)
            if runs:
                write_provenance(target, source, configuration, runs, f"reused_{configuration}_from_agent.json")
            copied += len(runs)
        return copied
    return 0
