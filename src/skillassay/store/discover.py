"""Finding the runs of an iteration, whatever layout produced it.

skill-creator workspaces come in several shapes in practice, and the old aggregation script
silently wrote `"runs": []` for the ones it did not expect. Discovery here accepts:

- `eval-*/<config>/run-K/` (the documented layout),
- `runs/eval-*/<config>/run-K/` (the legacy layout),
- `eval-*/<config>/` holding `outputs/` and `grading.json` with no run-K level (run 1),

with configuration folders of any name, and eval folders named `eval-*` or holding an
`eval_metadata.json` (skill-creator tells agents to name eval folders descriptively). It only
lists folders (os.scandir, no per-file stat): reading and validating files is `store.read`'s job,
so a 200,000-run iteration costs one directory listing per eval and configuration.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from skillassay.errors import InputError, describe_error
from skillassay.store.jsonio import parse_json_bytes
from skillassay.store.layout import RUN_DIR

EVAL_DIR = re.compile(r"eval-(\d+)(?:-(.+))?")
METADATA = "eval_metadata.json"
GRADING = "grading.json"
OUTPUTS = "outputs"
LEGACY_ROOT = "runs"
# Folders beside configuration folders that are never a configuration.
NOT_CONFIGS = frozenset({OUTPUTS, "inputs", "files", "__pycache__"})
LOOKED_FOR = (
    "eval-*/<config>/run-K/grading.json, runs/eval-*/<config>/run-K/grading.json, or "
    "eval-*/<config>/grading.json beside outputs/"
)


@dataclass(frozen=True)
class EvalDir:
    """One eval's folder and the identity the records will carry."""

    path: str
    eval_id: int | str
    eval_name: str


@dataclass(frozen=True)
class RunDir:
    """A folder expected to hold one run's grading.json (run-K, or a flat configuration folder)."""

    eval: EvalDir
    configuration: str
    run_number: int
    path: str


@dataclass
class Discovery:
    """What was found under an iteration, plus problems worth telling the user (not fatal)."""

    root: Path
    evals: list[EvalDir] = field(default_factory=list)
    runs: list[RunDir] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def configurations(self) -> list[str]:
        return list(dict.fromkeys(r.configuration for r in self.runs))


def _subdirs(path: str) -> list[os.DirEntry[str]]:
    """Visible sub-folders (symlinked ones included), sorted by name for a stable order."""
    try:
        with os.scandir(path) as it:
            entries = [e for e in it if not e.name.startswith(".") and e.is_dir()]
    except (NotADirectoryError, FileNotFoundError, PermissionError):
        return []
    entries.sort(key=lambda e: e.name)
    return entries


def _names(path: str) -> tuple[set[str], set[str]]:
    """(folder names, file names) in one listing: the cheapest way to test several members."""
    dirs: set[str] = set()
    files: set[str] = set()
    try:
        with os.scandir(path) as it:
            for e in it:
                (dirs if e.is_dir() else files).add(e.name)
    except (NotADirectoryError, FileNotFoundError, PermissionError):
        pass
    return dirs, files


def identity_from_folder(name: str) -> tuple[int | str, str]:
    """`eval-3-foo` -> (3, "foo"); `eval-3` -> (3, "eval-3"); `eval-foo` -> ("foo", "foo");
    anything else (a descriptive folder name) -> (name, name)."""
    m = EVAL_DIR.fullmatch(name)
    if m:
        return int(m.group(1)), m.group(2) or name
    rest = name.removeprefix("eval-") or name
    return rest, rest


