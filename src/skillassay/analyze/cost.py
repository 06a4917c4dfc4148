"""What the benchmark cost, in USD (issue 36): per arm and per eval the total, the mean per trial
with its interval and the cost per passing trial; the skill's cost effect (with minus without,
per trial, paired by eval) and the cost of one extra success.

Every trial that was paid for counts, errored ones too; a trial of unknown cost is counted as
unknown and never as 0, so a total over trials with unknown costs says it is a lower bound.
The mean per trial's interval is the one the token and cost gates use (MetricSeries.estimate:
trial-pooled, clustered by eval), so the figure shown and the figure gated agree."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from skillassay.analyze.cells import Arm, EvalCell, MetricSeries
from skillassay.stats.means import clustered_mean
from skillassay.wording import signed_points

BOOTSTRAP_RESAMPLES = 4000
NOT_ESTIMABLE = "not estimable"


def _usd(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, 8)


def _iv(iv: tuple[float, float] | None) -> list[float | None] | None:
    return None if iv is None else [_usd(iv[0]), _usd(iv[1])]


def arm_cost(arm: Arm) -> dict[str, Any]:
    """One eval under one configuration."""
    total = float(sum(arm.costs))
    n = len(arm.costs)
    return {
        "total_usd": _usd(total), "trials_priced": n, "trials_unknown": arm.costs_unknown,
        "mean_per_trial_usd": _usd(total / n) if n else None,
        "per_passing_trial_usd": _usd(total / arm.passes) if arm.passes and not arm.costs_unknown else None,
    }


def config_cost(cells: list[EvalCell], config: str) -> dict[str, Any]:
    """One configuration over every eval."""
    arms = [c.arms[config] for c in cells]
    total = float(sum(sum(a.costs) for a in arms))
    priced, unknown, passes = (sum(len(a.costs) for a in arms), sum(a.costs_unknown for a in arms),
                               sum(a.passes for a in arms))
    est = MetricSeries.build(cells, config, "costs").estimate(pooled=True)
    return {
        "total_usd": _usd(total), "trials_priced": priced, "trials_unknown": unknown,
        "total_is_lower_bound": unknown > 0,
        "mean_per_trial_usd": _usd(est.mean) if est else None,
        "mean_per_trial_interval": _iv(est.interval) if est else None,
        "per_passing_trial_usd": _usd(total / passes) if passes and not unknown else None,
    }


def _paired(cells: list[EvalCell], skill: str, baseline: str) -> list[tuple[float, float, float, float]]:
    """Per eval with a known cost and a pass rate in both arms: (cost_s, cost_b, rate_s, rate_b)."""
    out = []
    for c in cells:
        s, b = c.arms[skill], c.arms[baseline]
        if s.costs and b.costs and s.pass_rate is not None and b.pass_rate is not None:
            out.append((float(np.mean(s.costs)), float(np.mean(b.costs)), s.pass_rate, b.pass_rate))
    return out


def cost_effect(cells: list[EvalCell], skill: str, baseline: str, seed: int = 0) -> dict[str, Any]:
    """With minus without, USD per trial, paired by eval (mean of the per-eval differences, t
    interval clustered by eval), and the cost of one extra success: that difference over the
    paired pass-rate difference, with a percentile bootstrap over evals. Not estimable when the
    pass-rate difference's interval includes 0 (the ratio's interval would then be unbounded)."""
    rows = _paired(cells, skill, baseline)
    if not rows:
        return {"mean_difference_usd": None, "interval": None, "n_evals": 0,
                "per_extra_success": {"value_usd": None, "interval": None, "reason": "no eval has a known cost "
                                      "and a pass rate in both arms"}}
    arr = np.array(rows)
    dc, dp = arr[:, 0] - arr[:, 1], arr[:, 2] - arr[:, 3]
    est = clustered_mean(dc)
    diff = clustered_mean(dp, bounds=(-1.0, 1.0))
    extra: dict[str, Any] = {"value_usd": None, "interval": None, "reason": None,
                             "pass_rate_difference": _usd(diff.mean),
                             "pass_rate_difference_interval": _iv(diff.interval)}
    if diff.interval is None or diff.interval[0] <= 0 <= diff.interval[1]:
        extra["reason"] = (f"{NOT_ESTIMABLE}: the pass-rate difference's interval includes 0"
                           if diff.interval is not None else f"{NOT_ESTIMABLE}: fewer than 2 paired evals")
    else:
        extra["value_usd"] = _usd(float(dc.mean() / dp.mean()))
        ratios = _bootstrap_ratios(dc, dp, seed)
        extra["interval"] = _iv((float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975)))) \
            if ratios.size else None
        extra["method"] = f"percentile bootstrap over evals ({BOOTSTRAP_RESAMPLES} resamples, seed {seed})"
    return {"mean_difference_usd": _usd(est.mean), "interval": _iv(est.interval), "n_evals": len(rows),
            "per_extra_success": extra}


def _bootstrap_ratios(dc: np.ndarray, dp: np.ndarray, seed: int) -> np.ndarray:
    """Mean cost difference over mean pass-rate difference in each resample of the evals whose
    gain has the observed sign; drawn in chunks, so memory stays flat at thousands of evals."""
    rng = np.random.default_rng(seed)
    n, sign, out = len(dc), np.sign(dp.mean()), []
    chunk = max(1, min(BOOTSTRAP_RESAMPLES, 2_000_000 // n))
    for start in range(0, BOOTSTRAP_RESAMPLES, chunk):
        idx = rng.integers(0, n, size=(min(chunk, BOOTSTRAP_RESAMPLES - start), n))
        num, den = dc[idx].mean(axis=1), dp[idx].mean(axis=1)
        keep = den * sign > 0
        out.append(num[keep] / den[keep])
    return np.concatenate(out)


def cost_section(cells: list[EvalCell], skill: str, baseline: str, seed: int = 0) -> dict[str, Any] | None:
    """benchmark.json's `cost`; None when no trial has a cost, known or unknown (nothing recorded)."""
    if not any(c.arms[cfg].costs or c.arms[cfg].costs_unknown for c in cells for cfg in (skill, baseline)):
        return None
    return {
        "configurations": {cfg: config_cost(cells, cfg) for cfg in (skill, baseline)},
        "per_eval": [{"eval_id": c.eval_id, "eval_name": c.eval_name,
                      "configurations": {cfg: arm_cost(c.arms[cfg]) for cfg in (skill, baseline)}} for c in cells],
        "effect": cost_effect(cells, skill, baseline, seed),
    }


