"""When an adaptive run has had enough trials: a group-sequential stop on the gates' own statistics
(Haybittle-Peto interim boundary, the fixed design's level at the last look, curtailment; each gate
its own test). The first rule's per-eval betting confidence sequences, which the suite rule does
not use, live with their test (tests/run/test_confidence_sequence.py). Why each part, with its
references and measurements: docs/statistics.md, "The stopping rule in full"."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from skillassay.analyze.cells import EvalCell, group_records
from skillassay.stats import distributions
from skillassay.stats.means import binomial_floor_se
from skillassay.stats.ufuncs import ufuncs
from skillassay.store.records import TrialRecord

ALPHA = 0.05

# ---------------------------------------------------------------------------------------------
# The suite-level rule

METHOD = ("group-sequential stop on the gates' own statistics: Haybittle-Peto interim boundary, the fixed "
          "design's level at the last look, curtailment; no futility stop")
INTERIM_ALPHA = 0.00135  # one-sided, per interim look: the "3 sigma" of Haybittle-Peto
# Futility is off (issue 34): settled when a call at the last look has less conditional power than
# this, and at 0.2 (Lachin 2005) from 80% of the information the ratio gate alone still lost 9 of 36
# passes at +0.1 (from 90%: 2 of 51; off: none), 100 experiments each, benchmarks/adaptive.py. The
# rule stays for study (adaptive.py --futility-power); off, nothing is settled, only decided.
FUTILITY_POWER = 0.0
FUTILITY_OPTIMISM = 0.5  # ... under the drift this many standard errors beyond the current trend
# ... and only once this much of the gate's information is in (issue 34): from the first look the
# rule gave up real passes (at +0.25 it stopped at 3 trials with 64% of the information in).
# Measured with benchmarks/adaptive.py --futility-from; see the module docstring.
FUTILITY_FROM_INFORMATION = 0.8
CURTAIL_POWER = 0.95  # decided when a call at the last look has this conditional probability under H0
FINAL_ALPHA = ALPHA / 2  # one-sided: the fixed design's two-sided 95% interval, one side each
DIRECTIONS = {"min_pass_rate": 1, "min_improvement_ratio": 1, "max_avg_tokens": -1, "max_avg_duration_seconds": -1,
              "max_avg_cost_usd": -1}

DECIDED = "decided"
SETTLED = "settled"  # futility: no call is within reach by the last look
AGREE_ON: tuple[bool, ...] = ()
AGREED = "agreed"  # one eval: both arms passed every trial, or both failed every trial, at its first look
REACHED_MAX = "reached max"
RUNNING = "running"



def _norm_cdf(x: float) -> float:
    """scipy.stats.norm.cdf is scipy.special.ndtr; imported here, not at the top, because
    `run` imports this module and scipy.stats alone costs about a CPU second (issue 17)."""
    ndtr = ufuncs().ndtr  # without scipy.special's package import (ufuncs)

    return float(ndtr(x))

@dataclass(frozen=True)
class Questions:
    """The configured gates (key, threshold) the rule watches, and the two arms' names."""

    gates: tuple[tuple[str, float], ...] = ()
    skill: str = "with_skill"
    baseline: str = "without_skill"


@dataclass(frozen=True)
class GateLook:
    """One gate at one look: its Z, the estimated information fraction, the conditional power
    of a call at the last look, and the status (decided / settled / running)."""

    key: str
    z: float | None
    information: float | None
    power: float | None
    status: str
    call: str | None = None  # PASS / FAIL when decided
    kept: bool = False  # decided at an earlier look, and the fixed gate still makes that call

    def reason(self) -> str:
        if self.kept:
            return (f"{self.key} {self.call} (Z {self.z:+.2f}, information {self.information:.2f}: decided at an "
                    "earlier look, and the fixed design's gate still makes that call)")
        if self.status == DECIDED:
            return (f"{self.key} {self.call} (Z {self.z:+.2f}, information {self.information:.2f}: beyond the "
                    "interim boundary, or the call holds at the last look with conditional probability >= "
                    f"{CURTAIL_POWER:g} under no effect)")
        if self.status == SETTLED:
            return (f"{self.key} settled INCONCLUSIVE (Z {self.z:+.2f}, information {self.information:.2f}, "
                    f"conditional power of a call {self.power:.3f} < {FUTILITY_POWER:g})")
        z = "n/a" if self.z is None else f"{self.z:+.2f}"
        return f"{self.key} open (Z {z})"


@dataclass(frozen=True)
class EvalState:
    """Where the suite (and so each eval) stands: status, trials per arm, reasons in words."""

    status: str
    trials: int
    reasons: tuple[str, ...] = field(default_factory=tuple)
    gates: tuple[GateLook, ...] = ()

    @property
    def stopped(self) -> bool:
        return self.status != RUNNING


