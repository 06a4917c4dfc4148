"""The Ray backend at scale, on a real two-node Ray cluster started here (tests/ray_cluster.py):

1. efficiency: 1,000 trials of a latency-bound `command` executor (`sleep 0.5`) at
   concurrency 32 over two nodes (16 skillassay_slots each); ideal time = 1,000 x 0.5 s / 32,
   efficiency = ideal / measured (from the first trial dispatched to the last written), and
   the steady-state efficiency after the first 2 x concurrency trials;
2. the echo executor's per-trial overhead through Ray against the local backend's, both at
   concurrency 1 (a round trip each: the latency a trial pays);
3. Ray's start-up: the two-node cluster's `ray start`s, and a local instance started by
   `run --backend ray` without --ray-address.

    PYTHONPATH=src python benchmarks/ray_scaling.py            # everything
    PYTHONPATH=src python benchmarks/ray_scaling.py --trials 200 --echo-trials 50

Prints one JSON object. Every figure is measured on the machine it runs on."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ray_cluster import ray_env, start_cluster  # noqa: E402
from wholeproc import make_bench_skill  # noqa: E402

from skillassay.run.engine import Progress, RunRequest, run_benchmark  # noqa: E402
from skillassay.store.records import TrialRecord  # noqa: E402

EVALS = 50
SLEEP = 0.5


class Clock(Progress):
    """The execute phase only: from the first dispatch to the last trial written."""

    def start(self, total: int, skipped: int, message: str) -> None:
        self.t0 = time.perf_counter()
        self.t1 = self.t0
        self.done: list[float] = []

    def trial_done(self, record: TrialRecord) -> None:
        self.t1 = time.perf_counter()
        self.done.append(self.t1)

    def steady_rate(self, skip: int) -> float:
        """Trials per second after the first `skip` (the worker processes' start-up) finished."""
        later = self.done[skip:]
        return (len(later) - 1) / (later[-1] - later[0]) if len(later) > 1 else float("nan")

    @property
    def seconds(self) -> float:
        return self.t1 - self.t0


def make_skill(root: Path) -> Path:
    return make_bench_skill(root, "scale-skill", "Ray scaling benchmark skill.",
                            [{"type": "regex", "pattern": ".*"}], EVALS)


def timed_run(skill: Path, ws: Path, trials_total: int, clock: Clock | None = None,
              **kw: object) -> tuple[float, float, int]:
    """(execute-phase seconds, whole command seconds, trials executed)."""
    clock = clock or Clock()
    t0 = time.perf_counter()
    outcome = run_benchmark(RunRequest(skill_dir=skill, trials=max(1, trials_total // (EVALS * 2)), workspace=ws,
                                       stop_after_same_errors=0, **kw), clock)  # type: ignore[arg-type]
    return clock.seconds, time.perf_counter() - t0, outcome.executed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--echo-trials", type=int, default=200)
    args = ap.parse_args()
    os.environ.update({k: v for k, v in ray_env().items() if k.startswith("RAY_")})
    root = Path(tempfile.mkdtemp(prefix="sa-scale-", dir="/tmp"))
    out: dict[str, object] = {"cpus": os.cpu_count(), "load_average_before": os.getloadavg()[0]}
    cluster = start_cluster(slots=args.concurrency // 2)
    try:
        t = time.perf_counter()
        cluster.add_node(args.concurrency // 2)
        out["cluster_start_seconds"] = {"head": round(cluster.startup_seconds, 2),
                                        "second_node": round(time.perf_counter() - t, 2)}
        skill = make_skill(root)
        sleep = {"executor": "command", "executor_options": {"argv": ["/bin/sleep", str(SLEEP)]}}
        clock = Clock()
        execute, whole, n = timed_run(skill, root / "sleep", args.trials, clock, concurrency=args.concurrency,
                                      backend="ray", ray_address=cluster.address, **sleep)
        ideal = n * SLEEP / args.concurrency
        steady = clock.steady_rate(2 * args.concurrency)
        out["sleep_trials"] = {"trials": n, "concurrency": args.concurrency, "ideal_seconds": round(ideal, 2),
                               "execute_seconds": round(execute, 2), "command_seconds": round(whole, 2),
                               "efficiency": round(ideal / execute, 3),
                               # after the first 2 x concurrency trials: measured rate / ideal rate
                               "steady_trials_per_second": round(steady, 2),
                               "steady_efficiency": round(steady / (args.concurrency / SLEEP), 3)}
        echo = {"executor": "echo", "concurrency": 1}
        local_s, _, ln = timed_run(skill, root / "echo-local", args.echo_trials, **echo)
        ray_s, _, rn = timed_run(skill, root / "echo-ray", args.echo_trials, backend="ray",
                                 ray_address=cluster.address, **echo)
        out["echo_ms_per_trial"] = {"local": round(local_s / ln * 1000, 2), "ray": round(ray_s / rn * 1000, 2),
                                    "ray_minus_local": round((ray_s / rn - local_s / ln) * 1000, 2), "trials": ln}
    finally:
        cluster.stop()
    from skillassay.run.backends import RayBackend

    backend = RayBackend(None)  # what `run --backend ray` without --ray-address starts
    out["local_ray_init_seconds"] = round(backend.startup_seconds, 2)
    backend.close()
    out["load_average_after"] = os.getloadavg()[0]
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
