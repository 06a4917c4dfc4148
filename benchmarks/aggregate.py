"""How long `skillassay aggregate` takes on a big iteration, and how much memory it needs.

Builds an iteration in the documented layout (eval-*/<config>/run-K/ with grading.json,
timing.json and outputs/metrics.json shaped like schemas.md's examples), then times the whole
`skillassay aggregate` (discovery, reading, every statistic, writing benchmark.json and .md)
and reports peak resident memory. Default 20,000 runs (50 evals x 2 arms x 200 trials);
`--runs 200000` scales the trials.

    python benchmarks/aggregate.py [--runs N] [--dir PATH] [--keep] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_EVALS, CONFIGS = 50, ("with_skill", "without_skill")


def grading(passed: bool, k: int) -> dict:
    """schemas.md's grading.json example, with one expectation's verdict varied per run."""
    exps = [
        {"text": "The output includes the name 'John Smith'", "passed": True,
         "evidence": f"Found in transcript Step 3 (run {k}): 'Extracted names: John Smith, Sarah Johnson'"},
        {"text": "The spreadsheet has a SUM formula in cell B10", "passed": passed,
         "evidence": "No spreadsheet was created. The output was a text file."},
        {"text": "The output is a PDF file", "passed": True, "evidence": "filled_form.pdf exists"},
    ]
    n = sum(e["passed"] for e in exps)
    return {
        "expectations": exps,
        "summary": {"passed": n, "failed": 3 - n, "total": 3, "pass_rate": round(n / 3, 2)},
        "execution_metrics": {"tool_calls": {"Read": 5, "Write": 2, "Bash": 8}, "total_tool_calls": 15,
                              "total_steps": 6, "errors_encountered": 0, "output_chars": 12450,
                              "transcript_chars": 3200},
        "timing": {"executor_duration_seconds": 165.0, "grader_duration_seconds": 26.0,
                   "total_duration_seconds": 191.0},
        "user_notes_summary": {"uncertainties": ["Used 2023 data, may be stale"], "needs_review": [],
                               "workarounds": []},
    }


def timing(k: int) -> dict:
    return {"total_tokens": 84852 + k, "duration_ms": 23332 + k, "total_duration_seconds": 23.3,
            "executor_start": "2026-01-15T10:30:00Z", "executor_end": "2026-01-15T10:32:45Z",
            "executor_duration_seconds": 165.0}


METRICS = json.dumps({"tool_calls": {"Read": 5, "Write": 2, "Bash": 8, "Edit": 1, "Glob": 2, "Grep": 0},
                      "total_tool_calls": 18, "total_steps": 6,
                      "files_created": ["filled_form.pdf", "field_values.json"], "errors_encountered": 0,
                      "output_chars": 12450, "transcript_chars": 3200}, indent=2)


def build_iteration(root: Path, runs: int) -> Path:
    trials = max(1, runs // (N_EVALS * len(CONFIGS)))
    it = root / "bench-skill-workspace" / "iteration-1"
    for e in range(N_EVALS):
        ev = it / f"eval-{e}-case-{e}"
        ev.mkdir(parents=True)
        (ev / "eval_metadata.json").write_text(json.dumps({"eval_id": e, "eval_name": f"case-{e}",
                                                           "prompt": "Fill the form"}))
        for ci, config in enumerate(CONFIGS):
            for k in range(1, trials + 1):
                run = ev / config / f"run-{k}"
                (run / "outputs").mkdir(parents=True)
                passed = (k + e + ci) % 3 != 0
                (run / "grading.json").write_text(json.dumps(grading(passed, k), indent=2))
                (run / "timing.json").write_text(json.dumps(timing(k), indent=2))
                (run / "outputs" / "metrics.json").write_text(METRICS)
    return it


def aggregate_once(it: Path, workers: int | None = None) -> tuple[int, float]:
    """(runs aggregated, seconds) for the whole command: discovery, reading, every statistic,
    writing benchmark.json and benchmark.md."""
    import skillassay.analyze.cell_reader as reader
    from skillassay.analyze.aggregate import aggregate_iteration

    reader.MAX_WORKERS = workers or reader.MAX_WORKERS
    t = time.perf_counter()
    result = aggregate_iteration(it, skill_name="bench", timestamp="2026-01-15T10:30:00Z")
    return result.runs_read, time.perf_counter() - t


def peak_rss_mib(it: Path, workers: int) -> tuple[float, float]:
    """Peak resident memory (MiB) of the command's own process and of its largest worker,
    measured in a fresh child so earlier rounds do not count."""
    code = (
        f"import resource, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"from aggregate import aggregate_once; from pathlib import Path; "
        f"aggregate_once(Path({str(it)!r}), {workers}); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    own, child = (int(x) / 1024 for x in out.split())  # KiB on Linux
    return own, child


def measure(it: Path, workers: int) -> None:
    aggregate_once(it, workers)  # warm the page cache and imports: the figure is aggregation, not disk
    times = []
    for _ in range(3):
        cpu = time.process_time()
        n, seconds = aggregate_once(it, workers)
        times.append((seconds, time.process_time() - cpu))
    best, cpu = min(times)
    print(f"runs aggregated:        {n} (up to {workers} worker processes on {os.cpu_count()} CPUs)")
    print(f"whole command:          best {best:.3f} s of 3 ({best / n * 1e6:.1f} us/run; main-process CPU "
          f"{cpu:.3f} s), all: {', '.join(f'{s:.2f}' for s, _ in times)} s")
    print(f"benchmark.json:         {os.path.getsize(it / 'benchmark.json') / 2**20:.1f} MiB")
    own, child = peak_rss_mib(it, workers)
    print(f"peak RSS:               {own:.0f} MiB main process, {child:.0f} MiB largest worker")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20_000, help="total runs (rounded to 50 evals x 2 arms)")
    ap.add_argument("--dir", type=Path, help="where to build the iteration (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated iteration")
    ap.add_argument("--workers", type=int, default=8, help="most worker processes (1: read in-process)")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="skillassay-aggbench-"))
    it = root / "bench-skill-workspace" / "iteration-1"
    try:
        if not it.is_dir():
            t = time.perf_counter()
            build_iteration(root, args.runs)
            print(f"built {it} in {time.perf_counter() - t:.1f} s")
        measure(it, args.workers)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
