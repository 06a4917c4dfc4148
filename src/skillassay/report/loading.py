"""report.md's "Skill loaded or not" section: the with-skill arm split by whether the agent
loaded the skill (benchmark.json `trigger_conditioned`, see analyze.triggered), in sentences
that keep the split's two limits in view: it is observational, and unknown is not "not loaded"."""

from __future__ import annotations

from typing import Any

from skillassay.models import Benchmark
from skillassay.report.formatting import cell, fmt, of, signed, signed_interval
from skillassay.wording import pct

CAVEAT = ("This split is observational: the agent chose when to load the skill, so the trials that loaded it "
          "may differ from the others in other ways (how the prompt read, how the agent started); a gap between "
          "the groups is a lead, not the skill's causal effect. The randomised comparison is with skill vs "
          "baseline, above.")


def _ci(iv: list | None) -> str:
    """Nothing for anything but two bounds (a damaged benchmark.json's one-bound list included)."""
    return f", CI {fmt(iv[0], 'pct')}–{fmt(iv[1], 'pct')}" if isinstance(iv, list) and len(iv) == 2 and None not in iv else ""


def group_text(g: dict[str, Any]) -> str:
    """'3/4 (75%, CI 30%–95%)', or '-' for a group with no graded trial."""
    if not g.get("trials"):
        return "-"
    return f"{of(g.get('passes'), g['trials'])} ({fmt(g.get('pass_rate'), 'pct')}{_ci(g.get('wilson'))})"


def load_text(row: dict[str, Any]) -> str:
    iv = row.get("load_rate_wilson")
    if row.get("load_rate") is None:
        return "unknown"
    loaded, known = row["loaded_trials"], row["known_trials"]
    share = f"{fmt(row['load_rate'], 'pct')}{_ci(iv)}"
    flag = ", never loaded" if row["load_rate"] == 0 else ", rarely loaded" if row.get("rarely_loaded") else ""
    return f"{loaded} of {known} ({share}{flag})"


def rows(split: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for r in split.get("per_eval") or []:
        out.append({"eval": cell(f"eval-{r['eval_id']} ({r['eval_name']})" if r.get("eval_name")
                                 else f"eval-{r['eval_id']}"),
                    "load": load_text(r), "loaded": group_text(r["loaded"]),
                    "not_loaded": group_text(r["not_loaded"]), "unknown": group_text(r["unknown"]),
                    "baseline": fmt(r.get("baseline_pass_rate"), "pct")})
    return out


def _pooled_text(g: dict[str, Any]) -> str:
    iv = g.get("interval")
    where = (f"95% CI {fmt(iv[0], 'pct')} to {fmt(iv[1], 'pct')}, clustered by eval" if iv
             else "no interval with fewer than 2 evals")
    return f"{fmt(g.get('pass_rate'), 'pct')} of trials passed ({of(g.get('passes'), g.get('trials'))} over {g['n_evals']} evals; {where})"


def sentences(split: dict[str, Any]) -> list[str]:
    o = split["overall"]
    loaded, not_loaded, unknown = o["loaded"], o["not_loaded"], o.get("unknown_trials") or 0
    known = loaded["trials"] + not_loaded["trials"]
    out = []
    if not known:
        return [f"The executor did not report whether the agent loaded the skill in any of the {unknown} graded "
                "with-skill trials (unknown, not \"not loaded\"), so the pass rate cannot be split by it."]
    iv = o.get("load_rate_interval")
    out.append(f"The agent loaded the skill in {fmt(o.get('load_rate'), 'pct')} of the with-skill trials whose loading "
               "is known" + (f" (95% CI {fmt(iv[0], 'pct')} to {fmt(iv[1], 'pct')}, clustered by eval)" if iv else "")
               + ".")
    if unknown:
        out.append(f"{unknown} graded with-skill trials did not say whether the skill was loaded: they are counted "
                   "as unknown, in neither group.")
    if loaded["trials"]:
        out.append(f"When the skill was loaded, {_pooled_text(loaded)}.")
    if not_loaded["trials"]:
        out.append(f"When it was not loaded, {_pooled_text(not_loaded)}.")
    w = o.get("within_eval_difference")
    if w:
        out.append(f"Comparing trials of the same prompt (which takes eval difficulty out of the gap), on the "
                   f"{w['n_evals']} eval(s) with both loaded and not-loaded trials, loaded minus not loaded is "
                   f"{signed(w.get('mean'), 'pts')}" + (signed_interval(w.get("interval"), "pts") or
                                                        " (no interval with fewer than 2 evals)") + ".")
    rare = [r for r in split.get("per_eval") or [] if r.get("rarely_loaded")]
    if rare:
        out.append(f"{len(rare)} eval(s) loaded the skill in fewer than {pct(split['rarely_loaded_below'])} of their "
                   "with-skill trials (flagged below): their with-skill result mostly measures the agent without the "
                   "skill, so it cannot say whether the skill's content helps.")
    out.append(CAVEAT)
    return out


def recommendations(split: dict[str, Any] | None) -> list[str]:
    rare = [r for r in (split or {}).get("per_eval") or [] if r.get("rarely_loaded")]
    if not rare:
        return []
    names = ", ".join(f"eval-{r['eval_id']}" for r in rare)
    return [f"The skill was seldom loaded on {names}: before reading their with-skill results as the skill's value, "
            "make its description trigger on these prompts (name the task and its words in the description), "
            "then run again."]


def loading_context(bench: Benchmark) -> dict[str, Any] | None:
    split = bench.trigger_conditioned
    if split is None:
        return None
    data = split.model_dump(mode="json")
    known = data["overall"]["loaded"]["trials"] + data["overall"]["not_loaded"]["trials"]
    # With no trial known either way a per-eval table would be a column of "unknown": one sentence says it.
    return {"rows": rows(data) if known else [], "sentences": sentences(data),
            "recommendations": recommendations(data)}
