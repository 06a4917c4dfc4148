"""How long `skillassay aggregate` takes on a big iteration, as a user feels it, and how much
memory it needs; with --against, the same for skill-creator's aggregate_benchmark.py.

Builds an iteration in the documented layout (eval-*/<config>/run-K/ with grading.json,
timing.json and outputs/metrics.json shaped like schemas.md's examples; default 20,000 runs =
50 evals x 2 arms x 200 trials), then runs `skillassay aggregate` as a whole process (a fresh
interpreter each time: start-up, imports, discovery, reading, every statistic, benchmark.json
and .md) with the worktree's code (PYTHONPATH=src). With --against, skill-creator's script runs
on a hard-linked copy of the same iteration (each writes its own benchmark.json), in the same
rounds, alternating which goes first; medians, the ratio, peak RSS (the largest process of each
tree, from wait4) and the load average are printed. --in-process adds the warm in-process call
(no interpreter start, no imports), labelled as such: no user ever sees that figure. src/ is
byte-compiled first, as `pip install` does (--no-compile to time the compiler too, where
PYTHONDONTWRITEBYTECODE keeps every run compiling ~100 modules from source).

    python benchmarks/aggregate.py [--runs N] [--rounds R] [--dir PATH] [--keep]
        [--against PATH/TO/aggregate_benchmark.py] [--in-process] [--no-compile]

skill-creator's script is not vendored: get it from github.com/anthropics/skills
(skills/skill-creator/scripts/aggregate_benchmark.py). On a machine with little RAM disk,
--dir /dev/shm/... keeps a 200,000-run iteration (2.4 GB) on tmpfs and reuses it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholeproc import Series, load, ours_env, run_once, skillassay_cmd, with_bytecode_cache  # noqa: E402

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


def aggregate_in_process(it: Path) -> float:
    """Seconds of a warm in-process aggregate_iteration call (imports done, page cache warm)."""
    code = (
        "import sys, time; from pathlib import Path; "
        "from skillassay.workflows.aggregate import aggregate_iteration; "
        f"it = Path({str(it)!r}); aggregate_iteration(it, skill_name='bench'); "
        "t = time.perf_counter(); aggregate_iteration(it, skill_name='bench'); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=ours_env())
    return float(out.stdout.split()[-1])


def peer_copy(it: Path) -> Path:
    """The same iteration for skill-creator's script, hard-linked (same bytes, same page cache;
    each tool writes its own benchmark.json, so neither reads the other's)."""
    dest = it.parent.parent / "peer-copy" / it.parent.name / it.name
    if not dest.is_dir():
        def link(src: str, dst: str) -> None:
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)

        shutil.copytree(it, dest, copy_function=link,
                        ignore=shutil.ignore_patterns("benchmark.json", "benchmark.md", ".skillassay*"))
    return dest


def measure(it: Path, rounds: int, against: Path | None, in_process: bool, bytecode_cache: bool = True) -> None:
    ours = Series("skillassay aggregate")
    peer = Series("skill-creator aggregate_benchmark.py")
    ours_cmd, env = skillassay_cmd("aggregate", str(it)), ours_env()
    peer_it = peer_copy(it) if against else None
    peer_cmd = [sys.executable, str(against), str(peer_it)] if against else []
    if bytecode_cache:  # the warm-up run below fills the cache
        env = with_bytecode_cache(env, it.parent.parent / "pycache")
        print(f"bytecode: cached under {it.parent.parent / 'pycache'}, as an installed package has it")
    print(f"before: {load()}")
    run_once(ours_cmd, env)  # warm the page cache (and .pyc files): the figure is not the disk's
    if against:
        run_once(peer_cmd)
    ratios = []
    for r in range(rounds):
        pair = [(ours, ours_cmd, env), (peer, peer_cmd, None)] if against else [(ours, ours_cmd, env)]
        for series, cmd, e in pair if r % 2 == 0 else reversed(pair):
            series.samples.append(run_once(cmd, e))
        if against:
            ratios.append(ours.samples[-1].seconds / peer.samples[-1].seconds)
    print(f"after:  {load()}")
    print(f"runs:   {sum(1 for _ in it.glob('eval-*/*/run-*'))} run folders, {rounds} interleaved rounds, "
          "whole processes (interpreter start + imports included)")
    print(ours.line())
    if against:
        print(peer.line())
        print(f"ratio skillassay / skill-creator: {ours.median / peer.median:.2f}x of medians "
              f"(median of per-round ratios {statistics.median(ratios):.2f}x)")
    print(f"benchmark.json: {os.path.getsize(it / 'benchmark.json') / 2**20:.1f} MiB")
    if in_process:
        print(f"in-process (warm call, no interpreter start or imports; not what a user sees): "
              f"{aggregate_in_process(it):.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20_000, help="total runs (rounded to 50 evals x 2 arms)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--dir", type=Path, help="where to build the iteration, or find one built before "
                    "(default: a temp folder, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the generated iteration")
    ap.add_argument("--against", type=Path, help="skill-creator's aggregate_benchmark.py, to run on the same data")
    ap.add_argument("--in-process", action="store_true", help="also print the warm in-process figure")
    ap.add_argument("--no-compile", action="store_true", help="do not cache the bytecode (time the compiler "
                    "too where PYTHONDONTWRITEBYTECODE is set, as no installed copy runs)")
    args = ap.parse_args()
    if args.against and not args.against.is_file():
        ap.error(f"--against {args.against}: no such file")
    root = args.dir or Path(tempfile.mkdtemp(prefix="skillassay-aggbench-"))
    it = root / "bench-skill-workspace" / "iteration-1"
    try:
        if not it.is_dir():
            t = time.perf_counter()
            build_iteration(root, args.runs)
            print(f"built {it} in {time.perf_counter() - t:.1f} s")
        measure(it, args.rounds, args.against, args.in_process, not args.no_compile)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
