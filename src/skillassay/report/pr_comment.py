"""`report ITERATION --format pr-comment`: the Markdown a CI job posts on a pull request.

One comment a reviewer reads top-down: the verdict first, then the skill's effect with its
interval, what changed against the base branch's iteration (regressions named), cost when the
runs recorded one, and the per-eval table collapsed. GitHub refuses a comment over 65,536
characters, so the table is cut (and the rest linked) before the limit is reached, whatever the
number of evals or the length of their names. Eval names, threshold lines and anything else
that came from users or agents are escaped (GitHub renders raw HTML in comments) and the whole
text goes through the redactor, as every file skillassay writes does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillassay.analyze.gate import GateResult
from skillassay.models import Benchmark
from skillassay.report.benchmark_md import environment
from skillassay.report.charts import as_dict, as_interval, as_list, as_num, config_names
from skillassay.report.ci_outputs import STATUS_ICON, VERDICT_ICON, eval_facts, eval_verdict, md_cell
from skillassay.report.formatting import fmt_interval, named_interval, signed, signed_interval
from skillassay.store.redact import disk_redactor
from skillassay.wording import improvement_text, pct

GITHUB_LIMIT = 65_536  # characters GitHub accepts in one issue or pull-request comment
BUDGET = 60_000  # what the comment may use: the cut note and the footer fit in the rest
MARKER_PREFIX = "<!-- skillassay:pr-comment:"  # + the skill's name + " -->": how the Action finds its comment
MAX_NAME = 60  # characters of an eval name shown (names come from users)
MAX_LINE = 400  # characters of a threshold line shown
MAX_LISTED = 15  # evals named in a regressions/improvements line before "and N more"


@dataclass(frozen=True)
class CommentInputs:
    benchmark: Benchmark
    gate: GateResult
    comparison: dict[str, Any] | None  # against the base branch's iteration, when there is one
    head_sha: str | None = None
    link: str | None = None  # where the full report, transcripts and review page are (the run's artifacts)
    warn_only: bool = False  # the job does not fail on this verdict: the comment says so


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _counts(text: Any) -> str:
    return md_cell(str(text or "").replace("->", "→"))


def _name(eval_id: Any, name: Any) -> str:
    return md_cell(_clip(f"eval-{eval_id} ({name})" if name else f"eval-{eval_id}", MAX_NAME))


def effect(raw: dict[str, Any]) -> dict[str, str] | None:
    """The skill's effect: pass-rate difference (with minus without) and improvement ratio, each with its interval."""
    paired = as_dict(as_dict(raw.get("statistics")).get("paired"))
    diff = as_dict(paired.get("pass_rate_difference"))
    summary = as_dict(raw.get("summary"))
    skill_rate = as_num(as_dict(summary.get("with_skill")).get("pass_rate"))
    base_rate = as_num(as_dict(summary.get("baseline")).get("pass_rate"))
    if skill_rate is None and base_rate is None:
        return None
    ratio = as_dict(paired.get("improvement_ratio"))
    ratio_iv = ratio.get("interval") if isinstance(ratio.get("interval"), list) else None
    return {"skill": pct(skill_rate), "baseline": pct(base_rate),
            "difference": signed(as_num(diff.get("mean")), "pts") if diff.get("mean") is not None else "n/a",
            "difference_interval": named_interval(signed_interval(as_interval(diff.get("interval")), "pts"), diff),
            "ratio": improvement_text(as_num(summary.get("improvement_ratio")), base_rate, skill_rate),
            "ratio_interval": named_interval(fmt_interval(ratio_iv, "ratio"), ratio)}


def _listed(rows: list[dict[str, Any]], ids: list[Any]) -> str:
    by_id = {r.get("eval_id"): r for r in rows}
    named = [f"{_name(i, by_id.get(i, {}).get('eval_name'))} {_counts(by_id.get(i, {}).get('counts'))}".strip()
             for i in ids[:MAX_LISTED]]
    more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return ", ".join(named) + more