def read_identity(eval_path: str, folder: str, warnings: list[str]) -> tuple[int | str, str]:
    """eval_id / eval_name from eval_metadata.json when it has them, else from the folder name.
    A metadata file that cannot be used is reported, not fatal: the folder name still identifies
    the eval, and a resulting id clash is caught later."""
    fallback = identity_from_folder(folder)
    path = os.path.join(eval_path, METADATA)
    try:
        with open(path, "rb") as fh:
            data = parse_json_bytes(fh.read())
    except FileNotFoundError:
        return fallback
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: unreadable ({describe_error(exc)}); eval id taken from the folder name")
        return fallback
    if not isinstance(data, dict):
        warnings.append(f"{path}: expected a JSON object; eval id taken from the folder name")
        return fallback
    eval_id, name = data.get("eval_id"), data.get("eval_name")
    if eval_id is None:
        eval_id = fallback[0]
    elif isinstance(eval_id, bool) or not isinstance(eval_id, int | str):
        warnings.append(f"{path}: $.eval_id: expected an integer or a string; eval id taken from the folder name")
        eval_id = fallback[0]
    if name is not None and not isinstance(name, str):
        warnings.append(f"{path}: $.eval_name: expected a string; name taken from the folder name")
        name = None
    return eval_id, name or fallback[1]


def _config_runs(ev: EvalDir, config: os.DirEntry[str]) -> list[RunDir]:
    """The runs of one configuration folder: its run-K folders, else the folder itself when it
    holds a run directly (outputs/ or grading.json, no run-K level), else none (not a config)."""
    runs = []
    dirs, files = _names(config.path)
    for name in dirs:
        m = RUN_DIR.fullmatch(name)
        if m:
            runs.append(RunDir(ev, config.name, int(m.group(1)), os.path.join(config.path, name)))
    if runs:
        runs.sort(key=lambda r: r.run_number)
        return runs
    if OUTPUTS in dirs or GRADING in files:
        return [RunDir(ev, config.name, 1, config.path)]
    return []


def _is_eval_dir(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith("eval-"):
        return True
    return os.path.isfile(os.path.join(entry.path, METADATA))


def _eval_roots(iteration: Path) -> list[str]:
    roots = [str(iteration)]
    legacy = iteration / LEGACY_ROOT
    if legacy.is_dir():
        roots.append(str(legacy))
    return roots


def find_evals(iteration: Path) -> tuple[list[EvalDir], list[str]]:
    """The eval folders of an iteration (both roots) and warnings about their metadata.
    Raises InputError when the iteration folder does not exist."""
    if not iteration.is_dir():
        raise InputError.one(iteration, "", "not a folder: expected an iteration folder (iteration-N)")
    evals: list[EvalDir] = []
    warnings: list[str] = []
    for root in _eval_roots(iteration):
        for entry in _subdirs(root):
            if entry.name == LEGACY_ROOT or not _is_eval_dir(entry):
                continue
            eval_id, name = read_identity(entry.path, entry.name, warnings)
            evals.append(EvalDir(entry.path, eval_id, name))
    return evals, warnings


def eval_runs(ev: EvalDir) -> list[RunDir]:
    """An eval folder's run folders, in configuration / run order."""
    return [run for config in _subdirs(ev.path) if config.name not in NOT_CONFIGS
            for run in _config_runs(ev, config)]


def discover(iteration: Path) -> Discovery:
    """Every run folder under an iteration, in eval / configuration / run order. Raises
    InputError when the folder is missing or two folders claim the same run."""
    evals, warnings = find_evals(iteration)
    found = Discovery(root=iteration, evals=evals, warnings=warnings)
    for ev in evals:
        found.runs.extend(eval_runs(ev))
    check_unique(found.runs)
    return found


def check_unique(runs: Iterable[RunDir]) -> None:
    """Two folders claiming the same eval, configuration and run would be silently merged:
    that is ambiguous input (usually a copied eval_metadata.json), so it is refused."""
    seen: dict[tuple, str] = {}
    problems = []
    for r in runs:
        key = (r.eval.eval_id, r.configuration, r.run_number)
        if key in seen:
            problems.append((r.path, seen[key], key))
        else:
            seen[key] = r.path
    if problems:
        path, first, key = problems[0]
        raise InputError.one(
            path, "eval_id",
            f"eval {key[0]!r} {key[1]} run {key[2]} is also at {first} ({len(problems)} such clash(es)): "
            "give each eval folder a distinct eval_id in its eval_metadata.json")
