"""report.md (benchmark process, Step 5): the spec's template (summary, regressions,
improvements, per-eval breakdown, variance analysis, recommendations), plus what the figures
can and cannot support, in sentences a reader without statistics training can act on.

Everything is read from the iteration's files (benchmark.json, comparison_previous.json, the
config), so a report can be rewritten for any past iteration. The sentences are built here as
small pure functions; the template only lays them out.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from skillassay.analyze.advice import MIN_DETECTABLE_EFFECT
from skillassay.analyze.compare import (
    MAX_TRIALS_SEARCHED,
    design_limit,
    eval_label,
)
from skillassay.analyze.compare_text import evals_scope
from skillassay.analyze.cost import skill_mean_cost
from skillassay.analyze.gate import LABELS, NOT_MEASURED, REGRESSION_KEY, GateResult, ThresholdResult
from skillassay.analyze.rate_intervals import reading_phrase
from skillassay.models import Benchmark
from skillassay.report.benchmark_md import environment
from skillassay.report.formatting import cell, fmt, fmt_interval, named_interval, of, p_text, signed, signed_interval
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.wording import UNBOUNDED, UNBOUNDED_BELOW, pct, points

if TYPE_CHECKING:
    pass

FILENAME = "report.md"
THRESHOLD_FORMAT = {"min_pass_rate": "pct", "max_avg_tokens": "int", "max_avg_duration_seconds": "sec",
                    "min_improvement_ratio": "ratio", "max_avg_cost_usd": "usd", "max_cost_usd": "usd"}


# ---------------------------------------------------------------------------------------------
# Sections


def summary_rows(bench: Benchmark, st: dict[str, Any], comparison: dict[str, Any] | None,
                 gate: GateResult, thresholds: dict[str, float | None]) -> list[dict[str, str]]:
    """The spec's Summary table, each current figure with its interval, each delta with its."""
    s = bench.summary
    skill = st.get("skill_configuration", "with_skill")
    conf = (st.get("configurations") or {}).get(skill) or {}
    metrics = (comparison or {}).get("metrics") or {}
    by_key = {t.key: t for t in gate.thresholds}
    imp = (st.get("paired") or {}).get("improvement_ratio") or {}
    rows = []
    specs = [
        ("Pass rate", "min_pass_rate", "pass_rate", s.with_skill.pass_rate if s else None,
         conf.get("pass_rate_interval"), "pct", "pts"),
        ("Avg tokens", "max_avg_tokens", "avg_tokens", s.with_skill.avg_tokens if s else None,
         (conf.get("avg_tokens") or {}).get("interval"), "int", "rel"),
        ("Avg time", "max_avg_duration_seconds", "avg_duration_seconds",
         s.with_skill.avg_duration_seconds if s else None, (conf.get("avg_duration_seconds") or {}).get("interval"),
         "sec", "rel"),
        ("Avg cost", "max_avg_cost_usd", "avg_cost_usd", skill_mean_cost(bench.cost),
         (((bench.cost or {}).get("configurations") or {}).get(skill) or {}).get("mean_per_trial_interval"), "usd", "rel"),
        # The paired ratio (evals both arms completed), the set its interval is over.
        ("Improvement", "min_improvement_ratio", "improvement_ratio",
         imp["value"] if imp.get("value") is not None else (s.improvement_ratio if s else None),
         imp.get("interval"), "ratio", "ratio"),
    ]
    if bench.cost is None and thresholds.get("max_avg_cost_usd") is None:
        specs = [spec for spec in specs if spec[1] != "max_avg_cost_usd"]
    for label, key, metric, value, iv, kind, dkind in specs:
        m = metrics.get(metric) or {}
        if dkind == "rel":
            delta = signed(m.get("relative_delta"), "rel") + signed_interval(m.get("relative_interval"), "rel")
        else:
            delta = signed(m.get("delta"), dkind) + signed_interval(m.get("interval"), dkind)
        over = evals_scope(comparison, m.get("n_evals"))[1] if comparison and m else ""
        if over:  # a changed eval is set aside: the rates beside the delta are the whole suite's
            delta += f" ({over})"
        current = fmt(value, kind) + fmt_interval(iv, kind)
        limit = thresholds.get(key)
        t = by_key.get(key)
        if value is None and key == "min_improvement_ratio":
            current = "n/a (" + (imp.get("undefined_reason") or "not computable") + ")"
            if t is not None and t.value is not None and math.isinf(t.value):
                current = f"{UNBOUNDED} (the baseline passed nothing)" + fmt_interval(t.interval, kind)
        rows.append({"metric": label, "current": cell(current),
                     "previous": fmt(m.get("previous"), kind) if comparison else "-",
                     "delta": cell(delta) if comparison else "-",
                     "threshold": f"{LABELS[key][1]} {fmt(limit, THRESHOLD_FORMAT[key])}" if limit is not None else "-",
                     "status": t.status if t else "-"})
    reg = by_key.get(REGRESSION_KEY)
    if reg is not None:
        rows.append({"metric": "Evals regressed", "current": f"{reg.value:.0f}", "previous": "-", "delta": "-",
                     "threshold": "<= 0 (called regressions)", "status": reg.status})
    return rows


