"""The trigger-conditioned effect: the with-skill arm's pass rate when the agent loaded the
skill and when it did not (metrics.json `skill_triggered`), per eval and overall.

Why: a with-skill pass rate no better than the baseline's means "the skill does not help" only
if the agent read it; when it was never loaded, the arm measured the bare model. The split
tells the two apart. It is observational: the agent chose when to load the skill, so the trials
that loaded it may differ from the others in ways (how hard the prompt seemed, how the agent
started) that also change the result; a gap between the groups is a lead, not the skill's
effect. The randomised comparison stays skill vs baseline.

Trials whose loading is unknown (an executor that cannot tell, e.g. a `command` that does not
report it) are their own group: counting them as "not loaded" would invent a failure to load.
"""

from __future__ import annotations

import math
from typing import Any

from skillassay.analyze.cells import Arm, EvalCell
from skillassay.stats.binomial import wilson_interval
from skillassay.stats.means import clustered_mean, pooled_clustered_mean
from skillassay.stats.types import Interval
from skillassay.wording import pct

SCHEMA_VERSION = 1
# An eval is flagged when fewer than half of its with-skill trials (whose loading is known)
# loaded the skill. The observed rate, not a bound of its interval: at the default 3 trials even
# 0 of 3 has an upper Wilson bound of 0.56, so a bound-based rule could never flag anything
# there. The flag asks the reader to look (its interval is shown beside it), it claims nothing.
RARELY_LOADED_BELOW = 0.5
OBSERVATIONAL = ("observational: the agent chose when to load the skill, so a gap between the loaded and "
                 "not-loaded trials is not the skill's causal effect")


def _f(x: float | None, nd: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), nd)


def _iv(iv: Interval | None) -> list[float] | None:
    return None if iv is None else [round(iv[0], 6), round(iv[1], 6)]


def group(passes: int, trials: int) -> dict[str, Any]:
    return {"trials": trials, "passes": passes, "pass_rate": _f(passes / trials) if trials else None,
            "wilson": _iv(wilson_interval(passes, trials))}


def load_rate(arm: Arm) -> float | None:
    """Of the completed trials whose loading is known (graded or not), the share that loaded."""
    return arm.triggered_yes / arm.triggered_seen if arm.triggered_seen else None


def rarely_loaded(arm: Arm) -> bool:
    rate = load_rate(arm)
    return rate is not None and rate < RARELY_LOADED_BELOW


def eval_split(cell: EvalCell, skill: str, baseline: str | None) -> dict[str, Any]:
    arm = cell.arms[skill]
    unknown = arm.completed - arm.loaded_completed - arm.unloaded_completed
    unknown_passes = arm.passes - arm.loaded_passes - arm.unloaded_passes
    base = cell.arms.get(baseline) if baseline else None
    return {
        "eval_id": cell.eval_id, "eval_name": cell.eval_name,
        "loaded": group(arm.loaded_passes, arm.loaded_completed),
        "not_loaded": group(arm.unloaded_passes, arm.unloaded_completed),
        "unknown": group(unknown_passes, unknown),
        "known_trials": arm.triggered_seen, "loaded_trials": arm.triggered_yes,
        "load_rate": _f(load_rate(arm)),
        "load_rate_wilson": _iv(wilson_interval(arm.triggered_yes, arm.triggered_seen)),
        "baseline_pass_rate": _f(base.pass_rate) if base is not None else None,
        "rarely_loaded": rarely_loaded(arm),
    }


def pooled(sums: list[int], counts: list[int]) -> tuple[float | None, list[float] | None, int]:
    """(rate, interval, evals) of trials pooled across evals. The interval is clustered by eval
    (trials of one prompt are correlated), widened to at least the pooled Wilson interval: the
    clustered variance is the independent one times a design effect >= 1, so it can only be
    wider, and evals that happen to agree (all 0/3) must not collapse it to a point. Fewer than
    2 evals: no interval (the per-eval Wilson interval says what one eval can)."""
    kept = [(s, n) for s, n in zip(sums, counts, strict=True) if n]
    if not kept:
        return None, None, 0
    est = pooled_clustered_mean([s for s, _ in kept], [n for _, n in kept])
    if est.interval is None:
        return est.mean, None, est.n
    wilson = wilson_interval(sum(s for s, _ in kept), sum(n for _, n in kept)) or est.interval
    lo, hi = min(est.interval[0], wilson[0]), max(est.interval[1], wilson[1])
    return est.mean, _iv((max(0.0, lo), min(1.0, hi))), est.n


