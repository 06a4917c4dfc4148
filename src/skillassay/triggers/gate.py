"""The trigger gate: `min_trigger_recall` and `max_false_trigger_rate`, each PASS (whole 95%
interval on the good side), FAIL (wholly on the bad side) or INCONCLUSIVE, with the benchmark
gate's verdict and exit codes (analyze.gate.verdict): FAIL wins, an invalid measurement is
never a PASS, nothing configured is NOT_GATED."""

from __future__ import annotations

from skillassay.analyze.gate import NOT_GATED, GateResult, ThresholdResult, verdict
from skillassay.models.triggers import QueryResult, Rate
from skillassay.stats.decide import decide
from skillassay.stats.types import Direction


def _threshold(key: str, limit: float, rate: Rate, direction: Direction, culprits: list[str],
               what: str, unmeasured: list[str]) -> ThresholdResult:
    if rate.value is None:
        return ThresholdResult(key, limit, None, "INCONCLUSIVE",
                               advice=f"no completed run of a query that {what}: add such queries")
    status = decide((rate.interval[0], rate.interval[1]) if rate.interval else None, limit, direction)
    if unmeasured and status != "INCONCLUSIVE":
        # A query whose every run failed is missing from the rate, and not at random: a run that
        # loads the skill and then stalls is exactly the one that times out. Neither call holds.
        return ThresholdResult(key, limit, rate.value, "INCONCLUSIVE", list(rate.interval) if rate.interval else None,
                               unmeasured, f"{len(unmeasured)} query(ies) that {what} have no completed run, "
                               "so the rate leaves them out: re-run (failed runs run again) or fix what fails")
    advice = ""
    if status == "INCONCLUSIVE":
        advice = ("the interval straddles the threshold: add queries (they narrow it most) or --runs")
    elif status == "FAIL":
        advice = "reword the description (skillassay optimize-description), then re-run"
    return ThresholdResult(key, limit, rate.value, status, list(rate.interval) if rate.interval else None,
                           culprits if status != "PASS" else [], advice)


def _unmeasured(queries: list[QueryResult], should_trigger: bool) -> list[str]:
    return [f"[{q.index}] {q.query}" for q in queries if q.outcome == "unmeasured" and q.should_trigger == should_trigger]


def gate_triggers(recall: Rate, false_rate: Rate, queries: list[QueryResult], *, min_recall: float | None,
                  max_false_rate: float | None, strict: bool = False) -> GateResult:
    results = []
    if min_recall is not None:
        misses = [f"[{q.index}] {q.query}" for q in queries if q.outcome == "miss"]
        results.append(_threshold("min_trigger_recall", min_recall, recall, "min", misses, "should trigger",
                                  _unmeasured(queries, True)))
    if max_false_rate is not None:
        false = [f"[{q.index}] {q.query}" for q in queries if q.outcome == "false_trigger"]
        results.append(_threshold("max_false_trigger_rate", max_false_rate, false_rate, "max", false,
                                  "should not trigger", _unmeasured(queries, False)))
    problems = []
    completed = sum(q.trigger_rate.denominator for q in queries)
    if completed == 0:
        problems.append("no run completed")
    return verdict(results, problems, strict=strict)


def headline(gate: GateResult) -> str:
    """The verdict in words; NOT_GATED names the trigger options, not the benchmark config."""
    if gate.status == NOT_GATED:
        return (f"{NOT_GATED}: no --min-trigger-recall or --max-false-trigger-rate given, so nothing was gated")
    return gate.headline()


__all__ = ["gate_triggers", "headline"]
