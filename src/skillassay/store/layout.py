"""Where things live in a workspace (skill-creator compatible layout) and path safety."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from skillassay.errors import InputError, Problem
from skillassay.models.config import MAX_SKILL_FILE_BYTES

RUN_DIR = re.compile(r"run-(\d+)")  # a run folder's name, run-K (run_dir writes it)
SNAPSHOT_DIR = "skill-snapshot"  # the copy of the skill an iteration ran with
SKILL_COPY_SKIPS = ("*-workspace", ".git", "__pycache__")  # never part of a skill's copy
EVALS_DIR = "evals"  # the eval set inside a skill folder (skill-creator's layout)
ANSWER_FILE = "answer.md"  # the agent's final text, written into outputs/ beside its files
USER_NOTES_FILE = "user_notes.md"  # what the executor may leave in outputs/ about its uncertainties (skill-creator's)


def default_workspace(skill_dir: Path, skill_name: str) -> Path:
    """skill-creator puts `<skill-name>-workspace/` beside the skill folder."""
    return checked_child(skill_dir.resolve().parent, f"{skill_name}-workspace")


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


def linked_folders(iteration: Path, eval_slugs: list[str], configurations: list[str]) -> list[Problem]:
    """The folders a run writes into and deletes in (the iteration, its eval folders, their
    configuration folders and run-K folders) that are symbolic links: through one, files of the
    link's target would be written and deleted (skill-snapshot/, run outputs), wherever it
    leads. Checked for an iteration asked for (--iteration) and one the run chose alike."""
    why = ("is a symbolic link: a run writes and deletes inside this folder, so it never follows a link "
           "there (it could lead anywhere); replace it with a real folder or choose another iteration")
    if iteration.is_symlink():
        return [Problem(str(iteration), "", why)]
    problems = []
    for slug in eval_slugs:
        folder = iteration / slug
        if folder.is_symlink():
            problems.append(Problem(str(folder), "", why))
            continue
        for configuration in configurations:
            config_dir = folder / configuration
            if config_dir.is_symlink():
                problems.append(Problem(str(config_dir), "", why))
                continue
            try:
                with os.scandir(config_dir) as entries:  # d_type: no stat per run folder
                    problems += [Problem(e.path, "", why) for e in entries if e.is_symlink()]
            except (FileNotFoundError, NotADirectoryError):
                continue
    return problems


def inside(base: Path, candidate: Path) -> bool:
    """True when candidate (after resolving symlinks and ..) stays inside base."""
    try:
        candidate.resolve().relative_to(base.resolve())
    except ValueError:
        return False
    return True


def checked_child(parent: Path, name: str) -> Path:
    """`parent / name` for a name that is one plain path component. Names come from files other
    people wrote (a skill's name, an eval's slug); joined unchecked, `/home/me` or `..` makes
    the path point anywhere, and what we later write or delete there is the user's."""
    if (not name or name in {".", ".."} or "/" in name or "\\" in name or "\0" in name
            or os.path.isabs(name)):
        raise InputError.one(parent, name, "not a plain file or folder name: a path built from it "
                             f"would leave {parent}")
    return ensure_inside(parent, parent / name)


def ensure_inside(parent: Path, path: Path) -> Path:
    """`path`, if it (symlinks and .. resolved) stays inside `parent` and is not `parent` itself."""
    if not inside(parent, path) or path.resolve() == parent.resolve():
        raise InputError.one(path, "", f"refusing a path outside {parent}")
    return path


def own_folder(path: Path) -> Path:
    """`path` made a real folder to write into (charts/): a symbolic link there is removed,
    never followed, since what we write would land in its target, which could be anywhere."""
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_tree(path: Path, parent: Path) -> None:
    """rmtree, only ever inside `parent`: the last line of defence for the user's folders."""
    if path.is_symlink():  # a link is removed, never what it points to
        if not inside(parent, path.parent):
            raise InputError.one(path, "", f"refusing a path outside {parent}")
        path.unlink()
        return
    shutil.rmtree(ensure_inside(parent, path))


def _skipped(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SKILL_COPY_SKIPS)


def outside_links(root: Path) -> list[Problem]:
    """Symbolic links in a skill folder that lead out of it. Followed, such a link copies a file
    of the user's (`~/.ssh/id_rsa`, say) into the snapshot and into the agent's view."""
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are listed, not entered
        dirnames[:] = [d for d in dirnames if not _skipped(d)]
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            if path.is_symlink() and not inside(root, path):
                problems.append(Problem(str(path), "", f"symbolic link to {os.readlink(path)!r} leads out of "
                                        f"the skill folder {root}: replace it with the file it points to"))
    return problems


_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def skill_file_problems(root: Path, max_file_bytes: int = MAX_SKILL_FILE_BYTES) -> list[Problem]:
    """What in a skill folder nothing may read: special files (opening a FIFO waits forever for
    a writer; a device may never end) and files over the size limit (the folder is hashed,
    copied into every snapshot and, redacted, held in memory while copied). Links are left to
    outside_links; the folders a copy skips are skipped here too."""
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are listed, not entered
        dirnames[:] = [d for d in dirnames if not _skipped(d)]
        for name in filenames:
            path = Path(dirpath) / name
            try:
                st = os.lstat(path)
            except OSError as exc:
                problems.append(Problem(str(path), "", f"cannot read: {exc.strerror}"))
                continue
            kind = next((what for test, what in _SPECIAL if test(st.st_mode)), None)
            if kind is not None:
                problems.append(Problem(str(path), "", f"is {kind}: a skill folder may hold only files, folders "
                                        "and links; remove it"))
            elif stat.S_ISREG(st.st_mode) and st.st_size > max_file_bytes:
                problems.append(Problem(str(path), "", f"{st.st_size:,} bytes is over the limit of {max_file_bytes:,} "
                                        "bytes for a file in a skill folder (max_skill_file_bytes in the benchmark "
                                        "config raises it)"))
    return problems


def copy_skill_tree(src: Path, dest: Path, copy_file: Callable[[str, str], object] = shutil.copy2,
                    *, without_evals: bool = False) -> None:
    """Copy a skill folder without following links: one that stays inside is copied as a link
    (made relative, so it points into the copy), one that leads out is refused (exit 2, naming
    it). Following them would copy outside files in, and `loop -> .` would recurse.

    `without_evals` leaves out the top-level `evals/` folder: the copy an agent is given must
    not hold the eval set's prompts and expected answers, or the with-skill arm could read
    what it is graded on while the baseline cannot."""
    if problems := outside_links(src):
        raise InputError(problems)
    skips = shutil.ignore_patterns(*SKILL_COPY_SKIPS)

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(skips(folder, names))
        if without_evals and Path(folder) == src:
            skipped |= {EVALS_DIR} & set(names)
        return skipped

    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True, copy_function=copy_file,
                    ignore=ignore)
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in (*dirnames, *filenames):
            link = Path(dirpath) / name
            if link.is_symlink() and os.path.isabs(target := os.readlink(link)):
                relative = os.path.relpath(dest / Path(target).resolve().relative_to(src.resolve()), dirpath)
                link.unlink()
                link.symlink_to(relative)
