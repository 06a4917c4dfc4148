"""A finished iteration's design is never changed in place (issue 34): `run --adaptive` on an
iteration run with 3 fixed trials grew it to 6 per arm and replaced its INCONCLUSIVE with a PASS
while its report still said the old design. More trials of the same skill are a new iteration;
resuming with another design is refused (exit 2) with the command that does it."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import cli


def run(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    result = cli(["run", str(skill), "--executor", "echo", "--workspace", str(ws), *extra])
    return result.exit_code, result.output


def snapshot(it: Path) -> dict[str, bytes]:
    """Every file but the charts, which a child the run does not wait for draws a moment later."""
    return {str(p.relative_to(it)): p.read_bytes() for p in sorted(it.rglob("*"))
            if p.is_file() and p.parent.name != "charts"}


def test_adaptive_on_a_finished_fixed_iteration_is_refused_and_says_how(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run(example_skill, ws, "--trials", "3")
    assert code in (0, 1, 3), out
    it = ws / "iteration-1"
    before = snapshot(it)
    code, out = run(example_skill, ws, "--adaptive")
    assert code == 2, out
    assert "iteration.json" in out and "--iteration 2" in out and "--trials 3" in out, out
    assert snapshot(it) == before, "the finished iteration was changed"
    assert not (ws / "iteration-2").exists()
    # the command it names starts a new iteration with the new design
    code, out = run(example_skill, ws, "--adaptive", "--iteration", "2")
    assert code in (0, 1, 3), out
    assert json.loads((ws / "iteration-2" / "benchmark.json").read_text())["adaptive"]
    assert snapshot(it) == before


def test_more_fixed_trials_on_a_finished_iteration_are_refused(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert run(example_skill, ws, "--trials", "2")[0] in (0, 1, 3)
    it = ws / "iteration-1"
    before = snapshot(it)
    for other in ("3", "1"):  # more trials would be added, fewer would drop some from the figures
        code, out = run(example_skill, ws, "--trials", other)
        assert code == 2 and "--iteration 2" in out, out
        assert snapshot(it) == before
    # the same design resumes it, as always: nothing to run
    code, out = run(example_skill, ws, "--trials", "2")
    assert code in (0, 1, 3) and "iteration 1: 0 trials run" in out, out
