"""triggers.md: the trigger figures for a reader. Queries and error texts are the user's and the
agent's words: they are put in table cells with `|` and newlines neutralised, and in code spans
where they could be mistaken for markup."""

from __future__ import annotations

from skillassay.models.triggers import QueryResult, Rate, TriggerReport
from skillassay.wording import pct


def md_cell(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    flat = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def fmt_rate(rate: Rate) -> str:
    if rate.value is None:
        return "n/a (nothing measured)"
    ci = f" (95% CI {pct(rate.interval[0])}..{pct(rate.interval[1])})" if rate.interval else ""
    return f"{pct(rate.value)}{ci}, {rate.numerator}/{rate.denominator} runs"


def _query_row(q: QueryResult) -> str:
    r = q.trigger_rate
    rate = "n/a" if r.value is None else f"{r.numerator}/{r.denominator}"
    ci = f"{r.interval[0]:.2f}..{r.interval[1]:.2f}" if r.interval else "-"
    others = ", ".join(f"{n} ×{c}" for n, c in q.other_skills_fired.items()) or "-"
    failed = sum(1 for run in q.runs if run.triggered is None)
    return (f"| {q.index} | {md_cell(q.query)} | {'yes' if q.should_trigger else 'no'} | {rate} | {ci} | "
            f"{q.outcome.replace('_', ' ')} | {md_cell(others)} | {failed or ''} |")


def render_triggers_md(report: TriggerReport) -> str:
    ex = report.executor
    lines = [f"# Trigger evals: {report.skill_name}", "",
             f"Executor `{ex.get('executor')}` (model {ex.get('model') or 'default'}), {report.runs_per_query} run(s) "
             f"per query, seed {report.seed}; {len(report.queries)} queries; "
             f"{report.runs_completed} runs completed, {report.runs_failed} failed (left out of every rate)."]
    if report.other_skills:
        lines.append(f"Installed beside it: {', '.join(f'`{md_cell(n)}`' for n in report.other_skills)}.")
    lines += ["", f"Description measured: {md_cell(report.description, 1100)}", "",
              "| figure | value |", "|---|---|",
              f"| recall (should trigger, fired) | {fmt_rate(report.recall)} |",
              f"| false-trigger rate (should not, fired) | {fmt_rate(report.false_trigger_rate)} |",
              f"| precision | {fmt_rate(report.precision)} |",
              f"| accuracy | {fmt_rate(report.accuracy)} |", "",
              "Intervals: runs of one query are one cluster; each interval is the wider of the query-clustered "
              "one and Wilson's over the runs. A query is a miss when it should trigger and fired in under half "
              "its runs, a false trigger when it should not and fired in half or more.", ""]
    if report.gate is not None:
        lines += [f"Gate: **{report.gate.headline}**", ""]
        lines += [f"- {t['status']}: {t['key']} {format(t['value'], '.3g') if t['value'] is not None else 'n/a'}"
                  f" (95% CI {t['interval'][0]:.3g}..{t['interval'][1]:.3g}), needs {t['threshold']:g}"
                  if t.get("interval") else f"- {t['status']}: {t['key']}, needs {t['threshold']:g}. {t.get('advice', '')}"
                  for t in report.gate.thresholds]
        lines.append("")
    by_index = {q.index: q for q in report.queries}
    for title, idx in (("Misses (should have triggered)", report.misses),
                       ("False triggers (should not have)", report.false_triggers)):
        lines.append(f"## {title}: {len(idx)}")
        lines += [f"- [{i}] {md_cell(by_index[i].query, 300)} — fired {by_index[i].trigger_rate.numerator}/"
                  f"{by_index[i].trigger_rate.denominator}"
                  + (f"; instead: {', '.join(f'{n} ×{c}' for n, c in by_index[i].other_skills_fired.items())}"
                     if by_index[i].other_skills_fired else "")
                  for i in idx] or ["- none"]
        lines.append("")
    if report.other_skills:
        lines.append("## Shadowing: other skills loaded on should-trigger runs where this one was not")
        lines += [f"- {md_cell(n)}: {c} run(s)" for n, c in report.shadowed_by.items()] or ["- none"]
        lines.append("")
    lines += ["## Per query", "",
              "| # | query | should trigger | fired | 95% CI (Wilson) | outcome | other skills loaded | failed runs |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [_query_row(q) for q in report.queries]
    return "\n".join(lines) + "\n"


__all__ = ["fmt_rate", "md_cell", "render_triggers_md"]
