"""Iteration N vs its predecessor (benchmark process, Step 4), written to
`CURRENT/comparison_previous.json`.

The spec asks for per-metric deltas and the raw flips (passed before, fails now). A raw flip at
K = 3 is often one unlucky trial, so each eval also gets the statistical call from
`iteration_change.compare_iterations` (one-sided Boschloo, Benjamini-Hochberg across evals), and every
"possible" change says how many more trials per arm would settle it, found by re-running the
same exact test rather than by a normal-approximation formula that is meaningless at 3/3 vs 0/3.
`comparison-N.json` is left alone: that name belongs to blind comparisons.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from skillassay.analyze.arms import pick_arms
from skillassay.analyze.benchmark import ratio_unbounded
from skillassay.analyze.cells import group_records
from skillassay.analyze.iteration_change import compare_iterations
from skillassay.errors import InputError
from skillassay.stats.multiplicity import bh_adjust, bh_call_threshold, one_sided_exact_p
from skillassay.store.iteration_files import COMPARISON_FILENAME, COMPARISON_SCHEMA_VERSION
from skillassay.store.records import TrialRecord
from skillassay.wording import UNBOUNDED, fdr_level

SCHEMA_VERSION = COMPARISON_SCHEMA_VERSION
FILENAME = COMPARISON_FILENAME
Q = 0.10
# Family-wise level at which the baseline arm is said to have drifted: BH at this level keeps
# the chance of any such note under 2.5% when nothing changed (at q = 0.10 it appeared in 7.7%
# of A/A experiments at K = 10).
DRIFT_LEVEL = 0.025
MAX_TRIALS_SEARCHED = 200
_ITERATION = re.compile(r"iteration-(\d+)")


def iteration_number(path: Path) -> int | None:
    m = _ITERATION.fullmatch(path.name)
    return int(m.group(1)) if m else None


def records_from_benchmark(data: dict[str, Any], path: Path) -> list[TrialRecord]:
    """Trials reconstructed from a benchmark.json alone, for a `previous_benchmark` whose run
    folders are gone. Exact for what comparison uses (per-eval passes, completed trials and
    mean tokens/duration); individual trials' spread of tokens is not recoverable."""
    st: dict[str, Any] = data["statistics"] if isinstance(data.get("statistics"), dict) else {}
    per_eval = st.get("per_eval") if isinstance(st.get("per_eval"), list) else None
    out: list[TrialRecord] = []
    if per_eval:
        for pe in per_eval:
            for cfg, arm in (pe.get("configurations") or {}).items():
                out += _synthetic(pe.get("eval_id"), pe.get("eval_name") or "", cfg, arm.get("passes"),
                                  arm.get("completed"), (arm.get("tokens") or {}).get("mean"),
                                  (arm.get("duration_seconds") or {}).get("mean"))
    else:
        for pe in data.get("per_eval") or []:
            for role, cfg in (("with_skill", "with_skill"), ("baseline", "without_skill")):
                arm = pe.get(role) or {}
                n = arm.get("trials_completed", pe.get("trials"))
                rate = arm.get("pass_rate")
                passes = round(rate * n) if isinstance(rate, int | float) and isinstance(n, int) else None
                out += _synthetic(pe.get("eval_id"), pe.get("eval_name") or "", cfg, passes, n,
                                  arm.get("avg_tokens"), arm.get("avg_duration_seconds"))
    if not out:
        raise InputError.one(path, "$.per_eval", "no per-eval results to compare against")
    return out


def _synthetic(eval_id: Any, name: str, cfg: str, passes: Any, n: Any, tokens: Any,
               seconds: Any) -> list[TrialRecord]:
    if not isinstance(passes, int) or not isinstance(n, int) or eval_id is None:
        return []
    tok = round(tokens) if isinstance(tokens, int | float) else None
    return [TrialRecord(eval_id=eval_id, eval_name=name, configuration=cfg, run_number=k + 1, status="ok",
                        passed=k < passes, tokens=tok,
                        duration_seconds=float(seconds) if isinstance(seconds, int | float) else None)
            for k in range(n)]


