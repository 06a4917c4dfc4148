"""The top of a matrix iteration's report.md (issue 37): the verdict sentence first, then one row
per agent (with, without, effect [interval], cost, tokens, duration, verdict), the per-agent
effects chart, whether the effect differs between agents, and the pooled effect when they agree.
The per-agent sections below it are each agent's own report. Agent names and models come from
the user's config: every one is escaped for markdown and HTML (report.ci_outputs.md_cell)."""

from __future__ import annotations

from pathlib import Path

from skillassay.analyze.cost import usd
from skillassay.models.matrix import AgentSummary, MatrixSummary
from skillassay.report.ci_outputs import md_cell
from skillassay.report.formatting import fmt
from skillassay.wording import pct
from skillassay.wording import points_text as _pts

MATRIX_CHART = "matrix_effects.png"


def _effect_cell(a: AgentSummary) -> str:
    if a.effect is None:
        return "n/a"
    iv = a.effect_interval
    if not iv or None in iv:
        return _pts(a.effect)
    return f"{_pts(a.effect)} [{_pts(iv[0])}, {_pts(iv[1])}]"


def _agent_label(a: AgentSummary) -> str:
    model = f" ({a.model})" if a.model else ""
    extra = "" if a.required else " (not required)"
    return md_cell(f"{a.name}: {a.executor}{model}{extra}")


def agent_rows(summary: MatrixSummary) -> list[str]:
    """The agents table, markdown."""
    lines = ["| Agent | With skill | Without | Effect [95% CI] | Cost/trial | Tokens/trial | Duration/trial | Verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for a in summary.agents:
        cost = "n/a" if a.cost_usd is None else usd(a.cost_usd)
        lines.append(" | ".join(["", _agent_label(a), pct(a.with_skill_pass_rate), pct(a.baseline_pass_rate),
                                 _effect_cell(a), cost, fmt(a.tokens, "int"), fmt(a.duration_seconds, "sec"),
                                 f"**{a.verdict}**", ""]).strip())
    return lines


def _reasons(summary: MatrixSummary) -> list[str]:
    out = []
    for a in summary.agents:
        if a.verdict in ("PASS", "NOT GATED") and a.required:
            continue
        for r in a.reasons:
            out.append(f"- {md_cell(a.name)}: {md_cell(r)}")
    return out


def _heterogeneity(summary: MatrixSummary) -> list[str]:
    h = summary.heterogeneity
    lines = ["### Does the effect differ between agents?", "", md_cell(h.explanation[:1].upper() + h.explanation[1:]) + "."]
    if h.p_value is not None:
        how = "every permutation" if h.exact else f"{h.permutations:,} seeded permutations"
        lines += ["", f"Test: {h.method}, over {h.n_evals} evals ({h.n_informative} where the agents' effects differ), "
                      f"{how}."]
    if h.evals_excluded:
        lines += ["", "Left out: " + md_cell("; ".join(h.evals_excluded)) + "."]
    if h.pairs and h.called:
        lines += ["", "| Agents | Difference of effects | p | p (Holm) | Differ? |", "|---|---|---|---|---|"]
        for p in h.pairs:
            lines.append(f"| {md_cell(' vs '.join(p.agents))} | {_pts(p.difference)} | {_p(p.p_value)} | "
                         f"{_p(p.p_adjusted)} | {'yes' if p.differs else 'no'} |")
    pooled = summary.pooled
    lines += [""]
    if pooled.effect is not None:
        iv = pooled.interval
        ci = "" if not iv or None in iv else f" (95% CI {_pts(iv[0])} to {_pts(iv[1])}, {pooled.reading})"
        lines.append(f"Pooled effect over {md_cell(', '.join(pooled.agents))}: {_pts(pooled.effect)}{ci}; "
                     f"{md_cell(pooled.reason)}.")
    else:
        lines.append(f"No pooled effect: {md_cell(pooled.reason.removeprefix('not pooled: '))}.")
    return lines


def _p(p: float | None) -> str:
    return "n/a" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3g}")