def _verdict(arm: dict[str, Any]) -> str:
    if not arm.get("completed"):
        return "no completed trial"
    passes = arm.get("passes")
    word = "?" if not isinstance(passes, (int, float)) else "PASS" if 2 * passes > arm["completed"] else "FAIL"
    return f"{word} ({of(passes, arm['completed'])})"


def change_rows(comparison: dict[str, Any] | None, worse: bool,
                called_only: bool = False) -> list[dict[str, str]]:
    """Regressions (worse=True) or improvements: raw flips and statistical calls, whichever
    fired; with called_only, only the evals the exact test called (the ones that need action)."""
    if not comparison:
        return []
    flip, labels = ("PASS->FAIL", ("regressed", "possible regression")) if worse else \
        ("FAIL->PASS", ("improved", "possible improvement"))
    rows = []
    for r in comparison.get("per_eval") or []:
        if called_only and r.get("label") != labels[0]:
            continue
        if r.get("raw_flip") != flip and r.get("label") not in labels:
            continue
        call = r.get("label", "")
        rows.append({"eval": cell(eval_label(r)), "previous": _verdict(r["before"]), "current": _verdict(r["after"]),
                     "call": call, "notes": cell(f"{call}: {r.get('explanation', '')}")})
    return rows


def possible_regression_rows(comparison: dict[str, Any] | None) -> list[dict[str, str]]:
    """Drops the test did not call (possible regressions, and raw PASS->FAIL flips that are
    not even that), each with the trials per arm that would let the exact test decide it."""
    rows = []
    for r in (comparison or {}).get("per_eval") or []:
        if r.get("label") == "regressed" or (r.get("label") != "possible regression"
                                             and r.get("raw_flip") != "PASS->FAIL"):
            continue
        n = r.get("additional_trials_per_arm_to_call")
        settle = (f"about {n} more per arm, if the pass rates hold" if n
                  else f"not within {MAX_TRIALS_SEARCHED} per arm: noise unless it repeats")
        rows.append({"eval": cell(eval_label(r)), "previous": _verdict(r["before"]),
                     "current": _verdict(r["after"]), "call": r.get("label", ""),
                     "adjusted_p": p_text(r.get("p_regression_adjusted")), "settle": cell(settle)})
    return rows


def design_limits(st: dict[str, Any], comparison: dict[str, Any] | None) -> list[str]:
    """What this design cannot detect, said before any figure (issue 16): a lone regression
    needs n_evals * 4^-K <= q, and the paired test needs 6 evals that differ."""
    out = [design_limit(st, comparison)] if comparison or st.get("trials_requested") else []
    n = st.get("n_evals") or 0
    if 0 < n < MIN_NONZERO_FOR_SIGNIFICANCE:
        out.append(f"With {n} eval(s), the paired skill-vs-baseline test cannot reach p < 0.05 whatever the "
                   f"results: it needs at least {MIN_NONZERO_FOR_SIGNIFICANCE} evals that differ between the arms.")
    return out


def _arm(pe: dict[str, Any], cfg: str) -> dict[str, Any]:
    return ((pe.get("configurations") or {}).get(cfg)) or {}


def _not_counted(arm: dict[str, Any]) -> str:
    """The trials left out of an arm's pass rate, said where its counts are shown."""
    parts = [f"{arm['errored']} errored or timed out" if arm.get("errored") else "",
             f"{arm['ungraded']} ungraded" if arm.get("ungraded") else ""]
    return f" ({', '.join(p for p in parts if p)})" if any(parts) else ""