def against_base(comparison: dict[str, Any] | None) -> dict[str, Any] | None:
    if not comparison:
        return None
    rows = [as_dict(r) for r in as_list(comparison.get("per_eval"))]
    metric = as_dict(as_dict(comparison.get("metrics")).get("pass_rate"))
    previous = as_dict(comparison.get("previous"))
    groups = [(label, as_list(comparison.get(key))) for label, key in
              (("Regressed", "regressed"), ("Possible regressions", "possible_regressions"),
               ("Improved", "improved"), ("Possible improvements", "possible_improvements"))]
    return {"iteration": previous.get("iteration"), "changed": md_cell(", ".join(map(str, as_list(comparison.get("changed"))))),
            "before": pct(as_num(metric.get("previous"))), "after": pct(as_num(metric.get("current"))),
            "delta": signed(as_num(metric.get("delta")), "pts") if metric.get("delta") is not None else "n/a",
            "delta_interval": signed_interval(as_interval(metric.get("interval")), "pts"),
            "groups": [(label, _listed(rows, ids)) for label, ids in groups if ids],
            "regressed": len(as_list(comparison.get("regressed")))}


def run_costs(raw: dict[str, Any]) -> dict[str, list[float]]:
    """Each arm's recorded per-run `cost_usd` figures (in runs[].result, or on the run)."""
    totals: dict[str, list[float]] = {}
    for run in as_list(raw.get("runs")):
        value = as_num(as_dict(as_dict(run).get("result")).get("cost_usd"))
        if value is None:
            value = as_num(as_dict(run).get("cost_usd"))
        if value is not None:
            totals.setdefault(str(as_dict(run).get("configuration")), []).append(value)
    return totals


def total_cost(raw: dict[str, Any]) -> float | None:
    section = as_dict(as_dict(raw.get("cost")).get("configurations"))
    totals = [as_num(as_dict(arm).get("total_usd")) for arm in section.values() if as_dict(arm).get("trials_priced") != 0]
    if any(t is not None for t in totals):
        return sum(t for t in totals if t is not None)
    costs = [v for values in run_costs(raw).values() for v in values]
    return sum(costs) if costs else None


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:.4f}"


def _usd_interval(iv: Any) -> str:
    bounds = as_interval(iv)
    return f" (95% CI {_usd(bounds[0])} to {_usd(bounds[1])})" if bounds else ""


def cost_section_lines(raw: dict[str, Any]) -> list[str]:
    """From benchmark.json's `cost` section (analyze/cost.py): each arm's total and mean per trial
    with its interval, and the skill's cost effect per trial."""
    section = as_dict(raw.get("cost"))
    skill_cfg, base_cfg = config_names(raw)
    lines = []
    for cfg, label in ((skill_cfg, "with skill"), (base_cfg, "baseline")):
        arm = as_dict(as_dict(section.get("configurations")).get(cfg))
        if as_num(arm.get("total_usd")) is None or arm.get("trials_priced") == 0:  # nothing priced: no figure
            continue
        bound = " at least" if arm.get("total_is_lower_bound") else ""
        lines.append(f"{label}:{bound} {_usd(as_num(arm.get('total_usd')))} in all, "
                     f"{_usd(as_num(arm.get('mean_per_trial_usd')))} per trial"
                     f"{_usd_interval(arm.get('mean_per_trial_interval'))}")
    effect = as_dict(section.get("effect"))
    if lines and as_num(effect.get("mean_difference_usd")) is not None:
        diff = as_num(effect.get("mean_difference_usd")) or 0.0
        lines.append(f"the skill {'adds' if diff >= 0 else 'saves'} {_usd(abs(diff))} per trial"
                     f"{_usd_interval(effect.get('interval'))}")
    return lines


def cost(raw: dict[str, Any]) -> list[str]:
    """Cost lines: benchmark.json's `cost` section when it has one, else the runs' own `cost_usd`
    figures summed per arm, else an arm summary's cost fields. Nothing when no cost was recorded."""
    if section_lines := cost_section_lines(raw):
        return section_lines
    skill_cfg, base_cfg = config_names(raw)
    totals = run_costs(raw)
    lines = [f"{'with skill' if cfg == skill_cfg else 'baseline' if cfg == base_cfg else md_cell(cfg)}: "
             f"${sum(v):.4f} over {len(v)} trials (${sum(v) / len(v):.4f} per trial)"
             for cfg, v in sorted(totals.items(), key=lambda kv: kv[0] != skill_cfg)]
    if lines:
        return lines
    summary = as_dict(raw.get("summary"))
    for arm, label in (("with_skill", "with skill"), ("baseline", "baseline")):
        for key, value in as_dict(summary.get(arm)).items():
            if "cost" in key and as_num(value) is not None:
                lines.append(f"{label}: {md_cell(key)} ${as_num(value):.4f}")
    return lines


