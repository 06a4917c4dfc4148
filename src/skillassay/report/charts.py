"""Charts drawn offline with matplotlib (Agg canvas, no pyplot global state, so threads of the
viewer's server can draw at once): SVG for the viewer's HTML, PNG for report.md.

benchmark.json is read as plain data and every optional section (statistics, comparison) is
looked up defensively: an older or foreign file still gets the charts its fields allow."""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

# matplotlib keeps its font cache and config in ~/.cache/matplotlib and ~/.config/matplotlib,
# read when it is imported: point it at our own cache folder first, so skillassay writes
# nothing of matplotlib's into the user's HOME (a MPLCONFIGDIR the user set is kept).
os.environ.setdefault("MPLCONFIGDIR", str(Path(platformdirs.user_cache_dir("skillassay")) / "matplotlib"))

from skillassay.store.jsonio import atomic_write_bytes, load_json_lenient  # noqa: E402 - after MPLCONFIGDIR
from skillassay.store.layout import own_folder  # noqa: E402 - after MPLCONFIGDIR

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib itself is imported by the functions that draw: ci_outputs and the viewer use this
# module's plain-data helpers, and `run` would otherwise pay its import (~0.7 s) for none.

MAX_EVALS_CHARTED = 40  # beyond this the bars are unreadable; tables still list every eval
SKILL_COLOR, BASE_COLOR = "#2b6cb0", "#a0aec0"
TREND_MIN_POINTS = 2


def load_benchmark(iteration_dir: Path) -> dict[str, Any]:
    data = load_json_lenient(iteration_dir / "benchmark.json")
    return data if isinstance(data, dict) else {}


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def as_interval(value: Any) -> list[float] | None:
    if isinstance(value, list) and len(value) == 2 and all(as_num(v) is not None for v in value):
        return [float(value[0]), float(value[1])]
    return None


def config_names(bench: dict[str, Any]) -> tuple[str, str]:
    st = as_dict(bench.get("statistics"))
    return str(st.get("skill_configuration") or "with_skill"), str(st.get("baseline_configuration") or "without_skill")


