"""Every file of the data contract as a pydantic model, and the registry `schema`/`validate` use."""

from skillassay.models.base import SpecModel
from skillassay.models.benchmark import Benchmark, BenchmarkRun, RunResult
from skillassay.models.config import Adaptive, BenchmarkConfig, Thresholds
from skillassay.models.evals import Assertion, Eval, EvalMetadata, EvalSet, Expectation
from skillassay.models.feedback import Feedback, Review
from skillassay.models.improve import Analysis, Comparison, History, HistoryEntry
from skillassay.models.runfiles import (
    ExecutionMetrics,
    ExpectationResult,
    Grading,
    GradingSummary,
    Metrics,
    Timing,
)
from skillassay.models.triggers import DescriptionHistory, TriggerReport

# kind name -> model; the kind is also the file's usual name without ".json".
MODELS: dict[str, type[SpecModel]] = {
    "evals": EvalSet,
    "eval_metadata": EvalMetadata,
    "grading": Grading,
    "metrics": Metrics,
    "timing": Timing,
    "history": History,
    "benchmark": Benchmark,
    "comparison": Comparison,
    "analysis": Analysis,
    "feedback": Feedback,
    "config": BenchmarkConfig,
    "triggers": TriggerReport,
    "description_history": DescriptionHistory,
}

__all__ = [
    "MODELS", "SpecModel", "Adaptive", "Analysis", "Assertion", "Benchmark", "BenchmarkConfig", "BenchmarkRun",
    "Comparison", "Eval", "EvalMetadata", "EvalSet", "ExecutionMetrics", "Expectation",
    "DescriptionHistory", "ExpectationResult", "Feedback", "Grading", "GradingSummary", "History", "HistoryEntry",
    "Metrics", "Review", "RunResult", "Thresholds", "Timing", "TriggerReport",
]