@dataclass(frozen=True)
class Series:
    """One gate's per-eval scores y_e (the quantity whose mean the gate tests, threshold
    subtracted), their trial counts and per-trial variances, and the gate's own SE floor."""

    y: np.ndarray
    n: np.ndarray
    within: np.ndarray
    floor_se: float
    pooled: bool = False
    weights: np.ndarray | None = None


def _var(values: Sequence[float]) -> float:
    return float(np.var(values, ddof=1)) if len(values) > 1 else 0.0


def gate_series(key: str, thr: float, cells: list[EvalCell], skill: str, baseline: str) -> Series | None:
    """The gate's per-eval inputs as gate_stats.gate_stats forms them: the skill's per-eval
    pass rate (floored by binomial_floor_se), the paired a_e - thr * b_e (floored by both
    arms' Agresti-Caffo floors, as paired_stats does), or per-eval mean cost (trial-pooled)."""
    if key == "min_pass_rate":
        arms = [c.arms[skill] for c in cells if c.arms[skill].completed]
        if not arms:
            return None
        m = np.array([a.passes / a.completed for a in arms])
        n = np.array([a.completed for a in arms], dtype=float)
        w = np.where(n > 1, m * (1 - m) * n / np.maximum(n - 1, 1), 0.25)
        return Series(m - thr, n, w, binomial_floor_se(m, n))
    if key == "min_improvement_ratio":
        used = [c for c in cells if c.arms[skill].completed and c.arms[baseline].completed]
        if not used:
            return None
        parts = []
        for cfg in (skill, baseline):
            arms = [c.arms[cfg] for c in used]
            m = np.array([a.passes / a.completed for a in arms])
            n = np.array([a.completed for a in arms], dtype=float)
            w = np.where(n > 1, m * (1 - m) * n / np.maximum(n - 1, 1), 0.25)
            parts.append((m, n, w, binomial_floor_se(m, n, pseudo=1.0)))
        (ma, na, wa, fa), (mb, nb, wb, fb) = parts
        n = np.minimum(na, nb)
        return Series(ma - thr * mb, n, wa + thr**2 * wb, math.hypot(fa, thr * fb))
    attr = {"max_avg_tokens": "tokens", "max_avg_cost_usd": "costs"}.get(key, "durations")
    vals = [list(getattr(c.arms[skill], attr)) for c in cells]
    vals = [v for v in vals if v]
    if not vals:
        return None
    n = np.array([len(v) for v in vals], dtype=float)
    m = np.array([float(np.mean(v)) for v in vals])
    return Series(m - thr, n, np.array([_var(v) for v in vals]), 0.0, pooled=True, weights=n)


def standardized(s: Series) -> tuple[float, float, int] | None:
    """(Z, SE, evals): the gate's estimate minus threshold over its eval-clustered SE, the
    pooled form for costs (stats/means.pooled_clustered_mean's), the floored one for rates."""
    g = int(s.y.size)
    if g < 2:
        return None
    if s.pooled and s.weights is not None:
        total = float(s.weights.sum())
        mean = float((s.y * s.weights).sum() / total)
        se = math.sqrt(g / (g - 1) * float((((s.y - mean) * s.weights) ** 2).sum())) / total
    else:
        mean = float(s.y.mean())
        se = max(float(s.y.std(ddof=1)) / math.sqrt(g), s.floor_se)
    if se <= 0:
        return None
    return mean / se, se, g


def information_fraction(s: Series, max_trials: int) -> float:
    """Var(estimate now) / Var(estimate at max_trials) inverted: (omega^2 + w/N) / (omega^2 + w/n),
    omega^2 the between-eval variance more trials cannot shrink (method of moments, as
    cells.MetricSeries.components), w the mean per-trial variance. 1 at the maximum."""
    n = float(np.mean(s.n))
    if n >= max_trials:
        return 1.0
    w = float(np.mean(s.within))
    omega = max(0.0, _var(list(s.y)) - float(np.mean(s.within / s.n)))
    now, final = omega + w / n, omega + w / max_trials
    return 1.0 if now <= 0 else min(1.0, final / now)


def conditional_power(z: float, info: float, crit: float, optimism: float) -> float:
    """P(|Z at the last look| >= crit | Z now), Brownian-motion form B(t) = sqrt(t) Z_t with
    B(1) = B(t) + theta (1 - t) + N(0, 1 - t), theta the trend B(t)/t moved `optimism` of its
    standard errors (1/sqrt(t)) towards each side's call (Jennison & Turnbull 2000, 10.2)."""
    if info >= 1.0:
        return float(abs(z) >= crit)
    b, rest = math.sqrt(info) * z, 1.0 - info
    trend, se = b / info, 1.0 / math.sqrt(info)
    up = 1 - _norm_cdf((crit - b - (trend + optimism * se) * rest) / math.sqrt(rest))
    down = _norm_cdf((-crit - b - (trend - optimism * se) * rest) / math.sqrt(rest))
    return float(up + down)


