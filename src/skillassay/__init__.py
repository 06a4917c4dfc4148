"""skillassay: does this Agent Skill really help, by how much, and how sure are we?

The public Python API. Names load on first use (PEP 562), so `import skillassay` and the CLI's
start-up do not pay for the statistics libraries until something needs them.

    from skillassay import RunRequest, run_benchmark
    outcome = run_benchmark(RunRequest(skill_dir=Path("my-skill")))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it; the one list of what is public.
_PUBLIC = {
    # run a benchmark: plan -> execute -> grade -> aggregate -> compare -> gate
    "RunRequest": "skillassay.run.engine",
    "RunOutcome": "skillassay.run.engine",
    "run_benchmark": "skillassay.run.engine",
    # re-grade an existing iteration
    "regrade_iteration": "skillassay.workflows.regrade",
    # aggregate an iteration folder into benchmark.json + benchmark.md
    "aggregate_iteration": "skillassay.workflows.aggregate",
    "build_benchmark": "skillassay.analyze.benchmark",
    # compare with the previous iteration
    "compare": "skillassay.workflows.compare_on_disk",
    # gate
    "evaluate": "skillassay.analyze.gate",
    "GateResult": "skillassay.analyze.gate",
    "check_iteration": "skillassay.workflows.gate_iteration",
    # report.md (with its charts)
    "write_report": "skillassay.workflows.report_iteration",
    # validate what users write
    "validate_paths": "skillassay.run.preflight",
    # the data contract
    **{name: "skillassay.models" for name in (
        "Benchmark", "BenchmarkConfig", "Eval", "EvalMetadata", "EvalSet", "Expectation", "ExpectationResult",
        "Grading", "GradingSummary", "History", "HistoryEntry", "Metrics", "Thresholds", "Timing",
    )},
    "InputError": "skillassay.errors",
}

__all__ = [
    "__version__",
    "Benchmark",
    "BenchmarkConfig",
    "Eval",
    "EvalMetadata",
    "EvalSet",
    "Expectation",
    "ExpectationResult",
    "GateResult",
    "Grading",
    "GradingSummary",
    "History",
    "HistoryEntry",
    "InputError",
    "Metrics",
    "RunOutcome",
    "RunRequest",
    "Thresholds",
    "Timing",
    "aggregate_iteration",
    "build_benchmark",
    "check_iteration",
    "compare",
    "evaluate",
    "regrade_iteration",
    "run_benchmark",
    "validate_paths",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'skillassay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from skillassay.analyze.benchmark import build_benchmark
    from skillassay.analyze.gate import GateResult, evaluate
    from skillassay.errors import InputError
    from skillassay.models import (
        Benchmark,
        BenchmarkConfig,
        Eval,
        EvalMetadata,
        EvalSet,
        Expectation,
        ExpectationResult,
        Grading,
        GradingSummary,
        History,
        HistoryEntry,
        Metrics,
        Thresholds,
        Timing,
    )
    from skillassay.run.engine import RunOutcome, RunRequest, run_benchmark
    from skillassay.run.preflight import validate_paths
    from skillassay.workflows.aggregate import aggregate_iteration
    from skillassay.workflows.compare_on_disk import compare
    from skillassay.workflows.gate_iteration import check_iteration
    from skillassay.workflows.regrade import regrade_iteration
    from skillassay.workflows.report_iteration import write_report
