"""Differences in percentage points follow the one rounding rule of percentages (issue 34): 1/8
is "13" in benchmark.md, report.md and compare alike (it was 12 in some, 13 in others, because
some sites used Python's half-to-even rounding), and no difference is ever written "-0"."""

from __future__ import annotations

import re
from pathlib import Path

import repo_paths
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.wording import points, signed_points

# 8 evals, one trial each: 3 pass in both arms, 4 fail in both, 1 passes with the skill only
ONE_IN_EIGHT = {**{i: ("P", "P") for i in range(1, 4)}, **{i: ("F", "F") for i in range(4, 8)}, 8: ("P", "F")}


def test_points_round_halves_away_from_zero_and_never_say_minus_zero() -> None:
    assert signed_points(0.125) == "+13" and signed_points(-0.125) == "-13" and points(-0.125) == "13"
    assert signed_points(-0.001) == "+0" and signed_points(0.0) == "+0" and signed_points(-0.0) == "+0"
    assert points(0.005) == "1" and signed_points(-0.375) == "-38"


def test_one_in_eight_is_13_points_in_benchmark_md_and_report_md(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, ONE_IN_EIGHT)
    assert cli(["aggregate", str(it)]).exit_code == 0
    bench_md = (it / "benchmark.md").read_text()
    assert "by 13 percentage points" in bench_md, bench_md
    assert cli(["report", str(it)]).exit_code == 0
    report = (it / "report.md").read_text()
    assert "13 percentage points" in report and not re.search(r"\b12 percentage points", report), report


def test_compare_says_minus_13_points_for_a_drop_of_one_in_eight_and_never_minus_zero(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {**{i: ("P", "F") for i in range(1, 5)}, **{i: ("F", "F") for i in range(5, 9)}})
    it = write_iteration(tmp_path, 2, {**{i: ("P", "F") for i in range(1, 4)}, **{i: ("F", "F") for i in range(4, 9)}})
    out = cli(["compare", str(it)]).output
    assert "-13 pts" in out and "-12 pts" not in out, out
    write_iteration(tmp_path, 3, {i: ("PF"[i % 2], "F") for i in range(1, 9)})
    same = write_iteration(tmp_path, 4, {i: ("PF"[i % 2], "F") for i in range(1, 9)})
    out = cli(["compare", str(same), str(tmp_path / "iteration-3")]).output
    assert "-0" not in out, out


def test_no_site_formats_a_difference_with_python_rounding() -> None:
    """Every difference goes through wording.points / signed_points and every percentage through
    wording.pct: Python's format and round() take halves to even (12 for 1/8) and write "-0"."""
    bad = re.compile(r"\*\s*(100|scale):\+?\.0f|round\(abs\([^)]*\)\s*\*\s*100\)|:\+?\.0%")
    hits = [f"{p.relative_to(repo_paths.SRC)}:{n}" for p in (repo_paths.SRC / "skillassay").rglob("*.py")
            for n, line in enumerate(p.read_text().splitlines(), 1) if bad.search(line)]
    assert not hits, hits
