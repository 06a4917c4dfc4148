"""Anytime-valid statistics for adaptive runs: when an eval has had enough trials.

Each eval's two arms are Bernoulli sequences. After every round the adaptive run asks, per eval
and per gate, whether its call is already *decided* (a confidence sequence says so) or can no
longer be decided within `max_trials_per_eval` (*settled*: more trials cannot change it); such
an eval gets no more trials. A confidence sequence (CS) holds at every sample size at once,
P(exists n: p outside CS_n) <= alpha, so looking after every round costs nothing: this is what
"p < 0.05 after each trial" lacks.

The CS is the hedged-capital betting CS of Waudby-Smith & Ramdas, "Estimating means of bounded
random variables by betting", JRSS-B 86(1):1-27, 2024 (arXiv:2010.09686), Theorem 3, with the
predictable-mixture bets of their Eq. (26) ("predmix"), written by hand after the authors'
own `confseq` package (betting.py: betting_mart, cs_from_martingale; betting_strategies.py:
lambda_predmix_eb), because no package is usable here: `confseq` 0.0.11 is an sdist only whose
C++ build needs Boost headers (it failed for Boost_INCLUDE_DIR-NOTFOUND on this machine) and
it pulls pytest and multiprocess in at run time; `expectation` 0.0.2 is a yanked placeholder
("decommissioned"); `savvi` 0.3.1 has sequential multinomial and regression tests, not a CS
for one Bernoulli mean. Everything here is pure and takes plain tuples of outcomes.

What the suite gates then report is the fixed design's statistics (statistics.py) on the
trials the run made. The stopping rule depends only on that eval's own trials and treats both
arms alike until its sequences have shown the arms differ (under "the skill changes nothing"
that happens with probability at most alpha, whenever one looks), so under that null each
eval's difference stays close to symmetric about 0 and the paired sign-flip test close to
exact. The gates' error rates and power under the rule are measured, not proven: see
benchmarks/adaptive.py (measured figures in the README). Within ten trials a sequence rarely
decides one eval (10/10 gives a lower bound of about 0.69); most of the saving comes from evals
whose trials all agree, which are *settled*, and that is also where the rule can miss a small
effect (0/3 from a true 0.25).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

METHOD = "hedged-capital betting confidence sequence (Waudby-Smith & Ramdas 2024, JRSS-B 86(1):1-27)"
BETS = "predictable mixture (predmix, prior mean 1/2, prior variance 1/4, one pseudo-observation)"
ALPHA = 0.05
THETA = 0.5  # weight of the "mean is above m" capital against "below m": two-sided, alpha/2 each
TRUNCATION = 1.0  # bets in [-1/(1-m), 1/m]: the widest that keeps the capital non-negative
GRID_POINTS = 1001  # candidate means 0, 0.001, ..., 1; bounds are widened by one step

DECIDED = "decided"
SETTLED = "settled"  # more trials up to the maximum cannot change the call
REACHED_MAX = "reached max"
RUNNING = "running"

_GRID = np.linspace(0.0, 1.0, GRID_POINTS)
_STEP = 1.0 / (GRID_POINTS - 1)


def predmix_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """lambda_t = sqrt(2 log(1/alpha) / (sigma^2_{t-1} t log(1 + t))): each bet uses only the
    trials before it (predictable), which is what makes the capital a martingale under the null."""
    t = np.arange(1, len(x) + 1)
    mu = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1.0)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    prev = np.append(0.25, var[:-1])
    return np.sqrt(2 * math.log(1 / alpha) / (t * np.log1p(t) * prev))


@functools.lru_cache(maxsize=65536)
def confidence_sequence(outcomes: tuple[bool, ...], alpha: float = ALPHA) -> tuple[float, float]:
    """The CS for the pass rate after these outcomes, in trial order, intersected over every
    prefix (a running intersection is still a CS). [0, 1] before any trial. Cached: at up to
    ten trials per arm there are only 2,047 outcome sequences."""
    if not outcomes:
        return (0.0, 1.0)
    x = np.asarray(outcomes, dtype=float)
    m = _GRID[None, :]
    lam_up = predmix_bets(x, alpha * THETA)[:, None]
    lam_down = predmix_bets(x, alpha * (1 - THETA))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.minimum(lam_up, TRUNCATION / m)
        down = np.minimum(lam_down, TRUNCATION / (1 - m))
        k_up = np.nan_to_num(np.cumprod(1 + up * (x[:, None] - m), axis=0), nan=0.0)
        k_down = np.nan_to_num(np.cumprod(1 - down * (x[:, None] - m), axis=0), nan=0.0)
    capital = np.maximum(THETA * k_up, (1 - THETA) * k_down)
    kept = np.flatnonzero((capital < 1 / alpha).all(axis=0))
    if kept.size == 0:  # cannot happen for a true mean; keep the sequence honest anyway
        return (0.0, 1.0)
    return (max(0.0, float(_GRID[kept[0]]) - _STEP), min(1.0, float(_GRID[kept[-1]]) + _STEP))


# ---------------------------------------------------------------------------------------------
# Per-eval questions


@dataclass(frozen=True)
class Questions:
    """What the gates ask of each eval: does the skill's pass rate clear `rate_threshold`, and
    do the two arms differ (asked for the improvement-ratio gate and the paired comparison,
    which every run reports). Token and duration gates ask nothing per eval: every trial
    measures them, and their intervals are set by the spread between evals."""

    rate_threshold: float | None = None
    compare_arms: bool = True


def rate_decided(skill: tuple[bool, ...], threshold: float, alpha: float) -> bool:
    lo, hi = confidence_sequence(skill, alpha)
    return lo >= threshold or hi < threshold


def arms_decided(skill: tuple[bool, ...], baseline: tuple[bool, ...], alpha: float) -> bool:
    """Disjoint 1 - alpha/2 sequences: the arms differ, at level alpha for the pair."""
    s, b = confidence_sequence(skill, alpha / 2), confidence_sequence(baseline, alpha / 2)
    return s[0] > b[1] or b[0] > s[1]


def constant(outcomes: tuple[bool, ...]) -> bool:
    """No variation seen: every trial passed, or every one failed (an arm with no outcome is not)."""
    return bool(outcomes) and len(set(outcomes)) == 1


def _extended(seq: tuple[bool, ...], n: int, value: bool) -> tuple[bool, ...]:
    return seq + (value,) * max(0, n - len(seq))


def arms_decidable(skill: tuple[bool, ...], baseline: tuple[bool, ...], max_trials: int,
                   alpha: float) -> bool:
    """Whether some continuation up to `max_trials` could show the arms differ. The extreme
    ones (every further trial of one arm passes and of the other fails) move the sequences
    furthest apart, so they are the ones tried, at every trial count on the way."""
    for up in (True, False):
        for n in range(max(len(skill), len(baseline)) + 1, max_trials + 1):
            if arms_decided(_extended(skill, n, up), _extended(baseline, n, not up), alpha):
                return True
    return False


@dataclass(frozen=True)
class EvalState:
    """Where one eval stands: its status (running / decided / settled / reached max), the
    trials per arm it has used, and the reasons in words, one per question."""

    status: str
    trials: int
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def stopped(self) -> bool:
        return self.status != RUNNING


def eval_state(skill: Sequence[bool | None], baseline: Sequence[bool | None], questions: Questions,
               min_trials: int, max_trials: int, alpha: float = ALPHA) -> EvalState:
    """The stopping rule at one look. `skill` / `baseline` are the outcomes of trials 1..n of
    each arm in run order; None is a trial that did not complete (errored, ungraded), which
    carries no outcome. n is the shorter arm's length: a look is at equal trials per arm."""
    n = min(len(skill), len(baseline))
    s = tuple(bool(v) for v in skill[:n] if v is not None)
    b = tuple(bool(v) for v in baseline[:n] if v is not None)
    if n >= max_trials:
        return EvalState(REACHED_MAX, n, ("reached max_trials_per_eval",))
    if n < min_trials:
        return EvalState(RUNNING, n, ())
    statuses, reasons = [], []
    if questions.rate_threshold is not None:
        thr = questions.rate_threshold
        if rate_decided(s, thr, alpha):
            statuses.append(DECIDED)
            lo, hi = confidence_sequence(s, alpha)
            side = "at or above" if lo >= thr else "below"
            reasons.append(f"skill pass rate {side} {thr:g} (CS {lo:.2f}..{hi:.2f})")
        elif constant(s):
            statuses.append(SETTLED)
            reasons.append(f"every skill trial {'passed' if s[0] else 'failed'}: no variation for more trials to average")
        else:
            statuses.append(RUNNING)
    if questions.compare_arms:
        if arms_decided(s, b, alpha):
            statuses.append(DECIDED)
            reasons.append("the arms differ (disjoint CSs)")
        elif constant(s) and constant(b) and not arms_decidable(s, b, max_trials, alpha):
            statuses.append(SETTLED)
            reasons.append(f"each arm's trials all agreed, and a difference cannot be shown within {max_trials} trials")
        else:
            statuses.append(RUNNING)
    if RUNNING in statuses:
        return EvalState(RUNNING, n, ())
    return EvalState(DECIDED if statuses and all(x == DECIDED for x in statuses) else SETTLED, n,
                     tuple(reasons))