def _counts(arm: dict[str, Any]) -> str:
    if not arm.get("completed"):
        return "no graded trial" + _not_counted(arm) if arm.get("ungraded") else "no completed trial"
    return f"{of(arm.get('passes'), arm['completed'])} ({fmt(arm.get('pass_rate'), 'pct')}{fmt_interval(arm.get('wilson'), 'pct').replace(' (95% CI', ', CI').rstrip(')')})"


def named_rows(st: dict[str, Any]) -> dict[str, Any]:
    """The statistics with the per-eval rows that name an eval: a damaged benchmark.json's row
    without one ({}) is left out, not crashed on by every table that labels its rows."""
    rows = st.get("per_eval")
    if not isinstance(rows, list):
        return st
    return {**st, "per_eval": [r for r in rows if isinstance(r, dict) and "eval_id" in r]}


def per_eval_rows(st: dict[str, Any], comparison: dict[str, Any] | None) -> list[dict[str, str]]:
    skill, base = st.get("skill_configuration", "with_skill"), st.get("baseline_configuration", "without_skill")
    calls = {str(r["eval_id"]): r for r in (comparison or {}).get("per_eval") or []}
    rows = []
    for pe in st.get("per_eval") or []:
        a, b = _arm(pe, skill), _arm(pe, base)
        c = calls.get(str(pe.get("eval_id")))
        rows.append({"eval": cell(eval_label(pe)), "with_skill": _counts(a), "baseline": _counts(b),
                     "difference": signed(pe.get("difference"), "pts"),
                     "vs_previous": cell(f"{c['counts']} {c['label']}") if c else "-",
                     "trials": f"{a.get('completed', 0)}+{b.get('completed', 0)} / "
                               f"{a.get('requested', 0)}+{b.get('requested', 0)}"
                               + (f" ({a.get('ungraded', 0)}+{b.get('ungraded', 0)} ungraded)"
                                  if a.get("ungraded") or b.get("ungraded") else "")})
    return rows


def variance_rows(st: dict[str, Any]) -> list[dict[str, str]]:
    """The spec's variance table for the with-skill arm. Std dev is that of the 0/1 trial
    outcomes, sqrt(p(1-p)) as in the spec's example (67% -> 0.47)."""
    skill = st.get("skill_configuration", "with_skill")
    rows = []
    for pe in st.get("per_eval") or []:
        a = _arm(pe, skill)
        p = a.get("pass_rate")
        reliability = a.get("reliability", "unreliable")
        if reliability == "unreliable":
            reliability = "unreliable (fewer than 2 completed trials)"
        rows.append({"eval": cell(eval_label(pe)), "pass_rate": fmt(p, "pct"),
                     "std": "n/a" if p is None else f"{math.sqrt(p * (1 - p)):.2f}",
                     "trials": f"{a.get('completed', 0)} of {a.get('requested', 0)}" + _not_counted(a),
                     "reliability": reliability})
    return rows


def threshold_sentence(t: ThresholdResult, gate_stats: dict[str, Any]) -> str:
    """What a threshold's verdict means, given its interval."""
    if t.key == REGRESSION_KEY:
        return ""
    label, op = LABELS[t.key]
    kind = THRESHOLD_FORMAT[t.key]
    value, limit = fmt(t.value, kind), fmt(t.threshold, kind)
    iv = t.interval if t.interval and any(b is not None for b in t.interval) else None
    g = gate_stats.get(t.key) or {}
    if t.status == NOT_MEASURED:
        return f"The {label} is not measured: {t.advice}."
    if t.value is None:
        return f"The {label} could not be computed ({t.advice}), so `{t.key}` is undecided."
    if iv is None:
        return (f"The {label} is {value} against {op} {limit}, but there is no interval (fewer than 2 evals), "
                f"so `{t.key}` cannot be decided: add evals.")
    lo = UNBOUNDED_BELOW if iv[0] is None else fmt(iv[0], kind)
    hi = UNBOUNDED if iv[1] is None else fmt(iv[1], kind)
    test = ""
    if t.key == "min_improvement_ratio" and g.get("test_p_value") is not None:
        test = f" (paired sign-flip test at {limit}: p = {p_text(g['test_p_value'])})"
    if t.status in ("PASS", "FAIL") and iv[0] == iv[1]:
        return (f"The {label} is {value} with an interval of no width, so nothing here measures its noise; "
                f"`{t.key}` is {t.status} on the figures recorded, not a sure result.")
    if t.status == "PASS":
        return f"The {label} is {value}; its whole 95% interval ({lo} to {hi}) meets {op} {limit}{test}: PASS."
    if t.status == "FAIL":
        return f"The {label} is {value}; its whole 95% interval ({lo} to {hi}) misses {op} {limit}{test}: FAIL."
    note = g.get("decide_note") or t.advice or ""
    note = note[:1].upper() + note[1:]
    # The plain comparison of the figure shown: an unbounded ratio (baseline passed nothing)
    # clears any >= threshold, though the statistics record no plain verdict for it.
    meets = g.get("plain") if t.value is None or math.isfinite(t.value) else t.value > 0
    plain = "would pass" if meets else "would fail"
    where = (f"its 95% interval runs from {lo} to {hi} and includes {limit}" if _includes(iv, t.threshold)
             else f"the paired test at {limit} cannot confirm it{test}")
    return (f"The {label} is {value}, but {where}: the data cannot tell yet whether the skill meets {op} {limit} "
            f"(the plain comparison {plain}). {note}.").replace("..", ".").replace(" .", ".")