def per_eval_rows(bench: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per eval: pass rates of both arms and, when statistics has them, Wilson intervals."""
    skill, base = config_names(bench)
    stats_by_id = {str(as_dict(p).get("eval_id")): as_dict(as_dict(p).get("configurations"))
                   for p in as_list(as_dict(bench.get("statistics")).get("per_eval"))}
    rows = []
    for pe in as_list(bench.get("per_eval")):
        pe = as_dict(pe)
        cfgs = stats_by_id.get(str(pe.get("eval_id")), {})
        ws, bs = as_dict(pe.get("with_skill")), as_dict(pe.get("baseline"))
        rows.append({
            "eval_id": pe.get("eval_id"), "eval_name": pe.get("eval_name") or "",
            "skill": as_num(ws.get("pass_rate")), "skill_ci": as_interval(as_dict(cfgs.get(skill)).get("wilson")),
            "base": as_num(bs.get("pass_rate")), "base_ci": as_interval(as_dict(cfgs.get(base)).get("wilson")),
            "skill_trials": ws.get("trials_completed"), "base_trials": bs.get("trials_completed"),
            "trials": pe.get("trials"),
        })
    return rows


def iteration_number(path: Path) -> int | None:
    m = re.fullmatch(r"iteration-(\d+)", path.name)
    return int(m.group(1)) if m else None


def trend_points(iteration_dir: Path) -> list[dict[str, Any]]:
    """Every `iteration-*` sibling with a readable benchmark.json, oldest first."""
    return list(_trend_points(iteration_dir))


def _trend_points(iteration_dir: Path, known: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """trend_points one at a time; `known`: this iteration's benchmark as the caller holds it
    (not read again)."""
    here = iteration_dir.resolve()
    siblings = [p for p in here.parent.iterdir() if iteration_number(p) is not None and p.is_dir()]
    for path in sorted(siblings, key=lambda p: iteration_number(p) or 0):
        bench = known if known is not None and path == here else load_benchmark(path)
        summary = as_dict(bench.get("summary"))
        if not summary:
            continue
        ws, bs = as_dict(summary.get("with_skill")), as_dict(summary.get("baseline"))
        yield {"iteration": iteration_number(path), "skill_pass_rate": as_num(ws.get("pass_rate")),
               "base_pass_rate": as_num(bs.get("pass_rate")), "tokens": as_num(ws.get("avg_tokens")),
               "seconds": as_num(ws.get("avg_duration_seconds"))}


def has_trend(iteration_dir: Path, known: dict[str, Any] | None = None) -> bool:
    """Whether trend_chart draws: it stops reading siblings at the second point."""
    points = _trend_points(iteration_dir, known)
    return sum(1 for _ in zip(range(TREND_MIN_POINTS), points, strict=False)) >= TREND_MIN_POINTS


def _render(fig: Figure, fmt: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # svg.fonttype "path" (the default) draws labels as outlines: names the agent or the eval
    # author chose never reach the page as SVG text.
    fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    return buf.getvalue()


def _errors(values: list[float], intervals: list[list[float] | None]) -> list[list[float]]:
    lo = [max(0.0, v - iv[0]) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    hi = [max(0.0, iv[1] - v) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    return [lo, hi]


def charted_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evals the per-eval chart draws (none: no chart)."""
    return [r for r in rows if r["skill"] is not None or r["base"] is not None][:MAX_EVALS_CHARTED]


def per_eval_chart(rows: list[dict[str, Any]], fmt: str = "svg") -> bytes | None:
    """Grouped horizontal bars, with skill vs baseline, 95% Wilson error bars when known."""
    rows = charted_rows(rows)
    if not rows:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.2))
    ax = fig.add_subplot()
    ys = list(range(len(rows)))
    for offset, key, color, label in ((-0.2, "skill", SKILL_COLOR, "with skill"), (0.2, "base", BASE_COLOR, "baseline")):
        vals = [r[key] or 0.0 for r in rows]
        ax.barh([y + offset for y in ys], vals, height=0.38, color=color, label=label,
                xerr=_errors(vals, [r[f"{key}_ci"] for r in rows]), capsize=3, error_kw={"elinewidth": 1})
    ax.set_yticks(ys, [f"{r['eval_id']} {str(r['eval_name'])[:30]}" for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("pass rate (error bars: 95% interval)")
    ax.legend(loc="lower right", fontsize="small")
    return _render(fig, fmt)


def trend_chart(points: list[dict[str, Any]], fmt: str = "svg") -> bytes | None:
    """Pass rate, tokens and time across iterations; None with fewer than two points."""
    if len(points) < TREND_MIN_POINTS:
        return None
    return _render(trend_figure(points), fmt)


def trend_figure(points: list[dict[str, Any]]) -> Figure:
    """trend_chart's figure, drawn and not yet rendered."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 2.8))
    xs = [p["iteration"] for p in points]
    panels = (("pass rate", ("skill_pass_rate", "base_pass_rate")), ("avg tokens (with skill)", ("tokens",)),
              ("avg seconds (with skill)", ("seconds",)))
    for i, (title, keys) in enumerate(panels, start=1):
        ax = fig.add_subplot(1, 3, i)
        for key in keys:
            ys = [p[key] if p[key] is not None else float("nan") for p in points]
            color = BASE_COLOR if key == "base_pass_rate" else SKILL_COLOR
            ax.plot(xs, ys, marker="o", color=color, label="baseline" if key == "base_pass_rate" else "with skill")
        ax.set_title(title, fontsize="medium")
        ax.set_xticks(xs)
        ax.set_xlabel("iteration")
        if len(keys) > 1:
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize="x-small")
        else:  # from zero, so a 1% change does not draw as a climb; up to the data, or 1 without any
            top = max((p[keys[0]] for p in points if p[keys[0]] is not None and math.isfinite(p[keys[0]])), default=0.0)
            ax.set_ylim(0, top * 1.1 if top > 0 else 1.0)
    fig.tight_layout()
    return fig


def report_chart_names(iteration_dir: Path, data: dict[str, Any]) -> list[str]:
    """The PNGs write_report_charts(iteration_dir, data) writes, found from plain data without
    drawing (no matplotlib): `run` links them in report.md while a background child draws."""
    names = ["pass_rate.png"] if charted_rows(per_eval_rows(data)) else []
    return names + (["trend.png"] if has_trend(iteration_dir, data) else [])


def write_report_charts(iteration_dir: Path, data: dict[str, Any] | None = None) -> list[Path]:
    """PNGs under <iteration>/charts/ for report.md to link; only charts with data are written,
    each atomically (a background drawing may be read, or killed, half-way)."""
    out_dir = iteration_dir / "charts"
    written = []
    bench = data if data is not None else load_benchmark(iteration_dir)
    charts = {"pass_rate.png": lambda: per_eval_chart(per_eval_rows(bench), "png"),
              "trend.png": lambda: trend_chart(trend_points(iteration_dir), "png")}
    for name, draw in charts.items():
        if (png := draw()) is None:
            continue
        path = own_folder(out_dir) / name
        atomic_write_bytes(path, png)
        written.append(path)
    return written
