"""How long `skillassay aggregate` takes on a big iteration, and how much memory it needs.

Builds an iteration in the documented layout (eval-*/<config>/run-K/ with grading.json,
timing.json and outputs/metrics.json shaped like schemas.md's examples), then times discovery +
reading + build_benchmark (the aggregation proper) and, separately, writing benchmark.json/.md.
Default 20,000 runs (50 evals x 2 arms x 200 trials); `--runs 200000` scales the trials.

    python benchmarks/aggregate.py [--runs N] [--dir PATH] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import tracemalloc
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


def aggregate_once(it: Path) -> tuple[int, float, float]:
    """(runs, seconds for discovery + reading, seconds for build_benchmark)."""
    from skillassay.aggregate import build_benchmark
    from skillassay.aggregate_cmd import choose_arms, collect, gc_paused
    from skillassay.models import Thresholds

    t0 = time.perf_counter()
    collected = collect(it, light=True)  # as aggregate_iteration reads
    t1 = time.perf_counter()
    arms = choose_arms(collected.discovery.configurations, None, it)
    with gc_paused():  # as aggregate_iteration does
        bench = build_benchmark(collected.records, skill_name="bench", skill_path=None, iteration=1,
                                timestamp="2026-01-15T10:30:00Z", trials_requested=None,
                                thresholds=Thresholds(), arms=arms, expectation_tally=collected.tally)
    t2 = time.perf_counter()
    assert bench._run_records is not None and len(bench._run_records) == len(collected.records)
    return len(collected.records), t1 - t0, t2 - t1


def measure(it: Path) -> None:
    from skillassay.aggregate_cmd import aggregate_iteration

    aggregate_once(it)  # warm the page cache and imports: the figure is aggregation, not disk
    cpu = time.process_time()
    n, read_s, build_s = aggregate_once(it)
    cpu = time.process_time() - cpu
    print(f"runs aggregated:        {n}")
    print(f"discovery + reading:    {read_s:.3f} s")
    print(f"build_benchmark:        {build_s:.3f} s")
    print(f"aggregate total:        {read_s + build_s:.3f} s  ({(read_s + build_s) / n * 1e6:.1f} us/run; "
          f"CPU {cpu:.3f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    tracemalloc.start()
    aggregate_once(it)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory:     {peak / 2**20:.1f} MiB  ({peak / n:.0f} B/run)")
    t = time.perf_counter()
    aggregate_iteration(it, skill_name="bench")
    print(f"whole command (incl. writing benchmark.json/.md): {time.perf_counter() - t:.3f} s "
          f"({os.path.getsize(it / 'benchmark.json') / 2**20:.1f} MiB json)")
    tracemalloc.start()
    aggregate_iteration(it, skill_name="bench")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory, whole command: {peak / 2**20:.1f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20_000, help="total runs (rounded to 50 evals x 2 arms)")
    ap.add_argument("--dir", type=Path, help="where to build the iteration (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated iteration")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="skillassay-aggbench-"))
    it = root / "bench-skill-workspace" / "iteration-1"
    try:
        if not it.is_dir():
            t = time.perf_counter()
            build_iteration(root, args.runs)
            print(f"built {it} in {time.perf_counter() - t:.1f} s")
        measure(it)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
