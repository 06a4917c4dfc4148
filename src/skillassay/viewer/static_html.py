"""`skillassay view --static`: one self-contained HTML file (no CDN, no network), every run's
rendered outputs embedded, feedback exported as a download instead of saved by POST."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.report.charts import load_benchmark
from skillassay.store.jsonio import atomic_write_text
from skillassay.viewer.build import benchmark_payload, build_index, index_payload, run_payload
from skillassay.viewer.page import new_nonce, render_page

PAGE_BUDGET = 150_000_000  # characters of embedded file content in one static page


def _file_chars(f: dict[str, Any]) -> int:
    return sum(len(f.get(k) or "") for k in ("html", "src", "href"))


def apply_budget(details: dict[str, Any], budget: int = PAGE_BUDGET) -> None:
    """Past the budget, files are left out with a note, in run order, so a huge iteration still
    yields a page a browser can open; each file is already capped on its own (render.py)."""
    used = 0
    for detail in details.values():
        if detail is None:
            continue
        for i, f in enumerate(detail["files"]):
            used += _file_chars(f)
            if used > budget:
                detail["files"][i] = {"name": f["name"], "kind": "skipped", "size": f.get("size"), "truncated": True,
                                      "note": "not embedded: this static page reached its size budget; "
                                              "use `skillassay view` without --static to see it"}


def static_html(iteration_dir: Path, previous: Path | None = None, budget: int = PAGE_BUDGET) -> str:
    bench = load_benchmark(iteration_dir)
    index = build_index(iteration_dir, bench)
    details = {r.run_id: run_payload(index, r.run_id, previous, served=False) for r in index.runs}
    apply_budget(details, budget)
    boot = {"index": index_payload(index, bench, "static"), "details": details,
            "benchmark": benchmark_payload(iteration_dir, bench)}
    title = f"{boot['index']['skill_name'] or 'skill'} · {iteration_dir.name}"
    return render_page(title=title, mode="static", boot=boot, nonce=new_nonce())


def write_static(iteration_dir: Path, out: Path, previous: Path | None = None) -> Path:
    atomic_write_text(out, static_html(iteration_dir, previous))
    return out