def _includes(iv: list, x: float) -> bool:
    lo = -math.inf if iv[0] is None else iv[0]
    hi = math.inf if iv[1] is None else iv[1]
    return lo <= x <= hi


def significance_sentence(diff: dict[str, Any], what: str) -> str:
    """Whether a paired test over evals could even reach significance, and what it says."""
    m, p = diff.get("n_nonzero") or 0, diff.get("p_value")
    if not diff.get("n_evals"):
        return ""
    if m < MIN_NONZERO_FOR_SIGNIFICANCE:
        ties = diff["n_evals"] - m
        # More trials can make tied evals differ; only when none ties can they not help.
        remedy = (f"add evals, or trials ({ties} evals tie, and more trials may make some of them differ)"
                  if ties else "add evals (not trials)")
        return (f"Only {m} eval(s) differ {what}; with fewer than {MIN_NONZERO_FOR_SIGNIFICANCE} evals that "
                "differ, no p < 0.05 is reachable, so the test cannot confirm this difference however large it "
                f"looks. That is a limit of the eval set, not evidence of no effect: {remedy} to change it.")
    verdict = "unlikely to be chance" if p is not None and p < 0.05 else "could well be chance"
    return f"{m} evals differ {what}; p = {p_text(p)} ({diff.get('p_value_method')} test): {verdict}."


def certainty_notes(bench: Benchmark, st: dict[str, Any], gate: GateResult,
                    comparison: dict[str, Any] | None) -> list[str]:
    notes = [s for t in gate.thresholds if (s := threshold_sentence(t, st.get("gates") or {}))]
    diff = (st.get("paired") or {}).get("pass_rate_difference") or {}
    if diff.get("mean") is not None:
        more = "more" if diff["mean"] >= 0 else "less"
        ci = signed_interval(diff.get('interval'), 'pts')[9:-1]
        notes.append(f"With the skill, evals pass {points(diff['mean'])} percentage points {more} often than "
                     f"without (95% CI {ci + ', ' + reading_phrase(diff.get('interval_reading')) if ci else 'n/a'}).")
        notes.append(significance_sentence(diff, "between with and without the skill"))
        imp = (st.get("paired") or {}).get("improvement_ratio") or {}
        if imp.get("interval"):
            notes.append("The improvement ratio's interval holds every ratio that this same paired test does not "
                         "reject" + ("" if imp.get("interval_reading") == "these_evals" else
                                     ", widened to at least the trial-level noise") +
                         ", so it excludes 1.00x only when the test finds a difference.")
    trials = st.get("trials_requested") or 0
    skill = st.get("skill_configuration", "with_skill")
    full = [pe for pe in st.get("per_eval") or [] if (a := _arm(pe, skill)).get("completed") and
            a.get("passes") == a["completed"] and a.get("wilson")]
    if full and trials <= 10:
        a = _arm(full[0], skill)
        notes.append(f"Per eval, {a['passes']}/{a['completed']} passes is compatible with a true pass rate as low as "
                     f"{fmt(a['wilson'][0], 'pct')} (95% Wilson interval): at {trials} trials a single eval proves "
                     "little; the suite-level figures above are the ones to trust.")
    if comparison:
        sd = (comparison.get("suite") or {}).get("pass_rate_delta") or {}
        notes.append(significance_sentence(sd, "between this iteration and the previous one"))
        notes += comparison.get("notes") or []
    return [n for n in dict.fromkeys(notes) if n]