def skill_mean_cost(cost: dict[str, Any] | None, per_eval: dict[str, Any] | None = None) -> float | None:
    """The with-skill arm's mean cost per trial (what max_avg_cost_usd gates), from `cost` or
    from one of its per_eval entries. The with-skill arm is the first configuration listed."""
    if not cost:
        return None
    configs = (per_eval or cost).get("configurations") or {}
    first = next(iter(configs.values()), None) if configs else None
    return None if first is None else first.get("mean_per_trial_usd")


ARM_FIELDS = ("total_usd", "trials_priced", "trials_unknown", "total_is_lower_bound", "mean_per_trial_usd",
              "mean_per_trial_interval", "per_passing_trial_usd")


def cost_arms(cost: dict[str, Any]) -> list[dict[str, Any]]:
    """The two arms' rows of a cost table (with-skill first), each field present: None where a
    damaged benchmark.json left a field or an arm out (each is optional in its schema)."""
    configs = cost.get("configurations")
    arms = [a if isinstance(a, dict) else {} for a in configs.values()][:2] if isinstance(configs, dict) else []
    arms += [{}] * (2 - len(arms))
    return [{key: arm.get(key) for key in ARM_FIELDS} for arm in arms]


def extra_success_text(cost: dict[str, Any]) -> str:
    """"+$0.004 per task for +12 points: $0.03 per additional success (95% CI ...)", or why not."""
    eff = cost.get("effect") or {}
    extra = eff.get("per_extra_success") or {}
    if eff.get("mean_difference_usd") is None:
        return extra.get("reason") or NOT_ESTIMABLE
    head = f"{signed_usd(eff['mean_difference_usd'])} per task"
    if extra.get("pass_rate_difference") is not None:
        head += f" for {signed_points(extra['pass_rate_difference'])} points"
    if extra.get("value_usd") is None:
        return f"{head}: cost per additional success {extra.get('reason') or NOT_ESTIMABLE}"
    return f"{head}: {usd(extra['value_usd'])} per additional success{usd_interval(extra.get('interval'))}"


def arm_text(arm: dict[str, Any]) -> str:
    """"$0.12 total, $0.004 per trial (95% CI $0.0035..$0.0046), $0.005 per passing trial"."""
    ci = usd_interval(arm.get("mean_per_trial_interval"))
    per_pass = arm.get("per_passing_trial_usd")
    unknown = f", {arm['trials_unknown']} trials of unknown cost (a lower bound)" if arm.get("trials_unknown") else ""
    return (f"{usd(arm.get('total_usd'))} total, {usd(arm.get('mean_per_trial_usd'))} per trial{ci}"
            + (f", {usd(per_pass)} per passing trial" if per_pass is not None else "") + unknown)


def cost_summary(cost: dict[str, Any]) -> str:
    """One line for the console and the job summary: each arm, then the skill's cost effect.
    Trials that all cost nothing (the embedded model, echo) say so in a few words instead of a
    line of $0.00 figures."""
    configs = cost.get("configurations") or {}  # optional in a benchmark.json read back
    arms = [a if isinstance(a, dict) else {} for a in configs.values()]
    if arms and all(not a.get("trials_unknown") and a.get("trials_priced") and a.get("total_usd") == 0 for a in arms):
        return "cost: $0 (every trial cost nothing: a local model or an executor that calls none)"
    parts = [f"{cfg.replace('_', ' ')} {arm_text(arm)}" for cfg, arm in zip(configs, arms, strict=True)]
    return f"cost: {'; '.join(parts)}; skill: {extra_success_text(cost)}"


def usd(x: float | None) -> str:
    """Dollars with the digits a per-trial cost needs ($0.0042, $1.23, $12)."""
    if x is None:
        return "n/a"
    sign = "-" if x < 0 else ""
    a = abs(x)
    text = f"{a:.2f}" if a >= 1 or a == 0 else f"{a:.2g}" if a >= 0.01 else f"{a:.2g}"
    if "e" in text:
        text = f"{a:.8f}".rstrip("0")
    return f"{sign}${text}"


def usd_interval(iv: list[float | None] | None) -> str:
    """" (95% CI $0.0035..$0.0046)", or nothing without an interval."""
    return f" (95% CI {usd(iv[0])}..{usd(iv[1])})" if iv and len(iv) == 2 else ""


def signed_usd(x: float) -> str:
    return ("+" if x >= 0 else "") + usd(x)


__all__ = ["NOT_ESTIMABLE", "arm_text", "cost_summary", "skill_mean_cost", "arm_cost", "config_cost", "cost_effect", "cost_section", "extra_success_text",
           "cost_arms", "signed_usd", "usd", "usd_interval"]
