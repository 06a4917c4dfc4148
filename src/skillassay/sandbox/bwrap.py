"""Bubblewrap: the host read-only, the trial's folders the only writable places, the user's
home folders and every temp folder hidden behind empty tmpfs, a PID namespace, killed with
its parent. The argv is built by a pure function; `works()` probes once whether bwrap runs
here at all (it needs user namespaces when not root)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# Folders a trial never sees: the user's homes (keys, logins, other skills), the host's temp
# folders (other trials, `/tmp/.claude/skills` anyone can write) and /run (the docker socket,
# which a read-only mount would not protect: connecting to a socket is no write to a file).
HIDDEN = ("/root", "/home", "/tmp", "/var/tmp", "/run")
# Folders under a home that hold credentials: never re-exposed even when a tool lives there.
_PRIVATE = frozenset({".ssh", ".aws", ".gnupg", ".config", ".codex", ".claude", ".docker", ".kube",
                      ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".azure", ".gcloud", ".local"})


def hidden_folders(home: str | None) -> list[str]:
    """HIDDEN plus the user's home when it lies elsewhere (a service account's /var/lib/x)."""
    out = list(HIDDEN)
    if home and os.path.isabs(home) and home != "/" and not any(_under(home, h) for h in out):
        out.append(home)
    return out


def tool_folders(path_var: str, hidden: Sequence[str], extra: Iterable[str] = ()) -> list[str]:
    """Toolchains the trial still needs that live in a hidden folder (pyenv, cargo, nvm under
    /root): for each PATH entry (and each `extra` path, e.g. the Python running us) under a
    hidden home, its top folder there (/root/.pyenv), read-only. Credential folders never."""
    found: list[str] = []
    for entry in [*path_var.split(os.pathsep), *extra]:
        if not entry or not os.path.isabs(entry):
            continue
        for root in hidden:
            if root in ("/tmp", "/var/tmp", "/run") or not _under(entry, root) or entry == root:
                continue
            top = Path(root, Path(entry).relative_to(root).parts[0])
            if top.name not in _PRIVATE and top.is_dir() and str(top) not in found:
                found.append(str(top))
    return found


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def bwrap_argv(argv: Sequence[str], *, cwd: Path, writable: Sequence[Path], readonly: Sequence[Path],
               env: Mapping[str, str], bwrap: str = "bwrap") -> list[str]:
    """The bwrap command line that runs `argv` in `cwd`. Order matters: bwrap mounts in the
    order given, so the tmpfs layers come first and the trial's own folders are bound on top."""
    hidden = hidden_folders(os.path.expanduser("~"))
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in hidden:
        if os.path.isdir(folder) and not os.path.islink(folder):
            out += ["--tmpfs", folder]
    home = env.get("HOME")  # the trial's HOME: private, empty, writable (unless a writable folder)
    if home and os.path.isabs(home) and home != "/" and not any(_under(home, str(w)) for w in writable):
        out += ["--dir", home] if any(_under(home, h) for h in hidden) else ["--tmpfs", home]
    python_home = [os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)]
    for folder in tool_folders(env.get("PATH", ""), hidden, python_home):
        out += ["--ro-bind", folder, folder]
    # A read-only folder that holds a writable one (the folder of a script that also holds the
    # work dir) is bound first, so the writable bind lands on top; one inside a writable folder
    # (the installed skill in the work dir) after, so it stays read-only.
    inner = [p for p in readonly if any(_under(str(p), str(w)) for w in writable)]
    for path in [p for p in readonly if p not in inner]:
        out += ["--ro-bind", str(path), str(path)]
    for path in writable:
        out += ["--bind", str(path), str(path)]
    for path in inner:
        out += ["--ro-bind", str(path), str(path)]
    return [*out, "--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(cwd), "--", *argv]


@functools.lru_cache(maxsize=1)
def works() -> str | None:
    """None when bwrap can build this sandbox here, else why not (probed once per process)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = bwrap_argv(["true"], cwd=Path("/"), writable=[], readonly=[], env={"PATH": os.environ.get("PATH", "")},
                       bwrap=binary)
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        return (f"bwrap fails here ({done.stderr.strip()[-300:] or f'exit {done.returncode}'}); unprivileged "
                "user namespaces may be off (sysctl kernel.unprivileged_userns_clone / "
                "kernel.apparmor_restrict_unprivileged_userns)")
    return None