def null_power(z: float, info: float, crit: float) -> float:
    """P(Z at the last look >= crit on Z's own side | Z now) with no drift at all (the
    gate's value at its threshold): the conditional power of the call under H0, which
    stochastic curtailment compares with CURTAIL_POWER (Lan, Simon & Halperin 1982)."""
    if info >= 1.0:
        return float(abs(z) >= crit)
    return float(1 - _norm_cdf((crit - math.sqrt(info) * abs(z)) / math.sqrt(1.0 - info)))


def gate_look(key: str, thr: float, cells: list[EvalCell], q: Questions, max_trials: int,
              before: GateLook | None = None) -> GateLook:
    s = gate_series(key, thr, cells, q.skill, q.baseline)
    st = standardized(s) if s is not None else None
    if s is None or st is None:
        return GateLook(key, None, None, None, RUNNING)
    z, _, g = st
    info = information_fraction(s, max_trials)
    interim = float(distributions.t_ppf(1 - INTERIM_ALPHA, g - 1))
    final = float(distributions.t_ppf(1 - FINAL_ALPHA, g - 1))
    power = conditional_power(z, info, final, FUTILITY_OPTIMISM)
    call = "PASS" if (z > 0) == (DIRECTIONS[key] > 0) else "FAIL"
    if abs(z) >= interim or (abs(z) >= final and null_power(z, info, final) >= CURTAIL_POWER):
        return GateLook(key, z, info, power, DECIDED, call)
    if before is not None and before.status == DECIDED and before.call == call and abs(z) >= final:
        return GateLook(key, z, info, power, DECIDED, call, kept=True)  # its stop holds: same call
    if abs(z) < final and info >= FUTILITY_FROM_INFORMATION and power < FUTILITY_POWER:
        return GateLook(key, z, info, power, SETTLED)
    return GateLook(key, z, info, power, RUNNING)


def suite_look(records: Iterable[TrialRecord], q: Questions, trials: int, max_trials: int,
               before: EvalState | None = None) -> EvalState:
    """The rule at one look, on the trials 1..`trials` of every eval and arm. Without
    confirmation by the fixed gate (run/adaptive does that, it has the gate)."""
    if trials >= max_trials:
        return EvalState(REACHED_MAX, trials, ("reached max_trials_per_eval",))
    cells = group_records([r for r in records if r.run_number <= trials], (q.skill, q.baseline))
    prior = {g.key: g for g in before.gates} if before is not None else {}
    looks_ = tuple(gate_look(k, t, cells, q, max_trials, prior.get(k)) for k, t in q.gates)
    if not looks_ or any(g.status == RUNNING for g in looks_):
        return EvalState(RUNNING, trials, (), looks_)
    status = DECIDED if all(g.status == DECIDED for g in looks_) else SETTLED
    return EvalState(status, trials, tuple(g.reason() for g in looks_), looks_)


def eval_agreed(skill: Sequence[bool | None], baseline: Sequence[bool | None], min_trials: int) -> bool:
    """An eval stops receiving trials when, at its first look, both arms passed every trial or
    both failed every trial: what its further trials could add is within-eval variance, which
    both arms then estimate as zero. Decided at the first look only (an eval that disagreed
    then cannot agree later), on that look's trials, so it is a function of the files. The
    rule is symmetric in the arms, so under A/A the paired difference it leaves behind has
    mean zero exactly; what it can bias is one arm's mean (a true 0.9 that showed 3/3 is
    recorded as 1.0), which the simulation measures as A/A false calls of the pass-rate gate."""
    first = [*skill[:min_trials], *baseline[:min_trials]]
    return (len(skill) >= min_trials and len(baseline) >= min_trials
            and any(all(o is v for o in first) for v in AGREE_ON))


def looks(min_trials: int, max_trials: int, round_size: int) -> list[int]:
    """The trial counts at which the suite is looked at: min, min + round, ..., capped at max. A
    function of the settings alone, so a resumed run looks exactly where the first one did."""
    out, n = [], min(min_trials, max_trials)
    while n < max_trials:
        out.append(n)
        n += round_size
    return [*out, max_trials]


def next_target(state: EvalState, min_trials: int, max_trials: int, round_size: int) -> int:
    """Trials per arm every eval should have after the next round (the current count once stopped)."""
    if state.stopped:
        return state.trials
    for at in looks(min_trials, max_trials, round_size):
        if at > state.trials:
            return at
    return max_trials
