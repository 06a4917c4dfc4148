"""`skillassay report` and the report `run` writes: read the iteration's files (benchmark.json,
comparison_previous.json, the config, iteration.json), evaluate the gate when the caller has
not, draw the charts, and write report.md. The sentences are report/report.py's pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillassay.analyze.compare import FILENAME as COMPARISON
from skillassay.analyze.gate import GateResult, evaluate
from skillassay.analyze.rate_intervals import reading_phrase
from skillassay.errors import InputError
from skillassay.models import Benchmark, Thresholds
from skillassay.report.judge_note import judge_warnings
from skillassay.report.loading import loading_context
from skillassay.report.report import (
    FILENAME,
    adaptive_section,
    certainty_notes,
    change_rows,
    design_limits,
    details,
    named_rows,
    per_eval_rows,
    possible_regression_rows,
    recommendations,
    render_report,
    summary_rows,
    variance_rows,
    with_loading,
)
from skillassay.store.iteration_files import find_config, load_comparison, load_config
from skillassay.store.jsonio import atomic_write_text, parse_model, read_json
from skillassay.workflows.compare_on_disk import compare
from skillassay.workflows.gate_iteration import for_thresholds, not_measured

if TYPE_CHECKING:
    from skillassay.report.report_charts import ChartDrawer


def draw_charts(iteration_dir: Path, data: dict[str, Any] | None = None,
                drawer: ChartDrawer | None = None) -> tuple[list[str], str | None]:
    """PNG paths relative to the iteration, when the charts module is installed and can draw;
    a chart that fails to draw costs the report a picture, not the run. `drawer`: the chart
    process the caller started early (`run`: see report/report_charts.py), else a new one."""
    from skillassay.report.report_charts import draw_report_charts

    try:
        drawn = (drawer.draw if drawer is not None else draw_report_charts)(iteration_dir, data)
        return [str(p.relative_to(iteration_dir)) for p in drawn], None
    except Exception as exc:  # noqa: BLE001 - a drawing failure must not lose the report
        return [], f"charts could not be drawn: {type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Gated:
    """The gate a caller has just evaluated (run) and the thresholds it evaluated, on the very
    benchmark it passes: the report shows that verdict instead of evaluating the same gate a
    second time (which also meant re-reading the config and scanning every installed package's
    entry points to find the executor again)."""

    result: GateResult
    thresholds: Thresholds


def build_context(iteration_dir: Path, config: Path | None = None, *, strict: bool = False,
                  point_estimate: bool = False, charts: bool = True, bench: Benchmark | None = None,
                  drawer: ChartDrawer | None = None, gated: Gated | None = None) -> dict[str, Any]:
    """`bench`: the benchmark in memory when the caller has it (run), instead of re-reading a
    file whose runs[] can be hundreds of megabytes. `drawer`: see draw_charts.
    `gated`: the gate the caller evaluated on `bench` (which must then be given), with its
    thresholds; its benchmark was aggregated for them, so there is nothing to recompute."""
    path = iteration_dir / "benchmark.json"
    cfg = find_config(iteration_dir, config)
    comparison = load_comparison(iteration_dir)
    if gated is not None:
        assert bench is not None, "a gate evaluated by the caller is a gate on the caller's benchmark"
        thresholds, gate = gated.thresholds, gated.result
    else:
        thresholds = load_config(cfg).thresholds
        if bench is None:
            bench = parse_model(read_json(path), Benchmark, path)
        bench = for_thresholds(bench, thresholds, iteration_dir)
        executor, unmeasurable = not_measured(iteration_dir, thresholds)
        gate = evaluate(bench, thresholds, strict=strict, point_estimate=point_estimate, comparison=comparison,
                        not_measured=unmeasurable, executor=executor)
    st = named_rows(bench.statistics or {})
    chart_data = bench.model_dump(mode="json", exclude={"runs"})
    chart_paths, chart_error = draw_charts(iteration_dir, chart_data, drawer) if charts else ([], None)
    validity = st.get("validity") or []
    loading = loading_context(bench)
    return {
        "skill": bench.skill_name or (bench.metadata.skill_name if bench.metadata else "skill"),
        "iteration": bench.iteration,
        "previous": (comparison or {}).get("previous", {}).get("iteration"),
        "comparison": comparison,
        "gate": gate,
        "invalid": gate.problems,  # measurement_problems: the same reasons as the console's
        "warnings": [*(f for f in validity if not f.startswith("measurement invalid")), *judge_warnings(iteration_dir)],
        "summary": summary_rows(bench, st, comparison, gate, thresholds.model_dump()),
        "cost": bench.cost,
        "turns": bench.turns,  # a multi-turn eval set's per-turn table (None: one prompt each)
        "reading": reading_phrase(st.get("interval_reading")),
        "certainty": certainty_notes(bench, st, gate, comparison),
        "regressions": change_rows(comparison, worse=True, called_only=True),
        "possible_regressions": possible_regression_rows(comparison),
        "limits": design_limits(st, comparison),
        "improvements": change_rows(comparison, worse=False),
        "per_eval": per_eval_rows(st, comparison),
        "variance": variance_rows(st),
        "recommendations": with_loading(recommendations(st, gate, comparison), gate, loading),
        "loading": loading,
        "adaptive": adaptive_section(bench.adaptive),
        "details": details(st, comparison),
        "charts": chart_paths,
        "chart_error": chart_error,
        "config_path": str(cfg) if cfg else None,
        "trials": st.get("trials_requested"),
        "sandbox": sandbox_line(iteration_dir),
    }


def sandbox_line(iteration_dir: Path) -> str | None:
    """Where the trials ran, as iteration.json recorded it (None: an iteration from before
    sandboxes, or one run elsewhere). Unconfined is said in words, never left implicit."""
    path = iteration_dir / "iteration.json"
    data = read_json(path) if path.is_file() else None
    record = data.get("sandbox") if isinstance(data, dict) else None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        return None
    kind = record["kind"]
    parts = [f"`{kind}`" + (" (no isolation: trials ran as you, with your files and keys in reach)"
                            if kind == "none" else "")]
    if kind == "docker":
        parts.append(", ".join(f"{k} {record[k]}" for k in ("image", "digest", "cpus", "memory", "network")
                               if record.get(k) is not None))
    if record.get("chosen"):
        parts.append(str(record["chosen"]))
    return "; ".join(parts)


def write_report(iteration_dir: Path, config: Path | None = None, *, strict: bool = False,
                 point_estimate: bool = False, bench: Benchmark | None = None,
                 drawer: ChartDrawer | None = None, gated: Gated | None = None) -> Path:
    """Write ITERATION/report.md from the iteration's files; returns its path."""
    context = build_context(iteration_dir, config, strict=strict, point_estimate=point_estimate, bench=bench,
                            drawer=drawer, gated=gated)
    out = iteration_dir / FILENAME
    atomic_write_text(out, render_report(context))
    return out


def report_iteration(iteration_dir: Path, config: Path | None = None, *, strict: bool = False,
                     point_estimate: bool = False) -> Path:
    """`skillassay report`: compare with the previous iteration first when that was never done
    (an iteration from an older version, or one aggregated by hand), then write report.md."""
    if not iteration_dir.is_dir():
        raise InputError.one(iteration_dir, "ITERATION_DIR", "not a folder: expected an iteration folder")
    if not (iteration_dir / COMPARISON).exists():
        compare(iteration_dir, None, config)
    return write_report(iteration_dir, config, strict=strict, point_estimate=point_estimate)
