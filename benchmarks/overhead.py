"""The tool's own per-trial overhead: plan, execute (writing the full workspace), grade and
aggregate N trials with the instant `echo` executor, so every millisecond is ours.

    python benchmarks/overhead.py            # 10,000 and 20,000 trials
    python benchmarks/overhead.py --trials 5000

Each size runs in a fresh subprocess so peak memory (ru_maxrss) is per size. Prints trials
per second, overhead per trial, peak memory and CLI start-up time. Target: <= 0.45 ms per
trial, start-up < 0.5 s, 20,000 trials under 200 MB."""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVALS = 50


def make_skill(root: Path) -> Path:
    skill = root / "bench-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: bench-skill\ndescription: Overhead benchmark skill.\n---\n"
                                    "The magic number is 4433.\n")
    evals = [{"id": i, "name": f"e{i}", "prompt": f"Question {i}: what is the magic number?",
              "expectations": [{"type": "contains", "value": "4433"}, {"type": "regex", "pattern": r"\d+"},
                               {"type": "max_tokens", "value": 1000}]} for i in range(1, EVALS + 1)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "bench-skill", "evals": evals}))
    return skill


def measure(trials_total: int, where: str | None = None) -> dict:
    from skillassay.run.engine import RunRequest, run_benchmark

    per_eval = trials_total // (EVALS * 2)
    root = Path(tempfile.mkdtemp(prefix="skillassay-overhead-", dir=where))
    try:
        skill = make_skill(root)
        req = RunRequest(skill_dir=skill, executor="echo", trials=per_eval, workspace=root / "ws")
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = run_benchmark(req)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        n = outcome.executed
        assert n == per_eval * EVALS * 2, n
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # after the full run
        del outcome
        t1 = time.perf_counter()
        outcome2 = run_benchmark(req)  # resume: reads every run back, executes nothing
        resume = time.perf_counter() - t1
        assert outcome2.executed == 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"trials": n, "seconds": round(elapsed, 3), "trials_per_second": round(n / elapsed),
            "ms_per_trial": round(elapsed / n * 1000, 4),
            "cpu_ms_per_trial": round(cpu / n * 1000, 4), "resume_seconds": round(resume, 3),
            "peak_memory_mb": round(peak_mb, 1)}


def startup_seconds() -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skillassay", "--help"], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return round(best, 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, nargs="*", default=[10_000, 20_000])
    ap.add_argument("--dir", help="where to build the workspace (default: the system temp dir); "
                    "file creation speed differs a lot between filesystems, and dominates")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.dir)))
        return
    print(f"CLI start-up (skillassay --help, best of 3): {startup_seconds()} s")
    print(f"workspace under: {args.dir or tempfile.gettempdir()}")
    for n in args.trials:
        cmd = [sys.executable, __file__, "--child", str(n)] + (["--dir", args.dir] if args.dir else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{r['trials']:>6} trials: {r['seconds']:>7} s, {r['trials_per_second']:>6} trials/s, "
              f"{r['ms_per_trial']} ms/trial wall ({r['cpu_ms_per_trial']} ms CPU), resume (read back, run nothing) {r['resume_seconds']} s, "
              f"peak memory {r['peak_memory_mb']} MB")


if __name__ == "__main__":
    main()