def recommendations(st: dict[str, Any], gate: GateResult, comparison: dict[str, Any] | None) -> list[str]:
    """The spec's recommendations: from regressions, low-reliability evals and threshold
    failures, plus what would make an undecided figure decided."""
    recs = [f"Fix the measurement before reading anything else: measurement invalid: {f}." for f in gate.problems]
    ungraded = sum((c or {}).get("trials_ungraded") or 0 for c in (st.get("configurations") or {}).values())
    if ungraded:
        recs.append(f"Grade the {ungraded} ungraded trials: each grading.json's evidence says why an expectation "
                    "has no verdict; `skillassay grade ITERATION_DIR --judge local` (or openai, anthropic) grades "
                    "plain-language expectations without re-running anything.")
    for r in (comparison or {}).get("per_eval") or []:
        if r.get("label") == "regressed":
            recs.append(f"Fix {eval_label(r)}: it regressed ({r['counts']}, a called regression). Run the skill's "
                        "evolve step on it before publishing.")
        elif r.get("label") == "possible regression":
            n = r.get("additional_trials_per_arm_to_call")
            recs.append(f"Re-check {eval_label(r)} ({r['counts']}): "
                        + (f"about {n} more trials per arm would be enough for the exact test to call this drop "
                           "if the pass rates held; if it then is not called, it was most likely noise."
                           if n else f"not settled even by {MAX_TRIALS_SEARCHED} trials per arm; watch it."))
    gstats = st.get("gates") or {}
    for t in gate.thresholds:
        if t.key == REGRESSION_KEY:
            continue
        if t.status == "FAIL":
            evals = ", ".join(t.evals) or "the suite as a whole"
            recs.append(f"Threshold `{t.key}` FAILED ({t.line()}): improve the skill on {evals} (the evolve "
                        "step); do not publish until it passes.")
        elif t.status == "INCONCLUSIVE":
            g = gstats.get(t.key) or {}
            if g.get("trials_to_decide"):
                recs.append(f"Threshold `{t.key}` is undecided: run with `--trials {g['trials_to_decide']}` "
                            f"({g.get('decide_note') or 'completed trials per eval per arm'}).")
            elif g.get("decide_note"):
                recs.append(f"Threshold `{t.key}` is undecided: {g['decide_note']}.")
            else:
                recs.append(f"Threshold `{t.key}` is undecided: {t.advice or 'see the figures above'}.")
        elif t.status == NOT_MEASURED:
            recs.append(f"Threshold `{t.key}` is not measured: use an executor that reports this figure, "
                        "or remove the threshold from the config.")
    skill = st.get("skill_configuration", "with_skill")
    for pe in st.get("per_eval") or []:
        a = _arm(pe, skill)
        if a.get("reliability") == "Low (investigate)":
            recs.append(f"{eval_label(pe)} passes {of(a.get('passes'), a.get('completed')).replace('/', ' of ')} trials with the skill: it is "
                        "flaky; compare its passing and failing transcripts to find out why.")
        elif a.get("reliability") == "unreliable" and a.get("requested"):
            recs.append(f"{eval_label(pe)} has fewer than 2 completed trials with the skill: its variance is "
                        "unreliable; re-run it.")
    diff = (st.get("paired") or {}).get("pass_rate_difference") or {}
    if diff.get("n_evals") and not diff.get("significance_reachable"):
        recs.append(f"Add evals: with {diff.get('n_nonzero', 0)} eval(s) differing between the arms no test can "
                    "reach p < 0.05.")
    power = st.get("power") or {}
    if power.get("evals_needed") and not already_decided(gate, diff):
        # Sized at the planned difference, not the observed one (advice.power_stats says why);
        # its promise and the trials per arm stay in benchmark.json's power section.
        planned = power.get("detectable_difference") or MIN_DETECTABLE_EFFECT
        recs.append(f"Power: about {power['evals_needed']} evals would likely decide this if the true skill-vs-baseline "
                    f"difference is at least {points(planned)} pts either way.")
    return list(dict.fromkeys(recs))


def already_decided(gate: GateResult, diff: dict[str, Any]) -> bool:
    """No sample-size advice beside a decision: the gate passed or failed, or the paired test
    confirmed the difference the advice is sized to detect (its interval leaves out zero)."""
    if gate.status in ("PASS", "FAIL"):
        return True
    iv = diff.get("interval")
    return isinstance(iv, list) and len(iv) == 2 and None not in iv and (iv[0] > 0 or iv[1] < 0)


