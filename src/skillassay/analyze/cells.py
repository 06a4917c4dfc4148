"""Trial records grouped by eval and configuration (Arm, EvalCell) and the per-eval series
a figure is computed from (MetricSeries): the plain data every statistic starts from."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skillassay.analyze import rate_intervals
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading
from skillassay.stats.binomial import within_eval_variance
from skillassay.stats.means import MeanEstimate, binomial_floor_se, clustered_mean, pooled_clustered_mean
from skillassay.stats.paired import PairedDifference
from skillassay.stats.ratio import GeometricRatio
from skillassay.stats.types import Interval
from skillassay.store.records import TrialRecord

# A mean-per-trial threshold -> the Arm's per-trial values it is gated on.
MEAN_GATES = {"max_avg_tokens": "tokens", "max_avg_duration_seconds": "durations", "max_avg_cost_usd": "costs"}


def _values() -> array[float]:
    return array("d")


@dataclass
class Arm:
    """One eval under one configuration: the counts and the completed trials' measurements,
    accumulated one trial at a time (`skillassay aggregate` streams 200,000 runs through these
    without keeping the runs). Per-trial values sit in array('d'), 8 bytes each where a list of
    floats costs ~32, because medians and variances need every value."""

    passes: int = 0
    completed: int = 0  # completed and graded: the pass rates' denominator
    errored: int = 0
    timed_out: int = 0
    ungraded: int = 0  # completed, but an expectation has no verdict: out of the pass rates
    recorded: int = 0
    tokens: array[float] = field(default_factory=_values)
    durations: array[float] = field(default_factory=_values)
    # USD of every recorded trial whose cost is known, errored ones too (they were paid for);
    # a trial of unknown cost is counted, never taken as 0 (analyze/cost.py).
    costs: array[float] = field(default_factory=_values)
    costs_unknown: int = 0
    # Expectation pass rate of each completed trial, NaN for a trial with no expectations: one
    # array in trial order serves both the per-arm mean (NaN left out) and run_summary (NaN as 0).
    rates: array[float] = field(default_factory=_values)
    tool_calls_seen: int = 0
    tool_calls_total: int = 0
    triggered_seen: int = 0
    triggered_yes: int = 0
    # Graded trials by skill_triggered, for analyze.triggered's split (unknown: the rest).
    loaded_completed: int = 0
    loaded_passes: int = 0
    unloaded_completed: int = 0
    unloaded_passes: int = 0

    def add(self, r: TrialRecord) -> None:
        if not r.completed:
            # Errored and timed-out trials are excluded from rates and variance (spec).
            self.recorded += 1
            self.errored += 1
            self.timed_out += r.status == "timeout"
            self.add_cost(r.cost_usd)
            return
        self.add_completed(r.tokens, r.duration_seconds, r.tool_calls, r.skill_triggered, r.ungraded,
                           bool(r.passed), r.passed_count, r.total_count, r.cost_usd)

    def add_cost(self, cost: float | None) -> None:
        if cost is None:
            self.costs_unknown += 1
        else:
            self.costs.append(cost)

    def add_completed(self, tokens: float | None, duration: float | None, tool_calls: int | None,
                      triggered: bool | None, ungraded: bool, won: bool, passed: int, total: int,
                      cost: float | None = None) -> None:
        """A completed trial, from its figures: Arm.add's, and `aggregate`'s plain-run path's,
        which builds no record (workflows.iteration_reader._read_config)."""
        self.recorded += 1
        self.add_cost(cost)
        if tokens is not None:
            self.tokens.append(tokens)
        if duration is not None:
            self.durations.append(duration)
        if tool_calls is not None:
            self.tool_calls_seen += 1
            self.tool_calls_total += tool_calls
        if triggered is not None:
            self.triggered_seen += 1
            self.triggered_yes += triggered
        if ungraded:
            # Neither a pass nor a fail: its cost was measured, its result was not.
            self.ungraded += 1
            return
        self.completed += 1
        self.passes += won
        if triggered is True:
            self.loaded_completed += 1
            self.loaded_passes += won
        elif triggered is False:
            self.unloaded_completed += 1
            self.unloaded_passes += won
        self.rates.append(passed / total if total else math.nan)

    def merge(self, other: Arm) -> None:
        """Add the trials of another Arm of the same eval and configuration (read elsewhere)."""
        for name in ("passes", "completed", "errored", "timed_out", "ungraded", "recorded", "tool_calls_seen",
                     "tool_calls_total", "triggered_seen", "triggered_yes", "loaded_completed",
                     "loaded_passes", "unloaded_completed", "unloaded_passes", "costs_unknown"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tokens.extend(other.tokens)
        self.durations.extend(other.durations)
        self.costs.extend(other.costs)
        self.rates.extend(other.rates)

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.completed if self.completed else None

    @property
    def expectation_rates(self) -> list[float]:
        """Completed trials' expectation pass rates, trials without expectations left out."""
        rates = np.frombuffer(self.rates, dtype=np.float64)  # a view: numpy, not a Python loop per trial
        kept: list[float] = rates[~np.isnan(rates)].tolist()
        return kept

    @property
    def run_rates(self) -> array[float]:
        """As skill-creator's run_summary counts them: a trial without expectations is 0."""
        out = array("d", self.rates)
        view = np.frombuffer(out, dtype=np.float64)
        view[np.isnan(view)] = 0.0
        return out


