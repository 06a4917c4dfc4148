"""Every file of the data contract as a pydantic model, and the registry `schema`/`validate` use.

Names load on first use (PEP 562): building a pydantic model is the costly part of importing
it, and a command that reads three kinds of file (`run`) should not build the other ten's
models (the trigger, improve and feedback files) at every start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the submodule that defines it
_WHERE = {
    "SpecModel": "base",
    **dict.fromkeys(("Benchmark", "BenchmarkRun", "RunResult"), "benchmark"),
    **dict.fromkeys(("Adaptive", "BenchmarkConfig", "Thresholds"), "config"),
    **dict.fromkeys(("Assertion", "Eval", "EvalMetadata", "EvalSet", "Expectation"), "evals"),
    **dict.fromkeys(("Feedback", "Review"), "feedback"),
    **dict.fromkeys(("ComparedEval", "IterationComparison"), "comparison"),
    "IterationRecord": "iteration",
    "MatrixSummary": "matrix",
    **dict.fromkeys(("Analysis", "Comparison", "History", "HistoryEntry"), "improve"),
    **dict.fromkeys(("ExecutionMetrics", "ExpectationResult", "Grading", "GradingSummary", "Metrics", "Timing"),
                    "runfiles"),
    **dict.fromkeys(("DescriptionHistory", "TriggerReport"), "triggers"),
}

# kind name -> model name; the kind is also the file's usual name without ".json".
_KINDS = {
    "evals": "EvalSet",
    "eval_metadata": "EvalMetadata",
    "grading": "Grading",
    "metrics": "Metrics",
    "timing": "Timing",
    "history": "History",
    "benchmark": "Benchmark",
    "comparison": "Comparison",
    "analysis": "Analysis",
    "feedback": "Feedback",
    "config": "BenchmarkConfig",
    "triggers": "TriggerReport",
    "description_history": "DescriptionHistory",
    # the tool's own files beside those (issue 34: `validate` refused comparison_previous.json)
    "comparison_previous": "IterationComparison",
    "iteration": "IterationRecord",
    "matrix": "MatrixSummary",  # issue 37: the statistics across the agents of one iteration
}

# The kinds, without building a model (`validate`'s file-name rules, error messages).
KINDS = tuple(_KINDS)


def model_of(kind: str) -> type[SpecModel]:
    """The model of one kind (KeyError for an unknown kind), building only that one."""
    model: type[SpecModel] = __getattr__(_KINDS[kind])
    return model


__all__ = [
    "KINDS", "MODELS", "model_of", "SpecModel", "Adaptive", "Analysis", "Assertion", "Benchmark", "BenchmarkConfig", "BenchmarkRun",
    "Comparison", "Eval", "EvalMetadata", "EvalSet", "ExecutionMetrics", "Expectation",
    "DescriptionHistory", "ExpectationResult", "Feedback", "Grading", "GradingSummary", "History", "HistoryEntry",
    "Metrics", "Review", "RunResult", "Thresholds", "Timing", "TriggerReport",
    "ComparedEval", "IterationComparison", "IterationRecord", "MatrixSummary",
]


def __getattr__(name: str) -> Any:
    if name == "MODELS":  # every kind: builds every model
        value: Any = {kind: __getattr__(model) for kind, model in _KINDS.items()}
    elif name in _WHERE:
        value = getattr(importlib.import_module(f"skillassay.models.{_WHERE[name]}"), name)
    else:
        raise AttributeError(f"module 'skillassay.models' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from skillassay.models.base import SpecModel
    from skillassay.models.benchmark import Benchmark, BenchmarkRun, RunResult
    from skillassay.models.config import Adaptive, BenchmarkConfig, Thresholds
    from skillassay.models.evals import Assertion, Eval, EvalMetadata, EvalSet, Expectation
    from skillassay.models.feedback import Feedback, Review
    from skillassay.models.improve import Analysis, Comparison, History, HistoryEntry
    from skillassay.models.matrix import MatrixSummary
    from skillassay.models.runfiles import (
        ExecutionMetrics,
        ExpectationResult,
        Grading,
        GradingSummary,
        Metrics,
        Timing,
    )
    from skillassay.models.triggers import DescriptionHistory, TriggerReport

    MODELS: dict[str, type[SpecModel]]
