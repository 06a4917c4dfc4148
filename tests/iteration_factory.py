"""Iterations with known outcomes written straight to disk, for comparison, gate and report
tests: each trial is a letter, P pass, F fail, E error, T timeout."""

from __future__ import annotations

import os
from pathlib import Path

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.models import Thresholds
from skillassay.store import read
from skillassay.store.jsonio import write_json
from skillassay.workflows.compare_on_disk import load_iteration_records

FINGERPRINT = {"skill": "s1", "evals": "e1", "settings": "x1"}
STATUS = {"P": "ok", "F": "ok", "E": "error", "T": "timeout"}


def write_run(run: Path, letter: str, tokens: int = 100, seconds: float = 2.0) -> None:
    passed = letter == "P"
    write_json(run / "grading.json", {
        "expectations": [{"text": "answer is right", "passed": passed, "evidence": letter}],
        "summary": {"passed": int(passed), "failed": int(not passed), "total": 1, "pass_rate": float(passed)}})
    write_json(run / "outputs" / "metrics.json", {"status": STATUS[letter]})
    write_json(run / "timing.json", {"total_tokens": tokens, "total_duration_seconds": seconds})


def write_iteration(workspace: Path, n: int, evals: dict[int, tuple[str, str]],
                    thresholds: dict | None = None, fingerprint: dict | None = None,
                    tokens: int = 100) -> Path:
    """evals: eval id -> (with_skill letters, without_skill letters). Writes the runs,
    eval_metadata.json, iteration.json, a config in the skill snapshot and benchmark.json."""
    it = workspace / f"iteration-{n}"
    for eval_id, arms in evals.items():
        folder = it / f"eval-{eval_id}-e{eval_id}"
        write_json(folder / "eval_metadata.json", {"eval_id": eval_id, "eval_name": f"e{eval_id}",
                                                   "prompt": "q", "expectations": ["answer is right"]})
        for config, letters in zip(("with_skill", "without_skill"), arms, strict=True):
            for k, letter in enumerate(letters, start=1):
                write_run(folder / config / f"run-{k}", letter, tokens=tokens)
    trials = max(len(a) for arms in evals.values() for a in arms)
    write_json(it / "iteration.json", {"schema_version": 1, "iteration": n, "fingerprint": fingerprint or FINGERPRINT,
                                       "trials_per_eval": trials, "seed": 0, "baseline_type": "no_skill"})
    th = Thresholds(**(thresholds or {}))
    write_json(it / "skill-snapshot" / "evals" / "benchmark_config.json",
               {"trials_per_eval": trials, "thresholds": th.model_dump(exclude_none=True)})
    bench = build_benchmark(load_iteration_records(it), skill_name="synthetic", skill_path=None, iteration=n,
                            timestamp="2026-01-01T00:00:00Z", trials_requested=trials, thresholds=th,
                            arms=Arms("with_skill", "without_skill"))
    write_json(it / "benchmark.json", bench)
    return it


def read_plain(run: Path) -> read.PlainRun | None:
    """store.read.read_plain_run on one run folder, opened relative to its parent as
    `aggregate` does."""
    fd = os.open(run.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        return read.read_plain_run(fd, run.name)
    finally:
        os.close(fd)
