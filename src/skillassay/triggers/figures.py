"""Trigger figures from run outcomes: pure functions, no I/O.

The unit of replication is the query, not the run: the K runs of one query share its wording,
so they are one cluster. Every overall rate is a ratio over runs (recall: should-trigger runs
that fired, over should-trigger runs) whose 95% interval is the wider of two: the
query-clustered one (statsmodels' cluster-robust SE of a ratio, t with Q-1 df; see
stats/means.pooled_clustered_mean) and Wilson's over the pooled runs. Wilson is what the runs
would give were they independent; clustering can only add to that noise, never remove it, so
the clustered interval is not allowed to come out narrower (all queries 3/3 gives a clustered
SE of 0, and an interval of [1, 1] would claim a certainty 18 runs cannot give)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from skillassay.models.triggers import QueryResult, Rate, TriggerQuery, TriggerRun
from skillassay.stats.binomial import wilson_interval
from skillassay.stats.means import pooled_clustered_mean

RATE_METHOD = "runs pooled; 95% interval: the wider of the query-clustered t interval and Wilson's"
WILSON_METHOD = "Wilson 95% interval over this query's completed runs"
# skill-creator's rule: a query passes when it fires in at least half its runs (should trigger)
# or in under half (should not).
TRIGGER_THRESHOLD = 0.5


@dataclass(frozen=True)
class QueryCounts:
    """Completed runs of one query and how many of them loaded the skill."""

    should_trigger: bool
    completed: int
    fired: int


def hull(a: tuple[float, float] | None, b: tuple[float, float] | None) -> list[float] | None:
    if a is None or b is None:
        found = a or b
        return [float(found[0]), float(found[1])] if found else None
    return [float(min(a[0], b[0])), float(max(a[1], b[1]))]


def clustered_rate(sums: Sequence[int], counts: Sequence[int]) -> Rate:
    """sum(sums)/sum(counts) over clusters, with the interval described in the module doc."""
    num, den = int(sum(sums)), int(sum(counts))
    if den == 0:
        return Rate(value=None, interval=None, numerator=num, denominator=0, method=RATE_METHOD)
    wilson = wilson_interval(num, den)
    clustered = None
    if sum(1 for n in counts if n > 0) >= 2:
        est = pooled_clustered_mean(list(sums), list(counts))
        if est.interval is not None:
            clustered = (max(0.0, est.interval[0]), min(1.0, est.interval[1]))
    return Rate(value=num / den, interval=hull(clustered, wilson), numerator=num, denominator=den, method=RATE_METHOD)


def recall(counts: Sequence[QueryCounts]) -> Rate:
    pos = [c for c in counts if c.should_trigger]
    return clustered_rate([c.fired for c in pos], [c.completed for c in pos])


def false_trigger_rate(counts: Sequence[QueryCounts]) -> Rate:
    neg = [c for c in counts if not c.should_trigger]
    return clustered_rate([c.fired for c in neg], [c.completed for c in neg])


def precision(counts: Sequence[QueryCounts]) -> Rate:
    """Of the runs that fired, those on a should-trigger query: a ratio whose denominator is
    itself random, which the clustered ratio estimator handles (queries that never fired add
    nothing to either side)."""
    return clustered_rate([c.fired if c.should_trigger else 0 for c in counts], [c.fired for c in counts])


def accuracy(counts: Sequence[QueryCounts]) -> Rate:
    return clustered_rate([c.fired if c.should_trigger else c.completed - c.fired for c in counts],
                          [c.completed for c in counts])


def query_accuracy(c: QueryCounts) -> float | None:
    """The share of this query's runs that decided right (None: no completed run)."""
    if c.completed == 0:
        return None
    rate = c.fired / c.completed
    return rate if c.should_trigger else 1.0 - rate


def counts_of(runs: Sequence[TriggerRun], should_trigger: bool) -> QueryCounts:
    done = [r for r in runs if r.triggered is not None]
    return QueryCounts(should_trigger, len(done), sum(1 for r in done if r.triggered))


def query_result(index: int, query: TriggerQuery, runs: list[TriggerRun], skill_name: str) -> QueryResult:
    c = counts_of(runs, query.should_trigger)
    others: Counter[str] = Counter(n for r in runs if r.triggered is not None for n in r.loaded if n != skill_name)
    rate = c.fired / c.completed if c.completed else None
    if rate is None:
        outcome = "unmeasured"
    elif query.should_trigger:
        outcome = "ok" if rate >= TRIGGER_THRESHOLD else "miss"
    else:
        outcome = "false_trigger" if rate >= TRIGGER_THRESHOLD else "ok"
    interval = wilson_interval(c.fired, c.completed)
    return QueryResult(index=index, query=query.query, should_trigger=query.should_trigger, runs=runs,
                       trigger_rate=Rate(value=rate, interval=list(interval) if interval else None,
                                         numerator=c.fired, denominator=c.completed, method=WILSON_METHOD),
                       other_skills_fired=dict(sorted(others.items())), outcome=outcome)


def shadowing(results: Sequence[QueryResult], skill_name: str) -> dict[str, int]:
    """On should-trigger runs where this skill did not load, the other skill that did."""
    counts: Counter[str] = Counter()
    for q in results:
        if q.should_trigger:
            for r in q.runs:
                if r.triggered is False:
                    counts.update(n for n in r.loaded if n != skill_name)
    return dict(counts.most_common())


__all__ = ["QueryCounts", "TRIGGER_THRESHOLD", "accuracy", "clustered_rate", "counts_of", "false_trigger_rate",
           "precision", "query_accuracy", "query_result", "recall", "shadowing"]
