"""Sample-size advice: how many evals (or trials per eval) would likely decide a figure, planned
for `min_detectable_effect` from zero or from the threshold, in one sentence. How it is sized
and what it delivers: docs/statistics.md, "Sample-size advice"."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from skillassay.analyze import advice_words, paired_intervals
from skillassay.analyze.cells import (
    EvalCell,
    MetricSeries,
    _f,
    rates_of,
)
from skillassay.stats import distributions as dists
from skillassay.stats.binomial import within_eval_variance
from skillassay.stats.means import binomial_floor_se
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.stats.sizing import evals_with_differing, planning_variance, trials_per_arm, trials_per_eval_to_decide
from skillassay.wording import pct

ALPHA = 0.05


POWER = 0.8


def _trial_noise(used: list[EvalCell], a: str, b: str) -> float | None:
    """(mean s_A^2 + mean s_B^2) / K: the part of var(d_e) that trial noise alone contributes,
    a floor under the observed spread (E evals that happen to agree do not make the effect
    noiseless). None when no eval has two completed trials in both arms (K = 1)."""
    parts = []
    for cfg in (a, b):
        arms = [c.arms[cfg] for c in used if c.arms[cfg].completed >= 2]
        if not arms:
            return None
        parts.append(float(np.mean([within_eval_variance(x.passes, x.completed) or 0.0
                                    for x in arms]) / np.mean([x.completed for x in arms])))
    return sum(parts)


# The effect every size advice is planned for, unless the config says otherwise
# (BenchmarkConfig.min_detectable_effect): 10 points of pass rate (of a difference, or of a pass
# rate's distance from its threshold), 10% of a token or duration threshold.
MIN_DETECTABLE_EFFECT = 0.1


def power_stats(used: list[EvalCell], a: str, b: str,
                effect: float = MIN_DETECTABLE_EFFECT) -> dict[str, Any]:
    """Evals that would detect a true skill-vs-baseline difference of `effect` (either way) with
    80% power: a planning figure, not a test. It is sized for a planned effect, not for the
    observed one: a size computed from the pilot's own difference (post-hoc power, or assurance
    over the values the pilot allows) cannot keep an 80% promise at the true difference, since
    it is small exactly when the pilot overstated the effect; through the library such sizing
    delivered 62-74% where the pilot cannot tell the sign well and 85-89% where it can
    (benchmarks/advice_power.py; Hoenig & Heisey 2001, Am. Stat. 55:19; Lenth 2001, Am. Stat.
    55:187: plan for an effect that matters). The pilot gives only the spread of the per-eval
    differences, read as the median-unbiased sigma (assurance.median_sigma_ratio), for the test
    that decides, the exact sign-flip test, never below what it needs (6 differing
    evals, more when ties are common). At a true difference larger than `effect` the power is
    higher."""
    condition = f"the true difference is at least {_points(effect)} either way"
    out: dict[str, Any] = {"alpha": ALPHA, "power": POWER, "observed_difference": None,
                           "detectable_difference": effect, "sign_probability": None,
                           "planned_power": None, "promise": promise(condition),
                           "trials_per_arm": None, "trials_per_arm_reason": None,
                           "evals_needed": None, "evals_needed_reason": None}
    if not used:
        out["trials_per_arm_reason"] = out["evals_needed_reason"] = "no paired evals"
        return out
    pa = np.array([c.arms[a].pass_rate for c in used], dtype=float)
    pb = np.array([c.arms[b].pass_rate for c in used], dtype=float)
    d = pa - pb
    delta = float(d.mean())
    out["observed_difference"] = _f(delta)
    n = trials_per_arm(float(pa.mean()), float(pb.mean()), ALPHA, POWER)
    out["trials_per_arm"] = n
    if n is None:
        out["trials_per_arm_reason"] = "observed pass rates are equal: nothing to detect"
    if math.isclose(delta, 0.0, abs_tol=1e-9):
        # Sums of thirds that are 0 come out as 1e-17 in floats: that is no difference at all.
        out["evals_needed_reason"] = "observed pass rates are equal: no difference to detect"
        return out
    if len(used) < 2:
        out["evals_needed_reason"] = (
            "fewer than 2 paired evals: the spread of differences is unknown")
        return out
    sd = float(d.std(ddof=1))
    sd_plan = _planning_sd(sd, _trial_noise(used, a, b))
    out["sd_of_differences"] = _f(sd)
    differing = int(np.count_nonzero(~np.isclose(d, 0.0, atol=1e-9))) / len(used)
    floor = evals_with_differing(differing)
    if sd_plan == 0 or floor is None:
        out["evals_needed_reason"] = "differences do not vary between evals: their spread cannot be estimated"
        return out
    out["sign_probability"] = _f(_sign_probability(delta, sd_plan, len(used), difference_range(float(pb.mean()))))
    evals, power_at = _planned_evals(effect, sd_plan, len(used), _lattice_step(used, a, b))
    if evals is None:
        from skillassay.analyze.assurance import MAX_SIZE

        out["evals_needed_reason"] = (f"detecting a difference of {_points(effect)} would take "
                                      f"more than {MAX_SIZE:,} evals")
        return out
    out["evals_needed"] = advice_words.about(max(evals, floor))
    out["planned_power"] = _f(power_at(evals), 4)  # at the sizing's own size: _planned_evals says why
    out["promise"] = promise(condition, out["planned_power"])
    return out


def _points(effect: float) -> str:
    return f"{effect * 100:.3g} pts"


def _planning_sd(sd: float, noise: float | None) -> float:
    """The spread to size fresh evals on: the sample sd (the sizing reads sigma from it,
    assurance.median_sigma_ratio); the trial noise only when every difference is the same (sd 0),
    where the sample says nothing."""
    return sd if sd > 0 else math.sqrt(noise or 0.0)


def _lattice_step(used: list[EvalCell], a: str, b: str, thr: float = 1.0) -> float:
    """The grid the paired differences a_e - thr b_e lie on: the greatest common divisor of
    1 / completed_a and thr / completed_b over the evals (1/3 at 3 trials per eval, 1 at one),
    from the trial counts rather than the observed values, which on few evals can share a
    coarser grid by chance. 0 when thr is not a simple fraction (no grid to speak of)."""
    r = Fraction(thr).limit_denominator(1000)
    if abs(float(r) - thr) > 1e-9:
        return 0.0
    steps = {Fraction(1, c.arms[a].completed) for c in used} | {
        r / c.arms[b].completed for c in used}
    num = math.gcd(*(f.numerator for f in steps))
    den = math.lcm(*(f.denominator for f in steps))
    return num / den


def difference_range(baseline_mean: float, ratio: float = 1.0) -> tuple[float, float]:
    """Where the mean of a_e - ratio * b_e can lie, both arms' true mean pass rates being in
    [0, 1]: [-ratio * mu_b, 1 - ratio * mu_b], with the baseline's mean mu_b taken as observed.
    That plug-in is what keeps the range one interval in the figure's own units; its error (the
    baseline mean's SE, 0.1 at 5 Beta(2,2) evals) moves the edges by less than the figure's own
    SE (0.15-0.3 there), and it errs to either side alike. The observed mean always lies inside
    (observed rates are in [0, 1] too)."""
    return -ratio * baseline_mean, 1.0 - ratio * baseline_mean


def _sign_probability(mean: float, sd: float, m: int, bounds: tuple[float, float]) -> float:
    """The probability that the true mean is on the side the data put it (flat prior over
    `bounds`): a reading of how sure the run is of the direction, not part of the sizing."""
    from skillassay.analyze import assurance

    se = sd / math.sqrt(m)
    return assurance.fresh_ceiling(mean / se, m, (bounds[0] / se, bounds[1] / se))


def _planned_evals(effect: float, sd: float, m: int, step: float | None, undecided: bool = False,
                   cut: Callable[[int], float] | None = None, known_sd: bool = False,
                   hull: bool = False) -> tuple[int | None, Callable[[int], float]]:
    """Fresh evals with 80% power at the planned `effect` (figure units), from a pilot of m evals
    with sd `sd`: the sign-flip test on a lattice of `step` (figure units), or a t interval with
    step None; `undecided` when only undecided pilots get this advice (a gate's), whose sd is
    then read as such (assurance.undecided_sigma_ratio); `cut`: a second bar the mean must clear
    at n evals (figure units); `known_sd` when sd is known, not read from the pilot; `hull` for
    a pass rate's beta-binomial interval (assurance.hull_t_crit). Also the
    planned power at any size, for the note to state. The paired callers state it at the size
    found here, not at the size their floor of 6 differing evals raises it to: that floor binds
    for pilots whose sd came out small, where the plan's power at the raised size is near 100%
    and the truth's is not (stated there, K = 3, 5 evals, +0.15 promised 82.2% on average and
    delivered 75.1%); a floor only adds power, so the figure is a lower bound. _gap_advice
    states it at the size it gives (its floor, one eval more than the pilot, says why)."""
    from skillassay.analyze import assurance

    args = (effect / sd, m, None if step is None else step / sd)
    kw: dict[str, Any] = {"undecided": undecided, "known_sd": known_sd, "hull": hull,
                          "cut": None if cut is None else (lambda n: cut(n) / sd)}
    return (assurance.evals_for_power(*args, **kw),
            lambda n: assurance.planned_power(args[0], m, n, args[2], **kw))


def promise(condition: str, power: float = POWER) -> str:
    """What the power of a size advice is: at the planned effect, not at the estimate
    (power_stats says why), and at the size given, which can be well above 80% where one eval
    more moves it by 10-20 points (assurance.planned_power). Rounded down, so it never states
    more than was planned."""
    return (f"{_percent_down(power)} power if {condition}, at the spread these evals show; "
            "more if it is further, less if it is nearer "
            "(set min_detectable_effect in the config to plan for another size)")


def _percent_down(power: float) -> str:
    """A planned power as a whole percent, rounded down (1e-9 keeps 0.8 from printing 79%)."""
    return f"{math.floor(power * 100 + 1e-9)}%"


def gap_planned(key: str, threshold: float, effect: float) -> tuple[float, str]:
    """The planned distance from the threshold, in the figure's units, and the promise's
    condition: `effect` in pass-rate points for min_pass_rate, a fraction of the threshold for
    token counts and durations (10% of a 1,000-token budget is 100 tokens)."""
    if key == "min_pass_rate":
        return effect, f"the true pass rate is at least {_points(effect)} from {threshold:g}"
    unit = {"max_avg_tokens": "tokens", "max_avg_cost_usd": "USD"}.get(key, "s")
    gap = effect * threshold
    return gap, f"the true mean is at least {pct(effect)} of the threshold ({gap:.4g} {unit}) from {threshold:g}"


MIN_EVALS_FOR_TRIALS_ADVICE = 10  # fewer, and a pass rate's trials advice is not promised (_gap_advice)


def _trials_advice(series: MetricSeries, gap: float, n_evals: int, p_plan: float, pass_rate: bool, hull: bool,
                   cut_trials: Callable[[int], float] | None) -> tuple[int | None, float | None, str]:
    """(trials per eval, their planned power, why none: "" | "spread uncertain" | "few evals") for
    _gap_advice: more trials on the same evals, promised only where the plan can be kept."""
    from skillassay.analyze import assurance

    noise = series.noise_of_means()
    k_now = float(np.mean(series.counts))
    spread = float(np.var(series.means, ddof=1))
    # A pass rate's trial noise is known at the planned truth, as at one trial per eval: an
    # eval at rate p has per-trial variance p (1 - p), at most p_plan (1 - p_plan) there. Read
    # from the pilot instead, it came from the few pilots whose evals tie (all 1/3 or 2/3 at
    # 3 trials, the ones trials can decide), whose within-eval variance is 1/3 against 1/4,
    # and the advice passed 96% of re-runs where it promised 81% (every eval at 0.5).
    plan_noise = p_plan * (1 - p_plan) / k_now if pass_rate else noise
    trials = assurance.trials_for_power(gap, spread, plan_noise, n_evals, k_now, cut=cut_trials, hull=hull,
                                        undecided=True)
    omega2, s2 = series.components()
    # Trials are promised only if the between-eval spread, at its 95% upper bound, would not
    # keep the interval too wide whatever the trials: the pilot tells that spread from trial
    # noise poorly (at 3 trials its variance of means often comes out below the noise). On
    # Beta(2,2) evals (benchmarks/advice_power.py, K = 3, 5-10 evals) trials promised
    # without it decided 0-57% of the time, and with the spread's 80% bound 13 of 33 (with
    # every eval at the same rate, where trials are the right advice, 75-100%): so trials
    # are seldom promised, and the note says why.
    # The bound is taken on the variance of means floored at the trial noise, which it is at
    # least in expectation: on the lattice of K + 1 values per eval it reads 0 (every eval at
    # 1/3) far more often than its chi-square allows, and a bound of 0 let through Beta(2,2)
    # evals that tied by chance: at 3 trials x 10 evals they were promised 83% and passed 43%
    # of re-runs (benchmarks/advice_power.py).
    spread_hi = planning_variance(max(spread, plan_noise), n_evals - 1, level=0.95)
    if trials is not None and trials_per_eval_to_decide(
            max(0.0, spread_hi - plan_noise), s2, n_evals, gap, power=POWER) is None:
        trials = None
    # "More trials alone cannot decide it" only when that holds at the planned distance.
    at_planned = trials_per_eval_to_decide(omega2, s2, n_evals, gap, power=POWER)
    why_not = "spread uncertain" if trials is None and at_planned is not None else ""
    if trials is not None and trials <= max(series.counts):
        trials = None  # already run: the distance is nearer than planned, not the noise
    if trials is not None and hull and n_evals < MIN_EVALS_FOR_TRIALS_ADVICE:
        # Below 10 evals the interval's beta-binomial part decides at many trials, and its
        # width there is not one the model above tracks (assurance.hull_t_crit's normal
        # form was 9 points off either way at 5 evals: 81% planned where re-runs passed 90%,
        # 33% where they passed 24%); at 10-20 evals the advice kept within 3 points
        # (benchmarks/advice_power.py, every eval at 0.5). More evals are the advice there.
        trials, why_not = None, "few evals"
    if trials is None:
        return None, None, why_not
    return trials, _f(assurance.planned_trials_power(gap, spread, plan_noise, n_evals, k_now, trials,
                                                     cut=cut_trials, hull=hull, undecided=True), 4), why_not


def _gap_advice(est_mean: float, threshold: float, series: MetricSeries | None, n_evals: int,
                se: float | None, planned: tuple[float, str], pass_rate: bool = False) -> dict[str, Any]:
    """How many trials per eval (at the current number of evals) or how many evals (at the
    current trials per eval) would decide the gate with 80% power if the true value is the
    planned distance from the threshold (`planned`: gap_planned; power_stats says why a planned
    distance and not the estimate's). Between-eval spread is not reduced by more trials, so
    sometimes only more evals help; that is said only when it holds at the planned distance, and
    not at one trial per eval, where the two kinds of spread cannot be told apart.

    `pass_rate`: the figure is a pass rate, whose interval has the binomial floor under its SE
    (a second bar the advice must clear). At one trial per eval its per-eval values are 0 or 1:
    their sd at a true rate p is sqrt(p (1 - p)) whatever the evals, so it is taken at the
    planned truth (the side nearer 0.5) instead of read from the pilot, whose sd over 5-20
    values of 0 and 1 varies far less than a chi-square says (read as one, the advice delivered
    83-88% at K = 1, benchmarks/advice_power.py)."""
    from skillassay.analyze import assurance

    gap, condition = planned
    note_sure = promise(condition)
    none: dict[str, Any] = {"trials_to_decide": None, "evals_to_decide": None, "promise": note_sure,
                            "planned_power": None, "trials_planned_power": None, "trials_promise": None,
                            "trials_if_alike": None}
    if math.isclose(est_mean, threshold, rel_tol=1e-9, abs_tol=1e-12):  # and no power promised beside it
        return {**none, "promise": None, "decide_note": "the estimate sits on the threshold: no sample size decides it"}
    if se is None or n_evals < 2:
        return {**none, "decide_note": "fewer than 2 evals: add evals to get an interval at all"}
    if se <= 0 or gap <= 0:
        return {**none, "decide_note": "the evals do not vary: their spread cannot be estimated"}
    cut: Callable[[int], float] | None = None
    cut_trials: Callable[[int], float] | None = None
    p_plan = 0.5
    # A pass rate's interval with 2+ trials per eval is the beta-binomial one: sized on its width.
    hull = pass_rate and series is not None and any(c > 1 for c in series.counts)
    if pass_rate:
        # The interval's SE never falls below the binomial floor at the planned truth (the side
        # nearer 0.5, where it is widest), so the advice must clear that as well: without it,
        # evals that all share one rate at 10 trials were advised sizes that decided 70-78%.
        p_plan = max((p for p in (threshold + gap, threshold - gap) if 0 <= p <= 1),
                     key=lambda p: p * (1 - p), default=0.5)
        k_now = float(np.mean(series.counts)) if series is not None else 1.0

        def floor_bar(n: int, k: float) -> float:
            """t times the floor SE of n evals at k trials each, at the planned truth."""
            return float(dists.t_ppf(0.975, n - 1)) * binomial_floor_se(np.full(n, p_plan), np.full(n, k))

        # More evals at the current trials, or more trials on the current evals.
        cut, cut_trials = (lambda n: floor_bar(n, k_now)), (lambda k: floor_bar(n_evals, k))
    if pass_rate and series is not None and all(c == 1 for c in series.counts):
        sd = math.sqrt(p_plan * (1 - p_plan))
        found, power_at = (_planned_evals(gap, sd, n_evals, None, known_sd=True, cut=cut) if sd > 0
                           else (None, lambda n: 0.0))
    else:
        found, power_at = _planned_evals(gap, se * math.sqrt(n_evals), n_evals, None, undecided=True, cut=cut,
                                         hull=hull)
    evals = None if found is None else advice_words.about(max(found, n_evals + 1))
    # Stated at the size advised, after the one-more-eval floor: that floor binds when the plan
    # says the pilot's own size would do (the pilot is undecided because its estimate fell near
    # the threshold, not for want of evals), and a fresh run of that size at the planned truth
    # has the plan's power there. Stated before it, K = 10 x 20 evals at a gap of 0.2 said 82%
    # and passed 28 of 28 re-runs (the plan at 21 evals: 86-99%). The paired floor (6 differing
    # evals, power_stats) is different: it binds for pilots whose sd came out small.
    evals_power = None if evals is None else _f(power_at(evals), 4)
    if evals_power is not None:
        note_sure = promise(condition, evals_power)
    trials: int | None = None
    trials_power: float | None = None
    why_not = ""
    trial_noise_known = series is not None and any(w is not None for w in series.within_var)
    if series is not None and trial_noise_known:
        trials, trials_power, why_not = _trials_advice(series, gap, n_evals, p_plan, pass_rate, hull, cut_trials)
    # A pass rate's trials advice holds only if the evals share one rate, as they look to, and
    # no pilot can show that: Beta(2,2) evals that happened to tie at 3 trials x 20 evals were
    # promised 90% and passed 63% of re-runs (benchmarks/advice_power.py; every eval at 0.5,
    # where the condition holds, 92%). So it is not advice (trials_to_decide) but a figure
    # with its condition said (trials_if_alike); the evals advice is what is promised.
    if_alike = None
    if pass_rate and trials is not None:
        if_alike, trials = trials, None
    # One short sentence a person can act on ("likely": the planned power, at least 80%, is in
    # planned_power and promise); why trials cannot be promised goes to decide_detail.
    if evals is None:
        note = f"more than {assurance.MAX_SIZE:,} evals would be needed to decide it if {condition}"
    elif trials is not None:
        note = f"about {trials} trials per eval, or about {evals} evals, would likely decide it if {condition}"
    else:
        note = f"about {evals} evals would likely decide it if {condition}"
    if if_alike is not None:
        note += f" (or about {if_alike} trials per eval, if the evals share one pass rate)"
    detail = {"few evals": f"at {n_evals} evals how far more trials narrow the interval cannot be planned",
              "spread uncertain": f"at {n_evals} evals the spread between evals is too uncertain to promise trials"
              }.get(why_not, "")
    if series is not None and not trial_noise_known:
        detail = "at one trial per eval the spread between evals and the trial noise cannot be told apart"
    elif series is not None and trials is None and if_alike is None and not why_not:
        detail = "more trials per eval alone cannot decide it: the spread between evals dominates"
    return {"trials_to_decide": trials, "evals_to_decide": evals, "decide_note": note, "decide_detail": detail,
            "promise": note_sure, "planned_power": evals_power, "trials_planned_power": trials_power,
            "trials_if_alike": if_alike,
            # The trials' own promise: the evals' (`promise`) states the power at the evals advised.
            "trials_promise": None if trials is None or trials_power is None else promise(condition, trials_power)}


def _ratio_advice(used: list[EvalCell], skill: str, baseline: str, thr: float,
                  effect: float) -> dict[str, Any]:
    """Evals that would decide the ratio gate with 80% power if the skill's true pass rate is
    `effect` above (or, when the estimate is below, below) thr times the baseline's: it decides
    when the paired sign-flip test of z_e = a_e - thr * b_e rejects (paired_readings.ratio_decision) and its
    interval clears thr, so the advice is that test's, sized as power_stats sizes the
    difference's (never below 6 differing evals), with the interval's noise floor as a second
    bar (paired_intervals.ratio_floor_cut). _gap_advice on the delta method's SE stacked a variance
    bound on a safeguard effect and advised 10 to 500 times what a paired t test needs (0.6 vs
    0.4 at K = 3, 6 evals: 334 to 16,671 evals)."""
    a = np.array(rates_of(used, skill))
    b = np.array(rates_of(used, baseline))
    z = a - thr * b
    mean = float(z.mean()) if z.size else 0.0
    side = 1.0 if mean >= 0 else -1.0  # the side the estimate is on: where the floor is planned
    condition = (f"the skill's true pass rate is at least {_points(effect)} "
                 f"{'above' if side > 0 else 'below'} {thr:g} x the baseline's")
    note_sure = promise(condition)
    none = {"trials_to_decide": None, "evals_to_decide": None, "promise": note_sure, "planned_power": None}
    if z.size < 2 or math.isclose(mean, 0.0, abs_tol=1e-9):  # and no power promised beside it
        return {**none, "promise": None, "decide_note": advice_words.NO_SIZE_DECIDES}
    noise = _trial_noise(used, skill, baseline)
    if noise is not None and thr != 1.0:
        # z's trial noise: the baseline arm's share scales with thr^2.
        sa = _trial_noise(used, skill, skill) or 0.0
        sb = _trial_noise(used, baseline, baseline) or 0.0
        noise = (sa + thr**2 * sb) / 2
    sd = _planning_sd(float(z.std(ddof=1)), noise)
    nonzero = int(np.count_nonzero(~np.isclose(z, 0.0, atol=1e-9)))
    floor = evals_with_differing(nonzero / z.size)
    if sd == 0 or floor is None:
        return {**none, "promise": None, "decide_note": "cannot be decided by more trials or evals at this estimate"}
    mb = float(b.mean())
    k_a, k_b = (float(np.mean([c.arms[cfg].completed for c in used])) for cfg in (skill, baseline))
    step = _lattice_step(used, skill, baseline, thr)
    # The floor depends on the planned rates (wider nearer 0.5), so it is planned on the side the
    # estimate is on: planned for the wider side whichever it was, the advice delivered 87-90%
    # where the truth lay on the other (tests/analyze/test_advice.py).
    # A planned rate of 0 or less (below a small baseline) has no floor part to clear: the
    # skill never passing, the test alone decides.
    ma = min(1.0, thr * mb + side * effect)
    # Read the sd as an undecided pilot's only if this pilot could have been decided: with fewer
    # than 6 non-zero z_e the sign-flip test cannot reject (p >= 0.0625), so being undecided
    # selected nothing, and reading it as such shrank the advice (72-74% at 5 evals x 10 trials).
    found, power_at = _planned_evals(effect, sd, z.size, step,
                                     undecided=nonzero >= MIN_NONZERO_FOR_SIGNIFICANCE,
                                     cut=None if ma <= 0 else (lambda n: paired_intervals.ratio_floor_cut(ma, mb, thr, n, k_a, k_b)))
    if found is None:
        from skillassay.analyze.assurance import MAX_SIZE

        return {**none, "decide_note": advice_words.too_many(MAX_SIZE, condition)}
    evals = advice_words.about(max(found, floor, z.size + 1))
    power = round(power_at(found), 4)
    return {**none, "evals_to_decide": evals, "planned_power": power, "promise": promise(condition, power),
            "decide_note": advice_words.would_decide(evals, condition)}