# What makes an eval the same eval: its id names it, these make it the same task and test.
EVAL_CONTENT = ("prompt", "expectations", "files")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def eval_content(metadata: dict[str, Any]) -> dict[str, str]:
    """One digest per part of an eval's content, from its eval_metadata.json: prompt,
    expectations (with skill-creator's `assertions`) and input files (names and, when `run`
    recorded them, their sha256). Only the parts the file has: a skill-creator folder without
    `files` is not called changed for lacking them."""
    out: dict[str, str] = {}
    turns = metadata.get("turns") if isinstance(metadata.get("turns"), list) else None
    if turns:  # a conversation: every message counts, and which turn an expectation belongs to
        out["prompt"] = _digest([t.get("prompt") if isinstance(t, dict) else t for t in turns])
    elif isinstance(metadata.get("prompt"), str):
        out["prompt"] = _digest(metadata["prompt"])
    if metadata.get("expectations") is not None or metadata.get("assertions") is not None:
        own = [metadata.get("expectations") or [], metadata.get("assertions") or []]
        out["expectations"] = _digest([*own, turns] if turns else own)
    if metadata.get("files") is not None or metadata.get("files_sha256") is not None:
        out["files"] = _digest([metadata.get("files") or [], metadata.get("files_sha256") or {}])
    return out


def changed_evals(cur: dict[Any, dict[str, str]], prev: dict[Any, dict[str, str]],
                  names: dict[Any, str], prev_names: dict[Any, str]) -> list[dict[str, Any]]:
    """Evals whose id is in both iterations but whose content is not the same: a different
    task under an old id, so comparing its pass rates would compare two different things."""
    out = []
    for eval_id in cur.keys() & prev.keys():
        parts = [k for k in EVAL_CONTENT if k in cur[eval_id] and k in prev[eval_id]
                 and cur[eval_id][k] != prev[eval_id][k]]
        if parts:
            out.append({"eval_id": eval_id, "eval_name": names.get(eval_id),
                        "previous_eval_name": prev_names.get(eval_id), "changed": parts})
    return sorted(out, key=lambda r: str(r["eval_id"]))


@dataclasses.dataclass
class Side:
    """One iteration as the comparison sees it."""

    path: Path
    records: list[TrialRecord]
    benchmark: dict[str, Any]
    record: dict[str, Any]  # iteration.json, {} when absent
    # eval id -> eval_content; {} for a previous_benchmark read from benchmark.json alone
    contents: dict[Any, dict[str, str]] = dataclasses.field(default_factory=dict)

    @property
    def number(self) -> int | None:
        n = self.benchmark.get("iteration")
        return n if isinstance(n, int) else iteration_number(self.path) or self.record.get("iteration")


# ---------------------------------------------------------------------------------------------
# Pure pieces


def _f(x: float | None, nd: int = 6) -> float | None:
    if x is None or not math.isfinite(float(x)):
        return None
    return round(float(x), nd)


def skill_and_baseline(side: Side) -> tuple[str, str]:
    st: dict[str, Any] = side.benchmark["statistics"] if isinstance(side.benchmark.get("statistics"), dict) else {}
    if st.get("skill_configuration") and st.get("baseline_configuration"):
        return str(st["skill_configuration"]), str(st["baseline_configuration"])
    arms = pick_arms((r.configuration for r in side.records), side.record.get("baseline_type"))
    return arms.skill, arms.baseline


def renamed(records: list[TrialRecord], old: str, new: str) -> list[TrialRecord]:
    """Previous records with their configuration renamed, so new_skill and with_skill compare."""
    if old == new:
        return records
    return [dataclasses.replace(r, configuration=new) if r.configuration == old else r for r in records]


