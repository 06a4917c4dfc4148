"""jinja2's compiled templates are cached in the user's cache folder between processes (0.06 s
of every run, aggregate and report went to compiling them), and a cache folder that cannot be
made or written never stops a report from being written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RENDER = ("import time; from skillassay.report.benchmark_md import environment; "
          "t = time.perf_counter(); environment().get_template('benchmark.md.j2'); "
          "environment().get_template('report.md.j2'); print(time.perf_counter() - t)")


def render_in_a_new_process(cache_home: Path) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    out = subprocess.run([sys.executable, "-c", RENDER], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


@pytest.mark.slow
def test_the_second_process_loads_the_compiled_templates(tmp_path: Path) -> None:
    folder = tmp_path / "skillassay" / "jinja2"
    render_in_a_new_process(tmp_path)
    entries = sorted(p.name for p in folder.iterdir())
    assert len(entries) == 2 and all(e.endswith(".cache") for e in entries), entries
    stamps = {p: p.stat().st_mtime_ns for p in folder.iterdir()}
    render_in_a_new_process(tmp_path)
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps  # read, not compiled and written again


def test_a_cache_folder_that_cannot_be_made_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    assert render_in_a_new_process(blocker) >= 0


def test_a_broken_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    render_in_a_new_process(tmp_path)
    for entry in (tmp_path / "skillassay" / "jinja2").iterdir():
        entry.write_bytes(b"not jinja2 bytecode")
    render_in_a_new_process(tmp_path)
    assert all(e.read_bytes() != b"not jinja2 bytecode" for e in (tmp_path / "skillassay" / "jinja2").iterdir())
