"""`skillassay view --static`: one self-contained HTML file (no CDN, no network), the runs'
rendered outputs embedded up to a size budget, feedback exported as a download instead of saved
by POST.

An iteration can hold 20,000 runs of 50 KB answers: rendering all of them before applying the
budget took minutes and gigabytes. So the budget applies while rendering (a run past it is
listed with its grades, prompt and file names, not its contents, and the page says so), and
the page is written to the file run by run instead of being built as one string."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from skillassay.report.charts import load_benchmark
from skillassay.store.jsonio import atomic_open
from skillassay.viewer.build import (
    Index,
    RunRef,
    _grading,
    _metrics,
    _prompt,
    benchmark_payload,
    build_index,
    index_payload,
    run_payload,
)
from skillassay.viewer.page import new_nonce, render_page, script_json

PAGE_BUDGET = 50_000_000  # characters of embedded file content (outputs, transcripts) in one page
# Rendering markdown costs about 0.1-0.4 s per 50 KB file (markdown-it-py), so the page also has
# a time budget: past it, runs are listed only, whatever the size budget says.
RENDER_SECONDS = 20.0
NO_OUTPUTS_NOTE = "not embedded: this static page was written with --no-outputs"
CONTENTS_NOTE = ("This page is a self-contained copy of the iteration: it embeds {what}, grades and the "
                 "judge's evidence, prompts and metrics. Known secrets (keys in the environment, -o env "
                 "values, URL passwords, as remembered by the run) are masked, in base64 and hex too; anything "
                 "else the agent wrote is shown as written. Review it before sharing{hint}.")
SKIPPED_NOTE = "not embedded: this static page reached its size budget; use `skillassay view` without --static to see it"
_HOLE = "\u0000boot\u0000"


def _file_chars(f: dict[str, Any]) -> int:
    return sum(len(f.get(k) or "") for k in ("html", "src", "href"))


def _skipped(f: dict[str, Any]) -> dict[str, Any]:
    return {"name": f["name"], "kind": "skipped", "size": f.get("size"), "truncated": True, "note": SKIPPED_NOTE}


def _fit(detail: dict[str, Any], used: int, budget: int) -> int:
    """Count one rendered run against the budget, leaving out what does not fit; the new total."""
    for i, f in enumerate(detail["files"]):
        used += _file_chars(f)
        if used > budget:
            detail["files"][i] = _skipped(f)
    used += len(detail.get("transcript_html") or "")
    if used > budget and detail.get("transcript_html"):
        detail["transcript_html"] = ""
        detail["transcript_note"] = SKIPPED_NOTE
    return used


def _listed_only(index: Index, ref: RunRef, prompts: dict[str, dict[str, Any]],
                 note: str = SKIPPED_NOTE) -> dict[str, Any]:
    """A run past the budget: what the review needs to judge it (grades, prompt, metrics),
    without opening or even listing its outputs (a folder walk per run is most of the cost at
    20,000 runs)."""
    run_dir = index.iteration_dir / ref.run_id
    if ref.eval_dir not in prompts:
        prompts[ref.eval_dir] = _prompt(index.iteration_dir, ref)
    return {**ref.summary(), **prompts[ref.eval_dir], "metrics": _metrics(run_dir),
            "files": [{**_skipped({"name": "outputs/", "size": None}), "note": note}],
            "grading": _grading(run_dir), "transcript_html": "", "transcript_note": note, "previous": None}


def run_details(index: Index, previous: Path | None, budget: int,
                render_seconds: float | None = RENDER_SECONDS, outputs: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """(run id, detail) in run order: rendered while the budgets last, listed only after;
    without `outputs`, every run listed only."""
    used, prompts = 0, dict[str, dict[str, Any]]()
    deadline = None if render_seconds is None else time.monotonic() + render_seconds
    for ref in index.runs:
        if not outputs:
            yield ref.run_id, _listed_only(index, ref, prompts, NO_OUTPUTS_NOTE)
            continue
        if used > budget or (deadline is not None and time.monotonic() > deadline):
            used = budget + 1  # once out of time, out for good: the embedded runs stay a prefix
            yield ref.run_id, _listed_only(index, ref, prompts)
            continue
        detail = run_payload(index, ref.run_id, previous, served=False, deadline=deadline)
        if detail is None:
            continue
        used = _fit(detail, used, budget)
        for f in (detail.get("previous") or {}).get("files", []):
            used += _file_chars(f)
        yield ref.run_id, detail


def write_page(fh: TextIO, iteration_dir: Path, previous: Path | None = None, budget: int = PAGE_BUDGET,
               render_seconds: float | None = RENDER_SECONDS, outputs: bool = True) -> None:
    """The page, written piece by piece: memory stays at one run's rendering, not the page's.
    It says what it holds, since it is made to be shared."""
    bench = load_benchmark(iteration_dir)
    index = build_index(iteration_dir, bench)
    idx = index_payload(index, bench, "static")
    title = f"{idx['skill_name'] or 'skill'} · {iteration_dir.name}"
    head, tail = render_page(title=title, mode="static", boot={}, nonce=new_nonce(), boot_json=_HOLE).split(_HOLE)
    fh.write(head)
    bench_part = script_json(benchmark_payload(iteration_dir, bench))
    fh.write('{"mode":"static","benchmark":' + bench_part + ',"details":{')
    embedded = 0
    for n, (run_id, detail) in enumerate(run_details(index, previous, budget, render_seconds, outputs)):
        fh.write(("," if n else "") + script_json(run_id) + ":" + script_json(detail))
        embedded += not detail.get("transcript_note") and all(f["kind"] not in ("skipped", "listed") for f in detail["files"])
    idx["contents_note"] = CONTENTS_NOTE.format(
        what="the runs' output files and transcripts (within a size budget)" if outputs else
        "no output files (contents or names) or transcripts (written with --no-outputs)",
        hint="; `view --static --no-outputs` leaves output contents out" if outputs else "")
    if outputs and embedded < len(index.runs):
        idx["budget_note"] = (f"This page embeds the outputs of {embedded:,} of {len(index.runs):,} runs: it reached "
                              f"its size budget ({budget:,} characters) or its rendering time budget "
                              f"({render_seconds or 0:g} s). The other runs show their grades, prompt and file names; "
                              "run `skillassay view` without --static to see everything.")
    fh.write('},"index":' + script_json(idx) + "}")
    fh.write(tail)


def static_html(iteration_dir: Path, previous: Path | None = None, budget: int = PAGE_BUDGET,
                render_seconds: float | None = RENDER_SECONDS) -> str:
    buf = io.StringIO()
    write_page(buf, iteration_dir, previous, budget, render_seconds)
    return buf.getvalue()


def write_static(iteration_dir: Path, out: Path, previous: Path | None = None, outputs: bool = True) -> Path:
    with atomic_open(out) as fh:
        write_page(fh, iteration_dir, previous, outputs=outputs)
    return out
