"""Where an agent CLI's private HOME lives during a trial: a fresh folder per trial in the
user's cache folder (platformdirs), removed after the trial.

Not under the system temp folder: Codex refuses to create its sandbox helper binaries under
the temp folder ("Refusing to create helper binaries under temporary dir"), and with bubblewrap
on PATH every shell command of the trial then fails with `bwrap: execvp codex-linux-sandbox`
while the trial still ends "ok". A cache folder is private to the user (0700) and is not a
parent of the trial's work folder, so no skill or CLAUDE.md placed there reaches an agent."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import platformdirs

from skillassay.store.layout import remove_tree

HOMES = "agent-homes"


def homes_root() -> Path:
    """The folder holding every running trial's HOME (made on first use, private to the user)."""
    return Path(platformdirs.user_cache_dir("skillassay")) / HOMES


def under_temp(path: Path) -> bool:
    """Whether `path` lies in the system temp folder ($TMPDIR or /tmp), where Codex refuses to
    put its helpers."""
    temp = Path(tempfile.gettempdir()).resolve()
    resolved = path.resolve()
    return resolved == temp or temp in resolved.parents


def home_problem() -> str | None:
    """Why a trial's HOME cannot go where it must (None: it can): for ready()."""
    root = homes_root()
    if under_temp(root):
        return (f"the cache folder {root} is inside the temp folder {tempfile.gettempdir()}, where Codex refuses to "
                "create its sandbox helper (its shell commands would all fail): set XDG_CACHE_HOME to a folder "
                "outside it")
    return None


@contextlib.contextmanager
def private_home(prefix: str) -> Iterator[Path]:
    """A fresh, empty HOME for one trial, removed afterwards whatever happened."""
    root = homes_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    home = Path(tempfile.mkdtemp(prefix=prefix, dir=root))  # mkdtemp: 0700, a name no other trial has
    try:
        yield home
    finally:
        with contextlib.suppress(OSError):
            remove_tree(home, root)


__all__ = ["HOMES", "home_problem", "homes_root", "private_home", "under_temp"]