def ratio_difference(a1: list[float], b1: list[float], a2: list[float], b2: list[float],
                     conf: float = 0.95) -> dict[str, Any]:
    """R1 - R2 for R = mean(a)/mean(b), paired by eval, with a delta-method t(E-1) interval.

    The same linearisation as the improvement ratio's own interval, applied to the difference
    of two ratios measured on the same evals; pairing removes the eval-difficulty variance
    that two independent intervals would double count."""
    x1, y1, x2, y2 = (np.asarray(v, dtype=float) for v in (a1, b1, a2, b2))
    if x1.size == 0:
        return {"delta": None, "interval": None, "n_evals": 0, "undefined_reason": "no eval ran in all four arms"}
    m1, m2 = float(y1.mean()), float(y2.mean())
    if m1 == 0 or m2 == 0:
        which = "current" if m1 == 0 else "previous"
        return {"delta": None, "interval": None, "n_evals": int(x1.size),
                "undefined_reason": f"the {which} baseline passed nothing, so its ratio is {UNBOUNDED} and the change has no size"}
    r1, r2 = float(x1.mean()) / m1, float(x2.mean()) / m2
    out: dict[str, Any] = {"delta": _f(r1 - r2), "interval": None, "n_evals": int(x1.size), "undefined_reason": None}
    if x1.size >= 2:
        z = (x1 - r1 * y1) / m1 - (x2 - r2 * y2) / m2
        se = float(z.std(ddof=1) / math.sqrt(z.size))
        if se == 0:
            out["interval"] = [_f(r1 - r2), _f(r1 - r2)]
        else:
            from scipy import stats as sps  # here: ~1 s to import, and most runs never get here

            lo, hi = sps.t.interval(conf, z.size - 1, loc=r1 - r2, scale=se)
            out["interval"] = [_f(lo), _f(hi)]
    return out


def _candidate_trials(start: int) -> list[int]:
    return [k for k in [*range(start, start + 20), 30, 40, 60, 80, 100, 150, MAX_TRIALS_SEARCHED] if k >= start]


def _normal_p(rb: float, ra: float, k: np.ndarray, regression: bool) -> np.ndarray:
    """One-sided pooled two-proportion z-test p at k trials per arm, on the rounded counts the
    exact search would test: only a guide to where the exact test will first call it."""
    c1, c2 = np.round(rb * k), np.round(ra * k)
    pooled = (c1 + c2) / (2 * k)
    se = np.sqrt(np.maximum(pooled * (1 - pooled), 1e-12) * 2 / k)
    z = ((c1 - c2) if regression else (c2 - c1)) / k / se
    from scipy import stats as sps  # here, not at the top: ~1 s to import for every command

    return np.asarray(sps.norm.sf(z))


def trials_to_call(before: tuple[int, int], after: tuple[int, int], others: list[float | None],
                   index: int, q: float, regression: bool) -> int | None:
    """Smallest trials per arm at which this eval's change would be called at FDR q, if the
    observed pass rates held and the other evals' p-values stayed as they are. Uses the same
    exact test and BH step as the call itself. None when the rates are equal or even
    MAX_TRIALS_SEARCHED per arm would not do.

    Scanning every candidate with Boschloo took ~0.4 s per eval (~30 s for 20 evals on a loaded
    machine), so the BH step is solved in closed form for the largest raw p that is called, a
    normal approximation says where to start, and the exact test only confirms the answer and
    that the candidate below it does not call: about three exact tests per eval."""
    (cb, nb), (ca, na) = before, after
    if not nb or not na:
        return None
    rb, ra = cb / nb, ca / na
    if math.isclose(rb, ra) or (ra < rb) != regression:
        return None
    ks = [k for k in _candidate_trials(max(nb, na) + 1) if round(rb * k) != round(ra * k)]
    if not ks:
        return None
    limit = bh_call_threshold(others, index, q)
    guide = _normal_p(rb, ra, np.array(ks, dtype=float), regression)
    if guide[-1] > 3 * limit:
        return None  # far beyond the exact test's reach at MAX_TRIALS_SEARCHED: no need to ask it

    def called(k: int) -> bool:
        p_reg, p_imp = one_sided_exact_p(round(rb * k), k, round(ra * k), k, only_observed_direction=True)
        ps = list(others)
        ps[index] = p_reg if regression else p_imp
        adj = bh_adjust(ps)[index]
        return adj is not None and adj <= q

    i = int(np.argmax(guide <= limit)) if (guide <= limit).any() else len(ks) - 1
    if called(ks[i]):
        while i > 0 and called(ks[i - 1]):
            i -= 1
        return ks[i]
    for j in range(i + 1, len(ks)):
        if called(ks[j]):
            return ks[j]
    return None


