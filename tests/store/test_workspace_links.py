"""A workspace is someone else's folder too (issue 40): `run --iteration 1` deleted and wrote
inside the target of a symlinked iteration-1 (skill-snapshot/, its temp copy, run outputs: 19
files). Every folder of the iteration a run writes into (the iteration, its eval folders, their
configuration and run folders) is refused when it is a symbolic link (exit 2, naming it), whether
the iteration was asked for with --iteration or chosen by the run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cli_runner import cli
from greeter_skill import make_skill


def run(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    result = cli(["run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws),
                                 *extra])
    return result.exit_code, result.output


def tree(folder: Path) -> dict[str, int]:
    """Every file under folder with its mtime: what must not change."""
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_an_explicit_iteration_that_is_a_link_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    victim = tmp_path / "users-own-folder"
    victim.mkdir()
    (victim / "thesis.txt").write_text("years of work", encoding="utf-8")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "iteration-1").symlink_to(victim)
    before = tree(victim)
    code, out = run(skill, ws, "--iteration", "1")
    assert code == 2, out
    assert "iteration-1" in out and "symbolic link" in out, out
    assert tree(victim) == before


def test_a_chosen_iteration_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """Automatic choice: the link leads to a real iteration of this skill, which would resume."""
    skill = make_skill(tmp_path / "skills")
    first = tmp_path / "first"
    code, out = run(skill, first)
    assert code in (0, 1, 3), out
    elsewhere = tmp_path / "elsewhere"
    shutil.move(first / "iteration-1", elsewhere)
    os.remove(elsewhere / "eval-1" / "with_skill" / "run-1" / "grading.json")  # resuming would run it again
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "iteration-1").symlink_to(elsewhere)
    before = tree(elsewhere)
    code, out = run(skill, ws)
    assert code == 2, out
    assert "iteration-1" in out and "symbolic link" in out, out
    assert tree(elsewhere) == before


def test_an_eval_or_run_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    ws = tmp_path / "ws"
    code, out = run(skill, ws)
    assert code in (0, 1, 3), out
    it = ws / "iteration-1"
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine", encoding="utf-8")
    for folder in (it / "eval-1" / "with_skill" / "run-1", it / "eval-1"):
        shutil.rmtree(folder)
        folder.symlink_to(victim)
        before = tree(victim)
        code, out = run(skill, ws, "--iteration", "1")
        assert code == 2, out
        assert folder.name in out and "symbolic link" in out, out
        assert tree(victim) == before
        folder.unlink()


def test_a_run_file_that_is_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    """The files a trial writes in place (transcripts, metrics) go to the link's own name."""
    skill = make_skill(tmp_path / "skills")
    ws = tmp_path / "ws"
    code, out = run(skill, ws)
    assert code in (0, 1, 3), out
    run_dir = ws / "iteration-1" / "eval-1" / "with_skill" / "run-1"
    victim = tmp_path / "victim.txt"
    victim.write_text("mine", encoding="utf-8")
    (run_dir / "grading.json").unlink()  # the trial runs again, over what is there
    for name in ("transcript.jsonl", "transcript.md"):
        (run_dir / name).unlink()
        (run_dir / name).symlink_to(victim)
    code, out = run(skill, ws)
    assert code in (0, 1, 3), out
    assert victim.read_text(encoding="utf-8") == "mine"
    assert not (run_dir / "transcript.jsonl").is_symlink() and (run_dir / "grading.json").is_file()


def test_a_charts_folder_that_is_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    """Audit of 570a166: a linked iteration-1/charts was followed: `run --iteration 1` and
    `report` overwrote the link target's pass_rate.png. The charts folder is the iteration's
    own: a link there is removed (never followed) and a real folder made."""
    skill = make_skill(tmp_path / "skills")
    ws = tmp_path / "ws"
    code, out = run(skill, ws)
    assert code in (0, 1, 3), out
    charts = ws / "iteration-1" / "charts"
    assert (charts / "pass_rate.png").is_file()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "pass_rate.png").write_text("precious", encoding="utf-8")
    for command in (lambda: run(skill, ws, "--iteration", "1"),
                    lambda: (lambda r: (r.exit_code, r.output))(cli(["report", str(ws / "iteration-1")]))):
        shutil.rmtree(charts)
        charts.symlink_to(victim)
        code, out = command()
        assert code in (0, 1, 3), out
        assert (victim / "pass_rate.png").read_text(encoding="utf-8") == "precious"
        assert sorted(p.name for p in victim.iterdir()) == ["pass_rate.png"]
        assert not charts.is_symlink() and (charts / "pass_rate.png").stat().st_size > 1000