def mean_or_none(xs: Sequence[float]) -> float | None:
    """The plain mean of the spec's figures (sum / n, in order), None for no values."""
    return sum(xs) / len(xs) if xs else None


def joined(parts: Iterable[array[float]]) -> array[float]:
    """Several arms' per-trial values in one packed array: suite-wide figures (medians, run
    summaries) of 200,000 trials then need 1.6 MB, not 6 MB of float objects."""
    out = _values()
    for part in parts:
        out.extend(part)
    return out


@dataclass
class EvalCell:
    eval_id: int | str
    eval_name: str
    arms: dict[str, Arm]


def group_records(records: Iterable[TrialRecord], configs: Sequence[str]) -> list[EvalCell]:
    """Evals in first-appearance order, each with an Arm for every requested configuration
    (empty when it has no records, so a missing arm is visible rather than silently absent)."""
    cells: dict[int | str, EvalCell] = {}
    wanted = set(configs)
    for r in records:
        cell = cells.get(r.eval_id)
        if cell is None:
            cell = cells[r.eval_id] = EvalCell(r.eval_id, r.eval_name, {c: Arm() for c in configs})
        if r.configuration in wanted:
            cell.arms[r.configuration].add(r)
    return list(cells.values())


def _f(x: float | None, nd: int = 6) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else round(x, nd)


def _iv(interval: Interval | None, nd: int = 6) -> list[float | None] | None:
    return None if interval is None else [_f(interval[0], nd), _f(interval[1], nd)]


def rates_of(cells: Iterable[EvalCell], config: str) -> list[float]:
    """Per-eval pass rates of `config`, for cells already chosen to have completed trials in it."""
    out = []
    for c in cells:
        rate = c.arms[config].pass_rate
        if rate is None:
            raise ValueError(f"eval {c.eval_id} has no completed {config} trial")
        out.append(rate)
    return out