def eval_label(row: dict[str, Any]) -> str:
    return f"eval-{row['eval_id']} ({row['eval_name']})" if row.get("eval_name") else f"eval-{row['eval_id']}"


def explain_eval(row: dict[str, Any], q: float) -> str:
    """One plain-language sentence: what changed on this eval and whether it is certain."""
    counts = f"{row['before']['passes']}/{row['before']['completed']} before vs " \
             f"{row['after']['passes']}/{row['after']['completed']} now"
    label = row["label"]
    if label in ("regressed", "improved"):
        p = row["p_regression_adjusted"] if label == "regressed" else row["p_improvement_adjusted"]
        word = "drop" if label == "regressed" else "gain"
        return f"{counts}: a real {word} (adjusted p = {p:.3g}, called at <= {q:g})."
    if label in ("possible regression", "possible improvement"):
        extra = row.get("additional_trials_per_arm_to_call")
        more = (f"about {extra} more trial{'s' if extra != 1 else ''} per arm would be, if the pass rates hold"
                if extra else f"even {MAX_TRIALS_SEARCHED} trials per arm would not be: treat it as noise unless it repeats")
        return f"{counts} on one eval is not enough to call it; {more}."
    return f"{counts}: no change."


# ---------------------------------------------------------------------------------------------
# The comparison


def _arm_rates(records: list[TrialRecord], skill: str, base: str) -> dict[Any, tuple[float | None, float | None]]:
    return {c.eval_id: (c.arms[skill].pass_rate, c.arms[base].pass_rate)
            for c in group_records(records, (skill, base))}


def _summary(bench: dict[str, Any], role: str, key: str) -> float | None:
    s: dict[str, Any] = bench["summary"] if isinstance(bench.get("summary"), dict) else {}
    arm = s.get(role) if role else s
    v = arm.get(key) if isinstance(arm, dict) else None  # a hand-edited summary may hold anything
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _unbounded(bench: dict[str, Any]) -> bool:
    return isinstance(bench.get("summary"), dict) and ratio_unbounded(bench["summary"])


def _cost_metric(cur: float | None, prev: float | None, geo: dict[str, Any]) -> dict[str, Any]:
    rel = None if cur is None or prev is None or prev == 0 else cur / prev - 1
    iv = geo.get("interval")
    return {"current": cur, "previous": prev, "delta": _f(None if cur is None or prev is None else cur - prev, 4),
            "relative_delta": _f(rel, 4), "ratio": geo.get("ratio"), "ratio_interval": iv,
            "relative_interval": None if not iv or None in iv else [_f(iv[0] - 1, 4), _f(iv[1] - 1, 4)],
            "method": "geometric mean of per-eval ratios, t interval on log ratios",
            "n_evals": geo.get("n_evals_used")}