def looks(min_trials: int, max_trials: int, round_size: int) -> list[int]:
    """The trial counts at which an eval is looked at: min, min + round, ..., capped at max. A
    function of the settings alone, so a resumed run looks exactly where the first one did."""
    out, n = [], min(min_trials, max_trials)
    while n < max_trials:
        out.append(n)
        n += round_size
    return [*out, max_trials]


def state_at_looks(skill: Sequence[bool | None], baseline: Sequence[bool | None], questions: Questions,
                   min_trials: int, max_trials: int, round_size: int,
                   alpha: float = ALPHA) -> EvalState:
    """The eval's state after replaying its looks on the trials it has: the first look at
    which it stopped, else running at the last look its trials reach. Replaying (instead of
    remembering) is what makes a killed run resume where it stopped: the state is a function
    of the trials on disk, and a trial run past a stop (reused, say) changes nothing."""
    n = min(len(skill), len(baseline))
    last = EvalState(RUNNING, 0, ())
    for at in looks(min_trials, max_trials, round_size):
        if at > n:
            break
        last = eval_state(skill[:at], baseline[:at], questions, min_trials, max_trials, alpha)
        if last.stopped:
            return last
    return last


def next_target(state: EvalState, min_trials: int, max_trials: int, round_size: int) -> int:
    """Trials per arm the eval should have after the next round (its current count once stopped)."""
    if state.stopped:
        return state.trials
    for at in looks(min_trials, max_trials, round_size):
        if at > state.trials:
            return at
    return max_trials