@dataclass
class MetricSeries:
    """Per-eval inputs of one suite figure (pass rate, tokens or duration) for one config.
    within_var[i] is eval i's per-trial sample variance, None with fewer than 2 values."""

    eval_ids: list[int | str]
    means: list[float]
    sums: list[float]
    counts: list[int]
    within_var: list[float | None]

    @classmethod
    def build(cls, cells: list[EvalCell], config: str, attr: str) -> MetricSeries:
        out = cls([], [], [], [], [])
        for cell in cells:
            arm = cell.arms[config]
            if attr == "pass":
                n, s = arm.completed, float(arm.passes)
                wv = within_eval_variance(arm.passes, n)
            else:
                vals = getattr(arm, attr)
                n, s = len(vals), float(sum(vals))
                wv = float(np.var(vals, ddof=1)) if n > 1 else None
            if n == 0:
                continue
            out.eval_ids.append(cell.eval_id)
            out.means.append(s / n)
            out.sums.append(s)
            out.counts.append(n)
            out.within_var.append(wv)
        return out

    def estimate(self, pooled: bool, reading: Reading = DEFAULT_READING) -> MeanEstimate | None:
        """Eval-mean (pass rate, as the spec averages per-eval rates) or trial-pooled (tokens,
        duration, as the spec pools trials), with the one interval of `reading`
        (rate_intervals: the gate decides on it and its FAIL p is the same test's). The SE is
        the eval-clustered one, floored at the binomial noise for a pass rate: the advice's."""
        if not self.means:
            return None
        est = (pooled_clustered_mean(self.sums, self.counts) if pooled else clustered_mean(
            self.means, bounds=(0.0, 1.0), floor_se=binomial_floor_se(self.means, self.counts)))
        return MeanEstimate(est.mean, est.se, self.interval(pooled, reading), est.n)

    def interval(self, pooled: bool, reading: Reading) -> Interval | None:
        """The interval of one reading alone (benchmark.json records both)."""
        if not self.means:
            return None
        if pooled:
            return rate_intervals.cost_interval(self.sums, self.counts, self.within_var, reading)
        return rate_intervals.pass_rate_interval(self.pass_counts(), self.counts, reading)

    def pass_counts(self) -> list[int]:
        """Each eval's passes (a pass series' sums are its pass counts)."""
        return [round(x) for x in self.sums]

    def noise_of_means(self) -> float:
        """mean(s_e^2 / n_e) over the evals with 2 or more trials: the part of the per-eval means'
        variance that is trial noise (0.0 when no eval has two trials)."""
        parts = [w / n for w, n in zip(self.within_var, self.counts, strict=True) if w is not None]
        return float(np.mean(parts)) if parts else 0.0

    def components(self) -> tuple[float, float]:
        """(omega^2, mean per-trial variance): split the spread of per-eval means into the part
        more trials cannot shrink and the part they can. Unbiased: var(m_e) - mean(s_e^2/n_e)."""
        known = [w for w in self.within_var if w is not None]
        s2 = float(np.mean(known)) if known else 0.0
        if len(self.means) < 2:
            return 0.0, s2
        return max(0.0, float(np.var(self.means, ddof=1)) - self.noise_of_means()), s2


SCHEMA_VERSION = 1


def _eval_label(cell: EvalCell) -> str:
    return f"eval-{cell.eval_id} ({cell.eval_name})" if cell.eval_name else f"eval-{cell.eval_id}"


def _paired_diff_dict(pd: PairedDifference) -> dict[str, Any]:
    return {
        "mean": _f(pd.mean), "se": _f(pd.se), "interval": _iv(pd.interval), "n_evals": pd.n,
        "n_nonzero": pd.n_nonzero, "p_value": _f(pd.p_value), "p_value_method": pd.method,
        "significance_reachable": pd.significance_reachable, "explanation": pd.explanation,
    }


def _geo_dict(g: GeometricRatio) -> dict[str, Any]:
    return {"ratio": _f(g.ratio), "interval": _iv(g.interval), "n_evals_used": g.n_used,
            "n_evals_skipped": g.n_skipped, "reason": g.reason}


def _arm_center(arm: Arm, attr: str, how: str) -> float | None:
    vals = getattr(arm, attr)
    if not vals:
        return None
    return float(np.mean(vals)) if how == "mean" else float(np.median(vals))


def paired_floors(used: list[EvalCell], a: str, b: str) -> tuple[float, float]:
    """Each arm's binomial noise floor on its mean pass rate over the paired evals, with
    Agresti-Caffo's one success and one failure per arm (see stats/means.binomial_floor_se)."""
    fa, fb = (binomial_floor_se(rates_of(used, cfg), [c.arms[cfg].completed for c in used],
                                      pseudo=1.0) for cfg in (a, b))
    return fa, fb