def _family_words(summary: MatrixSummary) -> str:
    f = summary.family
    if f is None:
        return "No threshold is gated on a required agent."
    return (f"Each agent's verdict is after holding the FAIL calls of every required agent's thresholds to a "
            f"family-wise {f.family_alpha:g} ({f.checks} checks, Holm's step-down; one check alone at "
            f"{f.per_check_cap:g}), so an agent's verdict here can be INCONCLUSIVE where its own benchmark.md "
            "says FAIL. A PASS needs every check of every required agent to pass.")


def render_matrix_md(summary: MatrixSummary, chart_path: str | None = None) -> str:
    """The matrix part of report.md, verdict first. `chart_path`: the effects chart relative to
    report.md (charts/matrix_effects.png), linked when given."""
    lines = [f"**Matrix verdict: {md_cell(summary.message)}**", ""]
    lines += agent_rows(summary)
    lines += ["", "Effect: with-skill minus baseline pass rate, mean over evals; its 95% interval is about "
                  f"{summary.agents[0].effect_reading if summary.agents else 'evals like these'} (the sign-flip "
                  "test inverted, from each agent's benchmark.json). " + _family_words(summary)]
    reasons = _reasons(summary)
    if reasons:
        lines += ["", *reasons]
    if chart_path:
        lines += ["", f"![The skill's effect per agent, with 95% intervals]({chart_path})"]
    lines += ["", *_heterogeneity(summary)]
    return "\n".join(lines) + "\n"


def _finite(iv: list[float | None] | None) -> tuple[float, float] | None:
    if not iv or iv[0] is None or iv[1] is None:
        return None
    return iv[0], iv[1]


def matrix_effects_chart(summary: MatrixSummary, fmt_: str = "png") -> bytes | None:
    """One row per agent: the effect as a point with its 95% interval, the pooled effect as a
    band when there is one, zero marked. None when no agent has an effect."""
    rows = [a for a in summary.agents if a.effect is not None]
    if not rows:
        return None
    from matplotlib.figure import Figure

    from skillassay.report.charts import BASE_COLOR, SKILL_COLOR, _render

    fig = Figure(figsize=(7, 0.5 * len(rows) + 1.4))
    ax = fig.add_subplot()
    ys = list(range(len(rows)))
    for y, a in zip(ys, rows, strict=True):
        iv = _finite(a.effect_interval)
        color = "#c53030" if a.verdict == "FAIL" else SKILL_COLOR
        if iv is not None:
            ax.plot([iv[0], iv[1]], [y, y], color=color, linewidth=2)
        ax.plot([a.effect or 0.0], [y], "o", color=color)
    pooled = summary.pooled
    if pooled.effect is not None and (piv := _finite(pooled.interval)) is not None:
        ax.axvspan(piv[0], piv[1], color=BASE_COLOR, alpha=0.3, label="pooled 95% interval")
        ax.legend(loc="lower right", fontsize="small")
    ax.axvline(0, color="#4a5568", linewidth=1, linestyle="--")
    # Names come from the config: matplotlib draws them as paths (charts._render), never as SVG text.
    ax.set_yticks(ys, [f"{a.name[:30]}" + (" (not required)" if not a.required else "") for a in rows])
    ax.invert_yaxis()
    ax.set_xlim(-1, 1)
    ax.set_xlabel("skill effect on the pass rate (with - without), 95% interval")
    return _render(fig, fmt_)


def write_matrix_chart(iteration_dir: Path, summary: MatrixSummary) -> Path | None:
    """charts/matrix_effects.png under the iteration, written atomically; None when no agent
    has an effect to draw."""
    from skillassay.store.jsonio import atomic_write_bytes
    from skillassay.store.layout import own_folder

    png = matrix_effects_chart(summary, "png")
    if png is None:
        return None
    path = own_folder(iteration_dir / "charts") / MATRIX_CHART
    atomic_write_bytes(path, png)
    return path
