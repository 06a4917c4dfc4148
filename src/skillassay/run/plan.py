"""Planning: which trials an iteration needs (eval x configuration x trial number), and
which iteration to use (resume the latest when nothing that changes results changed)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.errors import InputError
from skillassay.models import Eval
from skillassay.store.jsonio import load_json_lenient
from skillassay.store.layout import existing_iterations, iteration_dir, run_dir


@dataclass(frozen=True)
class Trial:
    eval: Eval
    eval_slug: str
    configuration: str
    run_number: int
    seed: int
    run_dir: Path
    # Its run folder was not there when the run was planned (never started): execute_trial
    # need not look for a killed attempt's left-overs, nor make the folder before the sink does.
    fresh: bool = False
    max_cost_usd: float | None = None  # its share of the run's budget, set when it starts (run/budget.py)


def trial_seed(base_seed: int, eval_id: int, run_number: int) -> int:
    """Trials differ by seed; both arms of a trial number share it, so the only difference
    between arms is the skill. Deterministic, so a run can be reproduced from its seed."""
    return (base_seed + eval_id * 1000 + run_number) % (2**31)


def plan_trials(evals: list[Eval], configurations: list[str], trials: int, iteration: Path,
                base_seed: int) -> list[Trial]:
    out = []
    for ev in evals:
        slug = ev.slug
        for config in configurations:
            folder = run_dir(iteration, slug, config, 1).parent  # one join per folder, one per trial
            for k in range(1, trials + 1):
                out.append(Trial(ev, slug, config, k, trial_seed(base_seed, ev.id, k), folder / f"run-{k}"))
    return out


_CHUNK = 2**20  # hashing reads this much at a time: memory stays flat whatever the file's size


def _update_from_file(h: Any, path: Path | str) -> None:
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


def hash_tree(root: Path) -> str:
    """Content hash of a folder (relative paths + bytes), ignoring caches and VCS folders.
    A special file (FIFO, socket, device: preflight refuses them in a skill folder) counts as
    its kind and is never opened: opening a FIFO waits for a writer that may never come."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in {".git", "__pycache__"} and not d.endswith("-workspace"))
        links = sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames) + links:
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode())
            h.update(b"\0")
            # A link counts as where it points, never as what is there (it may lead anywhere).
            mode = os.lstat(p).st_mode
            if stat.S_ISLNK(mode):
                h.update(b"->" + os.readlink(p).encode())
            elif stat.S_ISREG(mode):
                _update_from_file(h, p)
            else:
                h.update(f"<special {stat.S_IFMT(mode):o}>".encode())
            h.update(b"\0")
    return h.hexdigest()


def hash_file(path: Path) -> str:
    h = hashlib.sha256()
    _update_from_file(h, path)
    return h.hexdigest()


def hash_value(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class IterationChoice:
    number: int
    resumed: bool
    reason: str


def choose_iteration(workspace: Path, fingerprint: dict[str, str], explicit: int | None) -> IterationChoice:
    """Resume the latest iteration when its fingerprint matches; otherwise start the next one
    and say what changed."""
    existing = existing_iterations(workspace)
    if explicit is not None:
        return _requested(workspace, fingerprint, explicit, existing)
    if not existing:
        return IterationChoice(1, False, "first iteration")
    latest = existing[-1]
    previous = read_fingerprint(iteration_dir(workspace, latest))
    if previous == fingerprint:
        return IterationChoice(latest, True, f"nothing changed since iteration {latest}: resuming it")
    return IterationChoice(latest + 1, False, f"{', '.join(_changed(previous, fingerprint))} changed since iteration {latest}")


def _changed(previous: dict[str, str], fingerprint: dict[str, str]) -> list[str]:
    return sorted(k for k in fingerprint if previous.get(k) != fingerprint[k]) or ["unknown (no record)"]


def _requested(workspace: Path, fingerprint: dict[str, str], n: int, existing: list[int]) -> IterationChoice:
    """--iteration N resumes N only when it was run with this skill, eval set and settings:
    resuming it otherwise would mix two versions' trials in one set of figures."""
    if n not in existing:
        return IterationChoice(n, False, f"iteration {n} requested")
    previous = read_fingerprint(iteration_dir(workspace, n))
    if previous and previous != fingerprint:
        nxt = (existing[-1] if existing else 0) + 1
        raise InputError.one(iteration_dir(workspace, n) / "iteration.json", "fingerprint",
                             f"iteration {n} was run with another {', '.join(_changed(previous, fingerprint))}: "
                             f"resuming it would mix two versions' trials; omit --iteration (starts iteration "
                             f"{nxt}) or give a new number")
    return IterationChoice(n, True, f"iteration {n} requested: resuming it")


def read_fingerprint(iteration: Path) -> dict[str, str]:
    data = load_json_lenient(iteration / "iteration.json")
    fingerprint = data.get("fingerprint") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in fingerprint.items()} if isinstance(fingerprint, dict) else {}


