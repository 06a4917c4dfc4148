"""A skill folder is someone else's file: its name, its links and a kill in the middle of
copying it must never make skillassay write or delete outside its workspace (issue 15)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import repo_paths
from cli_runner import cli

from skillassay.errors import InputError
from skillassay.executors.subprocess_util import installed_skill
from skillassay.run.plan import hash_tree
from skillassay.spec.skill import Skill, load_skill
from skillassay.store.jsonio import atomic_open, remove_stale_temps
from skillassay.store.layout import checked_child, default_workspace, remove_tree
from skillassay.store.lock import WorkspaceLock

REPO = repo_paths.REPO


def make_skill(parent: Path, name: str, folder: str = "greeter") -> Path:
    skill = parent / folder
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {json.dumps(name)}\ndescription: Greets. Use when asked "
                                    "to greet.\n---\nSay hello.\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": name, "evals": [
        {"id": 1, "prompt": "Say hello", "expectations": [{"type": "contains", "value": "hello"}]}]}),
        encoding="utf-8")
    return skill


def victim_folder(tmp_path: Path) -> Path:
    """A folder of the user's that nothing may touch."""
    victim = tmp_path / "users-own-folder"
    victim.mkdir()
    (victim / "thesis.txt").write_text("years of work", encoding="utf-8")
    return victim


def run(*args: str) -> tuple[int, str]:
    result = cli(list(args))
    return result.exit_code, result.output


# ------------------------------------------------------------------------------ the name

@pytest.mark.parametrize("bad", ["ABSOLUTE", "../escape", "Has Space", "a" * 65, "-dash", "a--b"])
def test_run_refuses_an_invalid_name_before_building_any_path(tmp_path: Path, bad: str) -> None:
    victim = victim_folder(tmp_path)
    name = str(victim) if bad == "ABSOLUTE" else bad
    skill = make_skill(tmp_path / "skills", name)
    code, out = run("run", str(skill), "--executor", "echo", "--trials", "1")
    assert code == 2, out
    assert "SKILL.md" in out and "name" in out
    assert (victim / "thesis.txt").read_text() == "years of work"
    # without --workspace the workspace would have been <name>-workspace, wherever that points
    assert not list(tmp_path.rglob("*-workspace")), list(tmp_path.rglob("*-workspace"))


def test_installed_skill_never_copies_to_or_deletes_an_absolute_name(tmp_path: Path) -> None:
    """The claude-code and codex executors install the skill at <workdir>/.claude/skills/<name>
    and delete it after the trial: with an absolute name that was the user's folder."""
    victim = victim_folder(tmp_path)
    real = load_skill(make_skill(tmp_path / "skills", "greeter"))
    hostile = Skill(path=real.path, name=str(victim), description=real.description, body=real.body,
                    frontmatter=real.frontmatter)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(InputError), installed_skill(hostile, work / ".claude" / "skills"):
        pass
    assert sorted(p.name for p in victim.iterdir()) == ["thesis.txt"]
    assert (victim / "thesis.txt").read_text() == "years of work"


def test_installed_skill_still_installs_and_removes_a_valid_one(tmp_path: Path) -> None:
    skill = load_skill(make_skill(tmp_path / "skills", "greeter"))
    work = tmp_path / "work"
    work.mkdir()
    with installed_skill(skill, work / ".claude" / "skills") as dest:
        assert dest == work / ".claude" / "skills" / "greeter"
        assert (dest / "SKILL.md").is_file()
    assert not (work / ".claude").exists()


def test_an_installed_skill_leaves_its_eval_set_behind(tmp_path: Path) -> None:
    """A CLI agent reads whatever is in its skills folder: the eval set's expected answers must
    not be there (only the top-level evals/: a skill's own nested folder of that name stays)."""
    folder = make_skill(tmp_path / "skills", "greeter")
    (folder / "evals").mkdir(exist_ok=True)
    (folder / "evals" / "evals.json").write_text('{"evals": []}')
    (folder / "scripts" / "evals").mkdir(parents=True)
    (folder / "scripts" / "evals" / "keep.txt").write_text("part of the skill")
    work = tmp_path / "work"
    work.mkdir()
    with installed_skill(load_skill(folder), work / ".claude" / "skills") as dest:
        assert dest is not None and (dest / "SKILL.md").is_file()
        assert not (dest / "evals").exists()
        assert (dest / "scripts" / "evals" / "keep.txt").is_file()


