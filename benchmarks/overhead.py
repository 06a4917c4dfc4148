"""The tool's own per-trial overhead and start-up, as a user feels them: the real `skillassay`
command (worktree code, PYTHONPATH=src) run as whole processes with the instant `echo`
executor, so every millisecond is ours: planning, executing (writing the full workspace),
grading, aggregating, the report, interpreter start and imports. The report's charts are drawn
by a child that `run` starts before its trials and waits for before returning (about a CPU
second of matplotlib, in these figures since issue 40; wait_for_charts then finds them at once).

    python benchmarks/overhead.py [--trials 20000] [--rounds 3] [--dir /dev/shm/x] [--in-process]

Prints medians of interleaved rounds of `skillassay --help`, a 1-trial run (one eval, one trial
per arm), a 100-trial run (50 evals x 2 arms x 1) and an N-trial run; the per-trial overhead is
the marginal cost (N-trial run - 100-trial run) / (N - 100), so start-up is not spread over the
trials. Peak RSS is the largest process of each tree (wait4). --in-process adds the engine's
own figure from a warm in-process call, labelled: no user sees that one. File creation speed
differs a lot between filesystems and dominates: compare on one (tmpfs: --dir /dev/shm/...).
The worktree's bytecode is cached (under the benchmark's folder) as an installed package has
it; --no-bytecode-cache compiles it in every process when the environment says so.
Targets (issue 17): <= 0.45 ms per trial at 20,000, --help <= 0.3 s, a 1-trial run <= 1.0 s."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholeproc import (  # noqa: E402
    Series,
    load,
    make_bench_skill,
    ours_env,
    run_once,
    skillassay_cmd,
    with_bytecode_cache,
)

EVALS = 50


def make_skill(root: Path) -> Path:
    return make_bench_skill(root, "bench-skill", "Overhead benchmark skill.",
                            [{"type": "contains", "value": "4433"}, {"type": "regex", "pattern": r"\d+"},
                             {"type": "max_tokens", "value": 1000}], EVALS)


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


def one_eval_skill(root: Path) -> Path:
    """The smallest real skill: one eval, for the 1-trial run."""
    skill = make_skill(root / "one")
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = evals["evals"][:1]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    return skill


def wait_for_charts(ws: Path, timeout: float = 60) -> None:
    """`run` exits while a detached child draws the report's PNGs (about a CPU second, not in
    the run's own figures): wait for them, so they neither compete with the next measurement
    nor race the workspace's removal."""
    charts = ws / "iteration-1" / "charts"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (charts / "chart_error.txt").exists():
        if (charts / "pass_rate.png").is_file():
            return
        time.sleep(0.05)


def whole_process(root: Path, trials: int, rounds: int, bytecode_cache: bool = True) -> None:
    big, one = make_skill(root), one_eval_skill(root)
    per_eval = max(1, trials // (EVALS * 2))
    series = {"help": Series("skillassay --help"), "one": Series("run, 1 trial (1 eval x 2 arms x 1)"),
              "small": Series(f"run, {EVALS * 2} trials"), "big": Series(f"run, {per_eval * EVALS * 2} trials")}
    env = with_bytecode_cache(ours_env(), root / "pycache") if bytecode_cache else ours_env()
    print(f"before: {load()}")
    print("bytecode: " + (f"cached under {root / 'pycache'}, as an installed package has it" if bytecode_cache
                          else "as the environment has it (PYTHONDONTWRITEBYTECODE: "
                          f"{os.environ.get('PYTHONDONTWRITEBYTECODE', 'unset')})"))
    run_once(skillassay_cmd("--help"), env)  # .pyc files written, page cache warm
    one_ws = root / "ws-warm"  # and the run path's modules compiled once
    run_once(skillassay_cmd("run", str(one), "--executor", "echo", "--trials", "1", "--workspace", str(one_ws)), env,
             cwd=root)
    wait_for_charts(one_ws)
    shutil.rmtree(one_ws, ignore_errors=True)
    for r in range(rounds):
        for key in ("help", "one", "small", "big") if r % 2 == 0 else ("big", "small", "one", "help"):
            if key == "help":
                cmd = skillassay_cmd("--help")
            else:
                skill, k = {"one": (one, 1), "small": (big, 1), "big": (big, per_eval)}[key]
                ws = root / f"ws-{key}-{r}"
                cmd = skillassay_cmd("run", str(skill), "--executor", "echo", "--trials", str(k), "--workspace", str(ws))
            series[key].samples.append(run_once(cmd, env, cwd=root))
            if key != "help":
                wait_for_charts(root / f"ws-{key}-{r}")
                shutil.rmtree(root / f"ws-{key}-{r}", ignore_errors=True)
    print(f"after:  {load()}")
    print(f"whole processes (interpreter start + imports included), {rounds} interleaved rounds, under {root}")
    for s in series.values():
        print(s.line())
    n_big = per_eval * EVALS * 2
    marginal = (series["big"].median - series["small"].median) / (n_big - EVALS * 2)
    cpu = (statistics.median(x.cpu_seconds for x in series["big"].samples)
           - statistics.median(x.cpu_seconds for x in series["small"].samples)) / (n_big - EVALS * 2)
    print(f"per-trial overhead (marginal, whole process): {marginal * 1000:.3f} ms wall, {cpu * 1000:.3f} ms CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20_000, help="trials of the big run (default 20,000)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--dir", help="where to build the workspaces (default: the system temp dir)")
    ap.add_argument("--in-process", action="store_true", help="also print the engine's warm in-process figure")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="compile the worktree's modules as the environment says (PYTHONDONTWRITEBYTECODE), "
                         "instead of caching their bytecode as an installed package has it")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.dir)))
        return
    root = Path(tempfile.mkdtemp(prefix="skillassay-overhead-", dir=args.dir))
    try:
        whole_process(root, args.trials, args.rounds, not args.no_bytecode_cache)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.in_process:
        cmd = [sys.executable, __file__, "--child", str(args.trials)] + (["--dir", args.dir] if args.dir else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ours_env())
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"in-process (engine call only: no interpreter start, imports or CLI; not what a user sees): "
              f"{r['trials']} trials {r['seconds']} s, {r['ms_per_trial']} ms/trial ({r['cpu_ms_per_trial']} ms CPU), "
              f"resume {r['resume_seconds']} s, peak RSS {r['peak_memory_mb']} MB")


if __name__ == "__main__":
    main()