def metric_deltas(cur: Side, prev: Side, base: dict[str, Any], skill_cfg: str, base_cfg: str) -> dict[str, Any]:
    """The spec's four summary metrics, current vs previous, each with an interval on the change."""
    pr = base["suite"]["pass_rate_delta"]
    cur_rates = _arm_rates(cur.records, skill_cfg, base_cfg)
    prev_rates = _arm_rates(prev.records, skill_cfg, base_cfg)
    cols: tuple[list[float], list[float], list[float], list[float]] = ([], [], [], [])
    for e, (a1, b1) in cur_rates.items():
        a2, b2 = prev_rates.get(e, (None, None))
        if a1 is not None and b1 is not None and a2 is not None and b2 is not None:
            for col, v in zip(cols, (a1, b1, a2, b2), strict=True):
                col.append(v)
    ratio = ratio_difference(*cols)
    cur_r, prev_r = _summary(cur.benchmark, "", "improvement_ratio"), _summary(prev.benchmark, "", "improvement_ratio")
    return {
        "pass_rate": {"current": _summary(cur.benchmark, "with_skill", "pass_rate"),
                      "previous": _summary(prev.benchmark, "with_skill", "pass_rate"),
                      "delta": pr["mean"], "interval": pr["interval"], "n_evals": pr["n_evals"],
                      "p_value": pr["p_value"], "p_value_method": pr["p_value_method"],
                      "significance_reachable": pr["significance_reachable"], "explanation": pr["explanation"],
                      "method": "mean of per-eval differences (paired by eval), sign-flip test and its inversion as the interval"},
        "avg_tokens": _cost_metric(_summary(cur.benchmark, "with_skill", "avg_tokens"),
                                   _summary(prev.benchmark, "with_skill", "avg_tokens"), base["suite"]["token_ratio"]),
        "avg_duration_seconds": _cost_metric(_summary(cur.benchmark, "with_skill", "avg_duration_seconds"),
                                             _summary(prev.benchmark, "with_skill", "avg_duration_seconds"),
                                             base["suite"]["duration_ratio"]),
        "improvement_ratio": {"current": cur_r, "previous": prev_r,
                              "current_unbounded": _unbounded(cur.benchmark), "previous_unbounded": _unbounded(prev.benchmark),
                              "delta": ratio["delta"], "interval": ratio["interval"], "n_evals": ratio["n_evals"],
                              "undefined_reason": ratio["undefined_reason"],
                              "method": "difference of ratios paired by eval, delta method, t(E-1)"},
    }


def add_trials_to_call(result: dict[str, Any], q: float) -> None:
    """Per eval: the exact trials per arm that would turn a "possible" change into a call."""
    rows = result["per_eval"]
    p_reg = [r["p_regression"] for r in rows]
    p_imp = [r["p_improvement"] for r in rows]
    for i, r in enumerate(rows):
        n = None
        if r["label"].startswith("possible"):
            regression = r["label"] == "possible regression"
            n = trials_to_call((r["before"]["passes"], r["before"]["completed"]),
                               (r["after"]["passes"], r["after"]["completed"]),
                               p_reg if regression else p_imp, i, q, regression)
        done = min(r["before"]["completed"], r["after"]["completed"])
        r["trials_per_arm_to_call"] = n
        r["additional_trials_per_arm_to_call"] = None if n is None else max(1, n - done)
        r["explanation"] = explain_eval(r, q)


def comparison_notes(result: dict[str, Any], changed: list[str], drift: dict[str, Any]) -> list[str]:
    """What a reader must know before trusting the deltas, in plain words."""
    notes = []
    if "settings" in changed:
        notes.append("The executor settings (model, temperature, seed or options) changed between the two "
                     "iterations: a difference may come from the settings, not from the skill.")
    if "evals" in changed:
        notes.append("The eval set changed between the two iterations: only evals present in both are compared.")
    if result["unmatched_evals"]:
        notes.append(f"{len(result['unmatched_evals'])} eval(s) ran in only one of the iterations and are not compared.")
    if result.get("changed_evals"):
        notes.append("Changed since the previous iteration, so not compared (same id, different "
                     + "; ".join(f"{', '.join(r['changed'])} of {eval_label(r)}" for r in result["changed_evals"])
                     + "): a changed eval is a different test, not a regression or an improvement.")
    if drift["changed"]:
        notes.append(f"The baseline arm (without the skill) also changed on eval(s) "
                     f"{', '.join(str(e) for e in drift['changed'])}, by more than trial noise explains at "
                     f"{fdr_level(DRIFT_LEVEL)}: the skill cannot cause that, so check whether the model, its "
                     "settings or the environment changed before crediting or blaming the skill.")
    return notes


