"""`skillassay view --static`: one self-contained HTML file (no CDN, no network), every run's
rendered outputs embedded, feedback exported as a download instead of saved by POST."""

from __future__ import annotations

from pathlib import Path

from skillassay.charts import load_benchmark
from skillassay.jsonio import atomic_write_text
from skillassay.viewer.build import benchmark_payload, build_index, index_payload, run_payload
from skillassay.viewer.page import new_nonce, render_page


def static_html(iteration_dir: Path, previous: Path | None = None) -> str:
    bench = load_benchmark(iteration_dir)
    index = build_index(iteration_dir, bench)
    boot = {"index": index_payload(index, bench, "static"),
            "details": {r.run_id: run_payload(index, r.run_id, previous, served=False) for r in index.runs},
            "benchmark": benchmark_payload(iteration_dir, bench)}
    title = f"{boot['index']['skill_name'] or 'skill'} · {iteration_dir.name}"
    return render_page(title=title, mode="static", boot=boot, nonce=new_nonce())


def write_static(iteration_dir: Path, out: Path, previous: Path | None = None) -> Path:
    atomic_write_text(out, static_html(iteration_dir, previous))
    return out