def _design_words(trials: object, adaptive: object) -> str:
    if isinstance(adaptive, dict):
        return (f"adaptive trials ({adaptive.get('min_trials_per_eval')} to {adaptive.get('max_trials_per_eval')} "
                f"per arm, rounds of {adaptive.get('round_size')})")
    return f"{trials} fixed trials per arm"


def _resume_flags(trials: int, adaptive: object) -> str:
    return f"--adaptive --trials {trials}" if isinstance(adaptive, dict) else f"--trials {trials}"


def check_same_design(it_dir: Path, trials: int, adaptive: dict[str, Any] | None) -> None:
    """A finished iteration (one with a benchmark.json) resumes only with the design it was run
    with. Another trial count or an adaptive design on it would add (or drop) trials in place
    and replace its verdict, while its earlier report, history and any reader of it hold the
    old one; more trials of the same skill are a new iteration, which this says how to start.
    A killed iteration (no benchmark.json yet) resumes with whatever design is asked, as before."""
    path = it_dir / "iteration.json"
    record = load_json_lenient(path)
    if not isinstance(record, dict) or not (it_dir / "benchmark.json").is_file():
        return
    was_trials, was_adaptive = record.get("trials_per_eval"), record.get("adaptive")
    if not isinstance(was_trials, int) or isinstance(was_trials, bool):
        return  # an iteration.json from elsewhere says nothing about its design
    same = json.dumps([was_trials, was_adaptive], sort_keys=True) == json.dumps([trials, adaptive], sort_keys=True)
    if same:
        return
    number = iteration_number_of(it_dir)
    latest = existing_iterations(it_dir.parent)
    nxt = (latest[-1] if latest else number) + 1
    raise InputError.one(path, "adaptive" if (was_adaptive is None) != (adaptive is None) else "trials_per_eval",
                         f"iteration {number} is finished with {_design_words(was_trials, was_adaptive)}; this run "
                         f"asks for {_design_words(trials, adaptive)}. Changing it in place would rewrite its "
                         f"verdict, so run the new design as a new iteration: the same command with "
                         f"--iteration {nxt}. To resume iteration {number} as it was run, use "
                         f"{_resume_flags(was_trials, was_adaptive)} instead.")


def iteration_number_of(it_dir: Path) -> int:
    tail = it_dir.name.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 0


def existing_run_folders(it_dir: Path, slugs: list[str], configurations: list[str]
                         ) -> dict[tuple[str, str], frozenset[str] | None]:
    """The entries of each eval's configuration folder, listed once: a trial whose run-K folder
    is not among them has never started, so the three look-ups resuming does per trial (its
    folder, its grading.json, a killed attempt's temp files), all failing, are skipped; on a
    fresh iteration that was most of planning. None for a folder that cannot be listed (not
    a folder, no permission): its trials are looked up one by one, as before."""
    out: dict[tuple[str, str], frozenset[str] | None] = {}
    for slug in slugs:
        for configuration in configurations:
            try:
                out[(slug, configuration)] = frozenset(os.listdir(it_dir / slug / configuration))
            except FileNotFoundError:
                out[(slug, configuration)] = frozenset()
            except OSError:
                out[(slug, configuration)] = None
    return out
