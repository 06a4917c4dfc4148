"""What a matrix run (issue 37) costs per trial beyond the trials themselves: whole `skillassay
run` processes (worktree code) with the instant `echo` executor, two agents against one agent
running the same number of trials (the one agent gets twice the trials per eval), so every
difference is the matrix layer's: two Executors, one queue dispatching to them, two agent
folders, two aggregations and reports, matrix.json.

    python benchmarks/matrix_overhead.py [--trials 2000] [--rounds 3] [--dir /dev/shm/x]

Each round runs the four commands (matrix and one agent, small and big) in alternating order;
per layout the per-trial overhead is the marginal cost (big - small) / (trials big - trials
small), so start-up and the fixed per-iteration work (reports, charts) are not spread over the
trials; the matrix's extra per trial is that difference, paired by round (median and range).
The fixed extra (the small runs' difference) is printed too: it is per iteration, not per trial.
Both wall time and the process tree's CPU time (wait4) are given: on a shared machine the CPU
figure is the one to read (the wall time moves with everyone else's load)."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholeproc import Sample, load, make_bench_skill, ours_env, run_once, skillassay_cmd, with_bytecode_cache  # noqa: E402

EVALS = 50


def wait_for_charts(charts: Path, timeout: float = 60) -> None:
    """`run` exits while a detached child draws an iteration's PNGs (overhead.wait_for_charts):
    wait for them in every charts folder, so they do not compete with the next measurement."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (charts / "chart_error.txt").exists():
        if (charts / "pass_rate.png").is_file() or (charts / "matrix_effects.png").is_file():
            return
        time.sleep(0.05)


def write_configs(root: Path) -> dict[str, Path]:
    """The one-agent config and the two-agent one (both echo: same work per trial)."""
    one = root / "one.json"
    one.write_text(json.dumps({"executor": "echo", "sandbox": "none"}))
    two = root / "two.json"
    two.write_text(json.dumps({"sandbox": "none", "agents": [{"name": "a", "executor": "echo"},
                                                            {"name": "b", "executor": "echo",
                                                             "options": {"delay_seconds": 0}}]}))
    return {"one": one, "two": two}


def trials_of(layout: str, per_agent_per_eval: int) -> tuple[int, int]:
    """(--trials, trials run) for a layout: the one agent runs both agents' share."""
    k = per_agent_per_eval * (2 if layout == "one" else 1)
    return k, k * EVALS * 2 * (1 if layout == "one" else 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=2000, help="trials of the big runs (default 2,000)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--dir", help="where to build the workspaces (default: the system temp dir)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="skillassay-matrix-overhead-", dir=args.dir))
    try:
        run(root, args.trials, args.rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, trials: int, rounds: int) -> None:
    skill = make_bench_skill(root, "bench-skill", "Matrix overhead benchmark skill.",
                             [{"type": "contains", "value": "4433"}], EVALS)
    configs = write_configs(root)
    big_k = max(2, trials // (EVALS * 4))  # per agent, per eval and arm
    env = with_bytecode_cache(ours_env(), root / "pycache")
    samples: dict[tuple[str, str], list[Sample]] = {}
    print(f"before: {load()}")
    warm = root / "ws-warm"
    run_once(skillassay_cmd("run", str(skill), "--config", str(configs["two"]), "--trials", "1",
                            "--workspace", str(warm)), env, cwd=root)
    shutil.rmtree(warm, ignore_errors=True)
    order = [(layout, size) for size in ("small", "big") for layout in ("one", "two")]
    for r in range(rounds):
        for layout, size in order if r % 2 == 0 else order[::-1]:
            k, _ = trials_of(layout, 1 if size == "small" else big_k)
            ws = root / f"ws-{layout}-{size}-{r}"
            cmd = skillassay_cmd("run", str(skill), "--config", str(configs[layout]), "--trials", str(k),
                                 "--workspace", str(ws))
            samples.setdefault((layout, size), []).append(run_once(cmd, env, cwd=root))
            for charts in [ws / "iteration-1" / "charts", *(ws / "iteration-1" / "agents").glob("*/charts")]:
                wait_for_charts(charts)
            shutil.rmtree(ws, ignore_errors=True)
    print(f"after:  {load()}")
    n = {(layout, size): trials_of(layout, 1 if size == "small" else big_k)[1]
         for layout in ("one", "two") for size in ("small", "big")}
    print(f"whole processes, echo executor, {EVALS} evals, {rounds} interleaved rounds, under {root}")
    for (layout, size), series in sorted(samples.items()):
        secs = sorted(s.seconds for s in series)
        label = f"{'2 agents' if layout == 'two' else '1 agent '} {size:<5} ({n[(layout, size)]} trials)"
        cpu = statistics.median(s.cpu_seconds for s in series)
        print(f"  {label:<32} median {statistics.median(secs):7.3f} s (min {secs[0]:.3f}, max {secs[-1]:.3f}); "
              f"CPU {cpu:.2f} s")
    for measure, unit in (("cpu_seconds", "CPU"), ("seconds", "wall")):
        per_trial = {layout: [(getattr(big, measure) - getattr(small, measure))
                              / (n[(layout, "big")] - n[(layout, "small")])
                              for big, small in zip(samples[(layout, "big")], samples[(layout, "small")], strict=True)]
                     for layout in ("one", "two")}
        extra = sorted((b - a) * 1000 for a, b in zip(per_trial["one"], per_trial["two"], strict=True))
        print(f"{unit} per trial: 1 agent {statistics.median(per_trial['one']) * 1000:.3f} ms, 2 agents "
              f"{statistics.median(per_trial['two']) * 1000:.3f} ms; the matrix's extra, paired by round: median "
              f"{statistics.median(extra):+.3f} ms (range {extra[0]:+.3f}..{extra[-1]:+.3f})")
        fixed = sorted(getattr(b, measure) - getattr(a, measure)
                       for a, b in zip(samples[("one", "small")], samples[("two", "small")], strict=True))
        print(f"{unit}, the matrix's fixed extra per iteration (small runs, paired): median "
              f"{statistics.median(fixed):+.3f} s")

if __name__ == "__main__":
    main()