def details(st: dict[str, Any], comparison: dict[str, Any] | None) -> list[str]:
    """The intervals and tests behind the sentences, for readers who want them."""
    paired = st.get("paired") or {}
    d = paired.get("pass_rate_difference") or {}
    imp = paired.get("improvement_ratio") or {}
    out = [f"Skill minus baseline pass rate (paired by eval, {d.get('n_evals', 0)} evals): "
           f"{signed(d.get('mean'), 'pts')}{named_interval(signed_interval(d.get('interval'), 'pts'), d)}, p = {p_text(d.get('p_value'))} "
           f"({d.get('p_value_method') or 'no test'}).",
           f"Improvement ratio: {fmt(imp.get('value'), 'ratio')}{named_interval(fmt_interval(imp.get('interval'), 'ratio'), imp)}"
           + (f" ({imp['method']})" if imp.get("method") else "")
           + (f"; {imp['undefined_reason']}" if imp.get("undefined_reason") else "") + "."]
    for key, label in (("token_ratio", "Tokens, skill / baseline"), ("duration_ratio", "Duration, skill / baseline")):
        g = paired.get(key) or {}
        if g.get("ratio") is not None:
            out.append(f"{label} (geometric mean over evals): {fmt(g['ratio'], 'ratio')}{fmt_interval(g.get('interval'), 'ratio')}.")
    if comparison:
        pr = (comparison.get("metrics") or {}).get("pass_rate") or {}
        out.append(f"Pass rate vs previous iteration (paired by eval, {pr.get('n_evals', 0)} evals): "
                   f"{signed(pr.get('delta'), 'pts')}{signed_interval(pr.get('interval'), 'pts')}, "
                   f"p = {p_text(pr.get('p_value'))}.")
        out.append(f"Per-eval calls: one-sided Boschloo exact test per eval, Benjamini-Hochberg across evals, "
                   f"called at adjusted p <= {comparison.get('q')}.")
    out += [f"Validity: {f}." for f in st.get("validity") or [] if not f.startswith("measurement invalid")]
    return out


def with_loading(recs: list[str], gate: GateResult, loading: dict[str, Any] | None) -> list[str]:
    """The seldom-loaded evals right after any invalid-measurement fix: a with-skill figure from
    trials that never read the skill says nothing about the skill, so it comes before the rest."""
    at = len(gate.problems)
    return recs[:at] + (loading or {}).get("recommendations", []) + recs[at:]


def adaptive_section(design: dict[str, Any] | None) -> dict[str, Any] | None:
    """Per eval, the trials an adaptive run spent and why it stopped (the suite's stop, decided:
    every gate's call known; settled: no call within reach; reached max; or agreed: the eval's
    own stop when its arms agreed at the first look, if that rule is on),
    and in one sentence the method, its parameters and the saving. None for a fixed run."""
    if not isinstance(design, dict):
        return None
    rows = []
    for e in design.get("per_eval") or []:
        if not isinstance(e, dict):
            continue
        label = f"eval-{e.get('eval_id')} ({e.get('eval_name')})" if e.get("eval_name") else f"eval-{e.get('eval_id')}"
        rows.append({"eval": cell(label), "trials": cell(e.get("trials_per_arm")), "stopped": cell(e.get("stopped")),
                     "why": cell("; ".join(str(r) for r in e.get("reasons") or []) or "-")})
    used, fixed = design.get("trials_recorded"), design.get("trials_fixed_design")
    saving = (f"{used} trials recorded where the fixed design runs {fixed} ({pct(1 - used / fixed)} fewer)"
              if isinstance(used, int) and isinstance(fixed, int) and fixed else "")
    summary = (f"Trials ran in rounds: {design.get('min_trials_per_eval')} to {design.get('max_trials_per_eval')} per "
               f"eval and arm, {design.get('round_size')} more per round. When to stop was decided by a "
               f"{design.get('method')}, alpha {design.get('alpha')}"
               + (f", bets: {design['bets']}" if design.get("bets") else "")
               + f". {design.get('rule')} {saving}.")
    return {"summary": cell(summary), "rows": rows}


def render_report(context: dict[str, Any]) -> str:
    return environment().get_template("report.md.j2").render(**context)