@pytest.mark.parametrize("name", ["/etc", "..", ".", "", "a/b", "a\\b", "x\0y"])
def test_safe_child_refuses_names_that_leave_the_parent(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError):
        checked_child(tmp_path, name)


def test_default_workspace_is_built_from_the_checked_name_only(tmp_path: Path) -> None:
    assert default_workspace(tmp_path / "greeter", "greeter") == tmp_path.resolve() / "greeter-workspace"
    with pytest.raises(InputError):
        default_workspace(tmp_path / "greeter", "../../elsewhere")


def test_remove_tree_refuses_a_path_outside_its_parent_and_a_link_out(tmp_path: Path) -> None:
    victim = victim_folder(tmp_path)
    parent = tmp_path / "workspace"
    parent.mkdir()
    with pytest.raises(InputError):
        remove_tree(victim, parent)
    with pytest.raises(InputError):
        remove_tree(parent / ".." / victim.name, parent)
    link = parent / "link"
    link.symlink_to(victim)
    remove_tree(link, parent)  # the link goes, never what it points to
    assert not link.is_symlink() and (victim / "thesis.txt").is_file()


# --------------------------------------------------------------------------- the links

def test_a_link_out_of_the_skill_is_refused_naming_it(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY MATERIAL", encoding="utf-8")
    skill = make_skill(tmp_path / "skills", "greeter")
    (skill / "notes.txt").symlink_to(secret)
    ws = tmp_path / "ws"
    code, out = run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))
    assert code == 2, out
    assert "notes.txt" in out and "leads out of" in out
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()
              and p != secret and "PRIVATE KEY MATERIAL" in p.read_text(errors="replace")]
    assert leaked == []


def test_a_loop_link_and_an_inner_link_are_copied_as_links(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", "greeter")
    (skill / "loop").symlink_to(".")
    (skill / "docs").mkdir()
    (skill / "docs" / "guide.md").write_text("guide", encoding="utf-8")
    (skill / "guide-link.md").symlink_to(skill / "docs" / "guide.md")  # absolute, but inside
    ws = tmp_path / "ws"
    for _ in range(2):  # the second run used to find 41 nested copies of SKILL.md
        code, out = run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))
        assert code in (0, 1, 3), out
    snap = ws / "iteration-1" / "skill-snapshot"
    assert (snap / "loop").is_symlink() and os.readlink(snap / "loop") == "."
    link = snap / "guide-link.md"
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    assert link.resolve() == (snap / "docs" / "guide.md").resolve()  # into the copy, not the original
    skill_mds = [Path(d) / f for d, _, files in os.walk(snap) for f in files if f == "SKILL.md"]
    assert skill_mds == [snap / "SKILL.md"]


# ------------------------------------------------------------------------ the snapshot

def test_resume_replaces_an_incomplete_snapshot(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", "greeter")
    for i in range(20):
        (skill / "references" / f"{i}.md").parent.mkdir(exist_ok=True)
        (skill / "references" / f"{i}.md").write_text(f"reference {i}", encoding="utf-8")
    ws = tmp_path / "ws"
    assert run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))[0] in (0, 1, 3)
    snap = ws / "iteration-1" / "skill-snapshot"
    for i in range(5, 20):  # what a kill during the copy left
        (snap / "references" / f"{i}.md").unlink()
    (snap / "SKILL.md").write_text("---\nname: greeter\n", encoding="utf-8")
    code, out = run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))
    assert code in (0, 1, 3), out
    assert not (ws / "iteration-2").exists(), "the same skill resumes iteration-1"
    assert hash_tree(snap) == hash_tree(skill)
    record = json.loads((ws / "iteration-1" / "iteration.json").read_text())
    assert record["snapshot_sha256"] == hash_tree(snap)


