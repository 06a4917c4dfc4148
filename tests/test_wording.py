"""Figures in plain words, the same everywhere (skillassay.wording, issue 34): one rounding rule
for percentages (the console said 12% where the viewer said 13%), one name for a ratio over a
baseline that passed nothing, report.md never calling such a ratio a plain-comparison failure,
and `compare` never printing "None -> None"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import repo_paths
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze.compare_text import summary_lines
from skillassay.wording import UNBOUNDED, pct, whole_percent


def test_halves_round_away_from_zero_as_the_viewer_rounds_them() -> None:
    # JavaScript: (0.125 * 100).toFixed(0) === "13", (0.285 * 100).toFixed(0) === "28" (28.499999...)
    assert pct(0.125) == "13%" and pct(0.285) == "28%" and pct(0.375) == "38%" and pct(0.005) == "1%"
    assert whole_percent(-0.125) == -13 and pct(None) == "n/a" and pct(float("nan")) == "n/a"


def test_viewer_rounds_percentages_with_tofixed() -> None:
    """The viewer's pct is toFixed(0), whose halves go away from zero like wording.pct (run under
    node on every k/n in tests/viewer/test_viewer_wording.py)."""
    js = (repo_paths.SRC / "skillassay" / "viewer" / "assets" / "viewer.js").read_text()
    assert "const pct = (x) => (x === null || x === undefined ? \"n/a\" : `${Number((x * 100).toFixed(0))}%`);" in js


def test_console_benchmark_md_and_report_say_13_percent_for_one_in_eight(tmp_path: Path) -> None:
    # baseline: 1 pass in 8 trials over 8 evals -> 0.125
    evals = {i: ("P", "P" if i == 1 else "F") for i in range(1, 9)}
    it = write_iteration(tmp_path, 1, evals)
    result = cli(["aggregate", str(it)])
    assert "baseline 13%" in result.output, result.output
    assert "13%" in (it / "benchmark.md").read_text()
    cli(["report", str(it)])
    report = (it / "report.md").read_text()
    assert not re.search(r"\b12%", report), report


def test_an_unbounded_ratio_has_one_name_and_never_would_fail(tmp_path: Path) -> None:
    evals = {1: ("PFF", "FFF"), 2: ("FFF", "FFF"), 3: ("PPF", "FFF")}
    it = write_iteration(tmp_path, 1, evals, thresholds={"min_improvement_ratio": 1.5})
    gate = cli(["gate", str(it)])
    assert f"improvement ratio {UNBOUNDED}" in gate.output and "∞" not in gate.output, gate.output
    assert cli(["report", str(it)]).exit_code == 0
    report = (it / "report.md").read_text()
    assert "∞" not in report and "division by zero" not in report and UNBOUNDED in report
    ratio_lines = [line for line in report.splitlines() if "improvement ratio" in line.lower()]
    assert ratio_lines and not any("would fail" in line for line in ratio_lines), ratio_lines
    cli(["aggregate", str(it)])  # writes benchmark.md
    assert f"**{UNBOUNDED} (the baseline passed nothing)**" in (it / "benchmark.md").read_text()
    bench = json.loads((it / "benchmark.json").read_text())
    reason = bench["statistics"]["paired"]["improvement_ratio"]["undefined_reason"]
    assert "division by zero" not in reason and UNBOUNDED in reason


def test_compare_never_prints_none(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF")})
    write_iteration(tmp_path, 2, {1: ("PPP", "FFF"), 2: ("PPF", "FFF")})
    result = cli(["compare", str(tmp_path / "iteration-2"), "--json"])
    data = json.loads(result.output)
    for key in ("avg_tokens", "avg_duration_seconds"):  # an executor that reports neither
        data["metrics"][key].update(previous=None, current=None, relative_delta=None, relative_interval=None)
    text = "\n".join(summary_lines(data))
    assert "None" not in text, text
    assert "avg tokens: not recorded in either iteration" in text
