"""What the budget tests share (tests/run/test_budget*.py): the example skill cut to a few evals
with a config for the executor under test, the graded trials' usage, the dry run's cost range,
and benchmark.json's arm totals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def budget_suite(skill: Path, evals: int | None = None, **config: Any) -> None:
    """The skill's first `evals` evals (all when None), its config updated with `config` and a
    30% pass-rate threshold only."""
    if evals is not None:
        evals_path = skill / "evals" / "evals.json"
        data = json.loads(evals_path.read_text())
        data["evals"] = data["evals"][:evals]
        evals_path.write_text(json.dumps(data))
    config_path = skill / "evals" / "benchmark_config.json"
    data = json.loads(config_path.read_text())
    data.update({"thresholds": {"min_pass_rate": 0.3}}, **config)
    config_path.write_text(json.dumps(data))


def graded_usages(ws: Path) -> list[dict]:
    """metrics.json's `usage` of every graded trial in the workspace."""
    return [json.loads(p.read_text())["usage"] for p in sorted(ws.glob("iteration-*/*/*/run-*/outputs/metrics.json"))
            if (p.parent.parent / "grading.json").is_file()]


def cost_range(output: str) -> tuple[float, float]:
    """The dry run's `cost: $LOW..$HIGH ...` line, as numbers."""
    line = next(x for x in output.splitlines() if x.startswith("cost: "))
    low, high = (float(v.strip("$,")) for v in line.split()[1].split(".."))
    return low, high


def arm_totals(ws: Path, iteration: int = 1) -> float:
    """The sum of benchmark.json's per-arm cost totals."""
    bench = json.loads((ws / f"iteration-{iteration}" / "benchmark.json").read_text())
    return sum(a["total_usd"] for a in bench["cost"]["configurations"].values())
