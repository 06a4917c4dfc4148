"""How long build_statistics takes on 20,000 synthetic records (50 evals x 2 arms x 200
trials): the statistics must stay cheap enough to run on every aggregate."""

from __future__ import annotations

import time

import numpy as np

from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics
from skillassay.store.records import TrialRecord

N_EVALS, N_TRIALS = 50, 200
CONFIGS = {"with_skill": 0.15, "without_skill": 0.0}  # pass-rate uplift per arm


def synthetic_records(seed: int = 0) -> list[TrialRecord]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.8, N_EVALS)
    records = []
    for e in range(N_EVALS):
        for config, uplift in CONFIGS.items():
            p = min(1.0, base[e] + uplift)
            passed = rng.random(N_TRIALS) < p
            tokens = rng.lognormal(10, 0.3, N_TRIALS)
            secs = rng.lognormal(3, 0.5, N_TRIALS)
            status = np.where(rng.random(N_TRIALS) < 0.02, "error", "ok")
            for k in range(N_TRIALS):
                ok = status[k] == "ok"
                records.append(TrialRecord(
                    eval_id=e, eval_name=f"eval-{e}", configuration=config, run_number=k + 1,
                    status=str(status[k]), passed=bool(passed[k]) if ok else None,
                    passed_count=int(passed[k]), total_count=1,
                    tokens=int(tokens[k]), duration_seconds=float(secs[k]), tool_calls=3,
                    skill_triggered=config == "with_skill"))
    return records


def main() -> None:
    records = synthetic_records()
    cells = group_records(records, ("with_skill", "without_skill"))
    thresholds = {"min_pass_rate": 0.6, "max_avg_tokens": 25_000.0,
                  "max_avg_duration_seconds": 30.0, "min_improvement_ratio": 1.0}
    build_statistics(cells, "with_skill", "without_skill", N_TRIALS, thresholds)  # warm-up
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        build_statistics(cells, "with_skill", "without_skill", N_TRIALS, thresholds, seed=0)
        times.append(time.perf_counter() - t0)
    print(f"build_statistics on {len(records)} records: best {min(times):.3f} s, "
          f"median {sorted(times)[2]:.3f} s over 5 runs")


if __name__ == "__main__":
    main()