def design_limit(statistics: dict[str, Any] | None, comparison: dict[str, Any] | None) -> str:
    """detection_limit's sentence for an iteration: from its comparison when there is one, else
    from the planned trials and the number of evals (what a next iteration could detect)."""
    limit = (comparison or {}).get("detection_limit")
    if limit:
        return str(limit["text"])
    st = statistics or {}
    return str(detection_limit(st.get("n_evals") or 0, st.get("trials_requested") or 0, Q)["text"])


def drifted(baseline: dict[str, Any], level: float = DRIFT_LEVEL) -> list[Any]:
    """Baseline evals whose change is called at the drift level (adjusted p, either way)."""
    return [r["eval_id"] for r in baseline["per_eval"]
            if min(p for p in (r["p_regression_adjusted"], r["p_improvement_adjusted"], 1.0)
                   if p is not None) <= level]


MAX_EVALS_STATED = 10**12  # detection_limit's "among up to N evals" stops growing here


def smallest_regression_p(k: int) -> float:
    """The smallest one-sided Boschloo p-value K trials per arm can give: K/K -> 0/K, whose
    p is sup_pi pi^K (1 - pi)^K = 4^-K (the most extreme table is alone in Boschloo's order;
    at K = 3 that is 0.015625, as scipy.stats.boschloo_exact gives)."""
    return 0.25 ** k


def trials_to_detect(n_evals: int, q: float) -> int:
    """Smallest K at which one regressed eval among n_evals can be called after BH at q: its
    adjusted p is at least n_evals * 4^-K (the others' p-values being at most 1)."""
    return max(1, math.ceil(math.log(max(n_evals, 1) / q) / math.log(4) - 1e-12))


def detection_limit(n_evals: int, k: int, q: float = Q, suite_evals: int | None = None) -> dict[str, Any]:
    """What the design cannot detect, said before any figure: with K trials per arm a single
    regressed eval can be called only when n_evals * 4^-K <= q. n_evals are the evals compared;
    `suite_evals`, when more (a changed eval is reported, never compared), is said beside it."""
    p = smallest_regression_p(k) if k >= 1 else 1.0
    # Compared in logs: 4^-K underflows to 0 from K = 538 (and q / 4^-K overflows before that),
    # which crashed every run of 537 or more trials after all of them had run.
    log_most = math.log(q) + k * math.log(4) if k >= 1 else -math.inf
    # Capped: 4^K grows past what JSON readers take as an integer (120 digits at K = 200; ours
    # refuse more than 64), and no suite comes near 10^12 evals.
    most = MAX_EVALS_STATED if log_most >= math.log(MAX_EVALS_STATED) else (
        math.floor(math.exp(log_most) + 1e-9) if k >= 1 else 0)
    can = k >= 1 and n_evals <= most
    needed = trials_to_detect(n_evals, q)
    part = f"this suite has {suite_evals}, {n_evals} of them compared" if suite_evals and suite_evals != n_evals else ""
    aside = f" ({part})" if part else ""
    if can:
        up_to = f"up to {most:,}" if most < 10**6 else "more than a million"  # 4^K: 120 digits at K = 200
        text = (f"At {k} trial(s) per arm a lone eval falling from {k}/{k} to 0/{k} can be called regressed among "
                f"{up_to} evals ({part or f'this suite has {n_evals}'}); smaller drops need more trials.")
    else:  # a changed eval is set aside: say so here too, or "among 7 evals" reads wrong of a suite of 8
        text = (f"At {k} trial(s) per arm no single eval can be called regressed among {n_evals} evals{aside}: even "
                f"{k}/{k} -> 0/{k} gives p = {p:.3g}, which the correction for testing {n_evals} evals lifts above "
                f"{q:g}. Run with --trials {needed} or more to make that detectable.")
    from skillassay.analyze.gate import REGRESSION_GATE_LEVEL, regression_level_words

    gate_needed = trials_to_detect(n_evals, REGRESSION_GATE_LEVEL)
    if gate_needed > k:
        text += (f" The gate fails on a lone regression only at {regression_level_words()}, which among "
                 f"{n_evals} evals takes --trials {gate_needed}.")
    return {"trials": k, "n_evals": n_evals, "q": q, "smallest_p": p, "detectable": can,
            "max_evals": most, "trials_needed": needed, "gate_trials_needed": gate_needed, "text": text}


