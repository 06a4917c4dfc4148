"""Resuming: which planned trials are finished (their grading.json read back) and which must
run, for one iteration folder. Shared by a one-agent run (engine.run_locked) and each agent of
a matrix run (run/matrix.py), so both resume alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from skillassay.run.plan import Trial, existing_run_folders
from skillassay.run.reuse import RUN_AGAIN, archive_failed_attempt
from skillassay.store.jsonio import remove_stale_temps
from skillassay.store.read import read_trial
from skillassay.store.records import TrialRecord


def split_finished(planned: list[Trial], it_dir: Path, slugs: list[str], configurations: list[str],
                   names: dict[int, str], read: Callable[..., tuple[TrialRecord | None, object]] = read_trial,
                   ) -> tuple[list[TrialRecord], list[Trial], int]:
    """(records of the finished trials, the trials to run, how many of those errored before).
    `planned` is emptied: memory stays flat on big suites. `read`: how a started trial is read
    back (the engine passes its own, which its tests count)."""
    present = existing_run_folders(it_dir, slugs, configurations)
    done: list[TrialRecord] = []
    todo: list[Trial] = []
    again = 0
    for t in planned:
        folders = present.get((t.eval_slug, t.configuration))
        if folders is not None and f"run-{t.run_number}" not in folders:
            todo.append(replace(t, fresh=True))  # never started: nothing to read back, archive or tidy
            continue
        rec, _ = read(str(t.run_dir), t.eval.id, names[t.eval.id], t.configuration, t.run_number)
        if rec is not None and rec.status in RUN_AGAIN:  # failed before: runs again, the attempt kept
            archive_failed_attempt(t.run_dir)
            rec, again = None, again + 1
        # None: not graded yet (or its grading.json is unusable), so it runs again
        if rec is None:
            remove_stale_temps(t.run_dir)  # a killed attempt's half-written grading.json, say
        (done.append(rec) if rec else todo.append(t))
    planned.clear()
    return done, todo, again