def eval_rows(bench: Benchmark, gate: GateResult, comparison: dict[str, Any] | None) -> list[str]:
    before = {str(as_dict(r).get("eval_id")): as_dict(r).get("counts") for r in
              as_list((comparison or {}).get("per_eval"))}
    rows = []
    order = {"FAIL": 0, "WARN": 1, "PASS": 2}  # what needs a look first; eval order within each
    facts = sorted(eval_facts(bench, comparison), key=lambda f: order[eval_verdict(f, gate)[0]])
    for f in facts:
        verdict, _ = eval_verdict(f, gate)
        cells = [_arm(f["arms"]["with_skill"]), _arm(f["arms"]["baseline"])]
        base = _counts(f"{before[f['eval_id']]} ({f['label']})") if f["eval_id"] in before else "-"
        rows.append(f"| {VERDICT_ICON[verdict]} | {md_cell(_clip(f['name'], MAX_NAME))} | {cells[0]} | {cells[1]} | {base} |")
    return rows


def _arm(arm: dict[str, Any]) -> str:
    if arm.get("pass_rate") is None:
        return "no graded trial"
    return f"{arm['passes']}/{arm['completed']} ({pct(arm['pass_rate'])})"


def render_pr_comment(inputs: CommentInputs) -> str:
    """The comment, under GitHub's limit, masked by the redactor."""
    bench, gate = inputs.benchmark, inputs.gate
    raw = bench.model_dump(mode="json", by_alias=True)
    rows = eval_rows(bench, gate, inputs.comparison)
    context = {
        "marker": marker(bench.skill_name or ""), "icon": STATUS_ICON.get(gate.status, ""), "status": gate.status,
        "headline": md_cell(_clip(gate.headline(), 2 * MAX_LINE)) if gate.headline() != gate.status else "",
        "skill": md_cell(_clip(bench.skill_name or "skill", MAX_NAME)), "iteration": bench.iteration,
        "sha": inputs.head_sha[:12] if inputs.head_sha and re.fullmatch(r"[0-9a-fA-F]{7,64}", inputs.head_sha) else None, "warn_only": inputs.warn_only,
        "exit_code": gate.exit_code,
        "undecided": [f"{md_cell(t.key)} {t.status}" for t in gate.thresholds if t.status in ("FAIL", "INCONCLUSIVE")], "effect": effect(raw), "base": against_base(inputs.comparison),
        "cost": cost(raw), "n_evals": len(rows), "link": _safe_link(inputs.link),
        "thresholds": [f"{STATUS_ICON.get(t.status, '')} {_counts(_clip(t.line(), MAX_LINE))}" for t in gate.thresholds],
    }
    template = environment().overlay(trim_blocks=True, lstrip_blocks=True).get_template("pr_comment.md.j2")
    text = template.render(**context, rows=rows, cut=0)
    kept = len(rows)
    while len(text) > BUDGET and kept > 0:  # cut the table (the longest part), never the verdict
        kept = max(0, kept - max(1, (len(text) - BUDGET) // 80))
        text = template.render(**context, rows=rows[:kept], cut=len(rows) - kept)
    return disk_redactor().text(text)[:GITHUB_LIMIT]


def marker(skill_name: str) -> str:
    """The first line of the comment: one sticky comment per skill on a pull request."""
    return f"{MARKER_PREFIX}{re.sub(r'[^A-Za-z0-9._-]', '-', skill_name)[:80]} -->"


def _safe_link(link: str | None) -> str | None:
    """Only an http(s) address without spaces or brackets becomes a link (it is put in markdown as is)."""
    if not link or not link.startswith(("https://", "http://")) or any(c in link for c in " ()<>[]\n\"'"):
        return None
    return link