def build_comparison(cur: Side, prev: Side, q: float = Q, seed: int = 0) -> dict[str, Any]:
    """Everything comparison_previous.json holds, from the two iterations' records; pure."""
    skill_cfg, base_cfg = skill_and_baseline(cur)
    prev_skill, prev_base = skill_and_baseline(prev)
    changed_rows = changed_evals(cur.contents, prev.contents, {r.eval_id: r.eval_name for r in cur.records},
                                 {r.eval_id: r.eval_name for r in prev.records})
    suite_size = len({r.eval_id for r in cur.records})  # before a changed eval is set aside
    changed_ids = {r["eval_id"] for r in changed_rows}
    if changed_ids:  # a changed eval is reported, never compared (nor in the suite figures)
        cur = dataclasses.replace(cur, records=[r for r in cur.records if r.eval_id not in changed_ids])
        prev = dataclasses.replace(prev, records=[r for r in prev.records if r.eval_id not in changed_ids])
    prev_records = renamed(renamed(prev.records, prev_skill, skill_cfg), prev_base, base_cfg)
    main = compare_iterations(cur.records, prev_records, skill_cfg, q=q, seed=seed)
    add_trials_to_call(main, q)
    baseline = compare_iterations(cur.records, prev_records, base_cfg, q=q, seed=seed)
    moved = drifted(baseline)
    drift = {"configuration": base_cfg, "changed": moved, "level": DRIFT_LEVEL,
             "possible": [e for e in baseline["regressed"] + baseline["improved"]
                          + baseline["possible_regressions"] + baseline["possible_improvements"]
                          if e not in moved]}
    fp_cur, fp_prev = cur.record.get("fingerprint") or {}, prev.record.get("fingerprint") or {}
    changed = sorted(k for k in set(fp_cur) | set(fp_prev) if fp_cur.get(k) != fp_prev.get(k)) \
        if fp_cur and fp_prev else []
    result = {
        "schema_version": SCHEMA_VERSION,
        "kind": "iteration_comparison",
        "current": {"path": str(cur.path), "iteration": cur.number},
        "previous": {"path": str(prev.path), "iteration": prev.number},
        "changed": changed,
        "configuration": skill_cfg,
        "baseline_configuration": base_cfg,
        "q": q,
        "seed": seed,
        **{k: main[k] for k in ("per_eval", "raw_regressions", "raw_improvements", "regressed",
                                "possible_regressions", "improved", "possible_improvements",
                                "unmatched_evals", "suite")},
        "changed_evals": changed_rows,
        "baseline_drift": drift,
    }
    rows = main["per_eval"]
    k = max((min(r["before"]["completed"], r["after"]["completed"]) for r in rows), default=0)
    result["detection_limit"] = detection_limit(len(rows), k, q, suite_evals=suite_size)
    result["metrics"] = metric_deltas(cur, prev, main, skill_cfg, base_cfg)
    result["notes"] = comparison_notes(result, changed, drift)
    return result