def _pooled_group(passes: list[int], trials: list[int]) -> dict[str, Any]:
    rate, interval, n = pooled(passes, trials)
    return {"trials": sum(trials), "passes": sum(passes), "n_evals": n, "pass_rate": _f(rate),
            "interval": interval}


def _shrunk_var(c: int, n: int) -> float:
    """Binomial variance of one rate with Agresti & Caffo's one success and one failure added
    (a difference's interval then never claims zero noise at 0/n or n/n)."""
    p = (c + 1) / (n + 2)
    return p * (1 - p) / n


def within_eval_difference(arms: list[Arm]) -> dict[str, Any] | None:
    """Mean over evals that have both groups of (pass rate loaded - not loaded): comparing
    trials of the same prompt takes eval difficulty out of the gap (an eval the agent loads the
    skill for may just be easier). Still observational within an eval. Eval-clustered t
    interval with a floor at the trial-level noise of the per-eval differences."""
    both = [a for a in arms if a.loaded_completed and a.unloaded_completed]
    if not both:
        return None
    diffs = [a.loaded_passes / a.loaded_completed - a.unloaded_passes / a.unloaded_completed for a in both]
    floor = math.sqrt(sum(_shrunk_var(a.loaded_passes, a.loaded_completed)
                          + _shrunk_var(a.unloaded_passes, a.unloaded_completed) for a in both)) / len(both)
    est = clustered_mean(diffs, bounds=(-1.0, 1.0), floor_se=floor)
    return {"mean": _f(est.mean), "se": _f(est.se), "interval": _iv(est.interval), "n_evals": est.n}


def trigger_split(cells: list[EvalCell], skill: str, baseline: str | None) -> dict[str, Any] | None:
    """benchmark.json's `trigger_conditioned` (models.TriggerConditioned); None when the
    with-skill arm has no completed trial at all (nothing to split)."""
    arms = [c.arms[skill] for c in cells if skill in c.arms]
    if not any(a.completed or a.ungraded for a in arms):
        return None
    rows = [eval_split(c, skill, baseline) for c in cells if skill in c.arms]
    seen = [a.triggered_seen for a in arms]
    rate, rate_iv, _ = pooled([a.triggered_yes for a in arms], seen)
    return {
        "schema_version": SCHEMA_VERSION,
        "configuration": skill,
        "baseline_configuration": baseline,
        "rarely_loaded_below": RARELY_LOADED_BELOW,
        "per_eval": rows,
        "overall": {
            "loaded": _pooled_group([a.loaded_passes for a in arms], [a.loaded_completed for a in arms]),
            "not_loaded": _pooled_group([a.unloaded_passes for a in arms], [a.unloaded_completed for a in arms]),
            "unknown_trials": sum(a.completed - a.loaded_completed - a.unloaded_completed for a in arms),
            "load_rate": _f(rate),
            "load_rate_interval": rate_iv,
            "within_eval_difference": within_eval_difference(arms),
        },
        "rarely_loaded_evals": [r["eval_id"] for r in rows if r["rarely_loaded"]],
    }


def _eval(eval_id: int | str, name: str) -> str:
    return f"Eval {eval_id} ({name})" if name and str(name) != str(eval_id) else f"Eval {eval_id}"


def rarely_loaded_notes(cells: list[EvalCell], skill: str) -> list[str]:
    """benchmark.json notes for evals whose with-skill arm seldom loaded the skill: there the
    with-skill pass rate measures the agent without the skill, whatever the skill says."""
    notes = []
    for cell in cells:
        arm = cell.arms.get(skill)
        if arm is None or not rarely_loaded(arm):
            continue
        yes, seen = arm.triggered_yes, arm.triggered_seen
        lo, hi = wilson_interval(yes, seen) or (0.0, 1.0)
        how = "never loaded the skill" if yes == 0 else "rarely loaded the skill"
        notes.append(f"{_eval(cell.eval_id, cell.eval_name)}: the {skill} arm {how} ({yes} of {seen} trials, "
                     f"95% CI {pct(lo)} to {pct(hi)}) - its {skill} result says little about the skill's "
                     "content; check the description triggers on this prompt")
    return notes