@pytest.mark.slow
def test_a_run_killed_while_copying_the_snapshot_is_made_whole_on_resume(tmp_path: Path) -> None:
    """The real thing: SIGKILL `run` as soon as the snapshot copy has started on a big skill."""
    skill = make_skill(tmp_path / "skills", "greeter")
    refs = skill / "references"
    refs.mkdir()
    for i in range(600):
        (refs / f"{i:04}.md").write_text(f"reference {i}\n" * 20, encoding="utf-8")
    ws = tmp_path / "ws"
    argv = [sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "echo", "--trials", "1",
            "--workspace", str(ws)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    it = ws / "iteration-1"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if it.is_dir() and any("snapshot" in p.name for p in it.iterdir()):
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.001)
    proc.wait(timeout=60)
    snap = it / "skill-snapshot"
    assert not snap.exists() or hash_tree(snap) == hash_tree(skill), "a cut-short copy passed for the snapshot"
    code, out = run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))
    assert code in (0, 1, 3), out
    assert hash_tree(snap) == hash_tree(skill)
    assert [p.name for p in it.iterdir() if p.name.endswith(".tmp")] == []


# ---------------------------------------------------------------------- temp files, lock

def test_stale_temp_files_of_a_killed_aggregation_are_removed(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", "greeter")
    ws = tmp_path / "ws"
    assert run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))[0] in (0, 1, 3)
    it = ws / "iteration-1"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    stale = it / f".benchmark.json.{int(dead.stdout)}.140000000000.tmp"
    stale.write_text("x" * 233_000, encoding="utf-8")
    live = it / f".benchmark.json.{os.getpid()}.1.tmp"  # a live process's: not ours to take
    live.write_text("in progress", encoding="utf-8")
    code, out = run("aggregate", str(it))
    assert code == 0, out
    assert not stale.exists() and live.exists()
    live.unlink()
    run_dir = next(it.glob("eval-*/with_skill/run-1"))
    half_graded = run_dir / f".grading.json.{int(dead.stdout)}.7.tmp"
    for command in (["run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws)],
                    ["grade", str(it)]):
        stale.write_text("again", encoding="utf-8")
        half_graded.write_text("{", encoding="utf-8")
        (run_dir / "grading.json").unlink()  # that trial is not done: it runs (or is graded) again
        code, out = run(*command)
        assert code in (0, 1, 3), out
        assert not stale.exists() and not half_graded.exists(), command


def test_remove_stale_temps_leaves_other_files(tmp_path: Path) -> None:
    (tmp_path / "benchmark.json.tmp").write_text("not ours by name")
    (tmp_path / ".benchmark.json.999999999.1.tmp").mkdir()  # a folder, not our temp file
    with atomic_open(tmp_path / "benchmark.json") as fh:
        fh.write("{}")
        assert remove_stale_temps(tmp_path) == []  # our own open temp file stays
    assert sorted(p.name for p in tmp_path.iterdir()) == [".benchmark.json.999999999.1.tmp", "benchmark.json",
                                                          "benchmark.json.tmp"]


def test_aggregate_takes_the_workspace_lock(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", "greeter")
    ws = tmp_path / "ws"
    assert run("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws))[0] in (0, 1, 3)
    before = (ws / "iteration-1" / "benchmark.json").read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from skillassay.store.lock import WorkspaceLock\n"
        f"lock = WorkspaceLock(Path({str(ws)!r}), 'run'); lock.acquire(); print('held', flush=True); "
        "time.sleep(60)")], env={**os.environ, "PYTHONPATH": str(REPO / "src")}, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out = run("aggregate", str(ws / "iteration-1"))
        assert code == 2, out
        assert "run" in out and str(ws) in out.replace("\n", "")
        assert (ws / "iteration-1" / "benchmark.json").read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    with WorkspaceLock(ws, "test"):
        pass  # released: free again
