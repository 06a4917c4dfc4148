"""report.md: every section of the spec's template, the plain-language sentences about what
is certain, validity flags up front, recommendations, and `run` writing it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import cli
from echo_runs import drop_facts, run_echo
from iteration_factory import write_iteration

from skillassay.analyze.compare import FILENAME

SECTIONS = ["# Benchmark Report: acme-vpn", "## Iteration 2 vs 1", "### Summary",
            "| Metric | Current | Previous | Delta | Threshold | Status |", "### Regressions (action needed)",
            "### Improvements", "### Per-eval breakdown", "### Variance analysis",
            "| Eval | Pass rate | Std dev | Trials | Reliability |", "### Recommendations"]


def test_run_writes_report_with_every_section_and_plain_sentences(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws)
    first = (ws / "iteration-1" / "report.md").read_text()
    assert "(no previous iteration to compare with)" in first
    drop_facts(example_skill, "port 4433")
    run_echo(example_skill, ws)
    text = (ws / "iteration-2" / "report.md").read_text()
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions), "sections in the template's order"
    assert "| Pass rate | 63% (95% CI" in text and "| 75% | -13 pts (95% CI" in text  # halves away from zero (issue 34)
    assert "with fewer than 6 evals that differ, no p < 0.05 is reachable" in text
    called = text.split("### Regressions (action needed)")[1].split("### Possible regressions (not called)")[0]
    possible = text.split("### Possible regressions (not called)")[1].split("### Improvements")[0]
    assert "eval-1" not in called and "None called: the drops below are not distinguishable from noise yet" in called
    assert "| eval-1 (server-port) | PASS (3/3) | FAIL (0/3) | possible regression |" in possible
    assert "| about 1 more per arm, if the pass rates hold |" in possible
    assert "Re-check eval-1 (server-port) (3/3 -> 0/3): about 1 more trials per arm" in text
    assert "compatible with a true pass rate as low as 44%" in text
    if (ws / "iteration-2" / "charts" / "pass_rate.png").is_file():
        assert "![charts/pass_rate.png](charts/pass_rate.png)" in text


@pytest.mark.slow
def test_called_regression_and_improvement_rows(tmp_path: Path) -> None:
    same = {i: ("PPP", "FFF") for i in range(5, 9)}
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PPP", "FFF"), 4: ("FFF", "FFF"), **same})
    # 0.9, not 0.95: three evals of eight at 0/3 put the population's rate below 0.95 (its
    # beta-binomial interval ends at 0.92; issue 34), and this test is about the regression check.
    write_iteration(tmp_path, 2, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), 4: ("PPP", "FFF"), **same},
                    thresholds={"min_pass_rate": 0.9})
    result = cli(["report", str(tmp_path / "iteration-2")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "iteration-2" / FILENAME).is_file(), "report compares first when needed"
    text = (tmp_path / "iteration-2" / "report.md").read_text()
    regressions = text.split("### Regressions (action needed)")[1].split("### Improvements")[0]
    improvements = text.split("### Improvements")[1].split("### Per-eval breakdown")[0]
    assert "| eval-1 (e1) | PASS (3/3) | FAIL (0/3) | regressed: 3/3 before vs 0/3 now: a real drop" in regressions
    assert "eval-4" not in regressions and "| eval-4 (e4) | FAIL (0/3) | PASS (3/3) | possible improvement" in improvements
    assert "Fix eval-1 (e1): it regressed" in text
    assert "Threshold `min_pass_rate` FAILED" in text or "Threshold `min_pass_rate` is undecided" in text
    # Called at FDR 0.10 (adjusted p 0.042), but the gate fails only at its one regression level,
    # 0.01 (a false discovery rate on BH-adjusted p), so a suite where nothing changed fails at most 5% of the time.
    assert "| Evals regressed | 3 |" in text and "**Gate: INCONCLUSIVE**" in text
    assert "not at the gate's 0.01 false discovery rate (BH-adjusted p over the evals compared)" in text


def test_invalid_baseline_is_flagged_before_the_summary(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {i: ("PPP", "TTT") for i in range(1, 4)}, thresholds={"min_improvement_ratio": 1})
    assert cli(["report", str(it)]).exit_code == 0
    text = (it / "report.md").read_text()
    assert text.index("This measurement is invalid") < text.index("### Summary")
    assert "all baseline trials errored" in text
    assert "Fix the measurement before reading anything else" in text
    assert "3 of 3 (3 errored or timed out)" not in text  # the with-skill arm completed
    assert "| eval-1 (e1) | 3/3" in text


def test_variance_and_low_reliability_recommendation(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {1: ("PPF", "FFF"), 2: ("PPP", "FFF"), 3: ("PE", "FF")})
    cli(["report", str(it)])
    text = (it / "report.md").read_text()
    assert "| eval-1 (e1) | 67% | 0.47 | 3 of 3 | Low (investigate) |" in text
    assert "| eval-3 (e3) | 100% | 0.00 | 1 of 3 (1 errored or timed out) | unreliable (fewer than 2 completed trials) |" \
        in text
    assert "eval-1 (e1) passes 2 of 3 trials with the skill: it is flaky" in text
    assert "eval-3 (e3) has fewer than 2 completed trials" in text


def test_report_on_missing_folder_is_bad_input(tmp_path: Path) -> None:
    result = cli(["report", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "not a folder" in result.output


@pytest.mark.slow
def test_run_links_the_charts_its_chart_child_draws(example_skill: Path, tmp_path: Path) -> None:
    """report.md names exactly the PNGs the chart child draws (report_chart_names works them
    out from the same data, without matplotlib)."""
    import time

    from skillassay.report.charts import load_benchmark, report_chart_names, write_report_charts

    ws = tmp_path / "ws"
    for i in range(2):  # the second iteration (a changed skill) has a trend too
        if i:
            drop_facts(example_skill, "port 4433")
        code, out = run_echo(example_skill, ws)
        assert code in (0, 3), out
    it = ws / "iteration-2"
    text = (it / "report.md").read_text()
    linked = [n for n in ("pass_rate.png", "trend.png") if f"![charts/{n}](charts/{n})" in text]
    assert linked == report_chart_names(it, load_benchmark(it)) == ["pass_rate.png", "trend.png"]
    deadline = time.monotonic() + 120
    while not all((it / "charts" / n).is_file() for n in linked) and time.monotonic() < deadline:
        assert not (it / "charts" / "chart_error.txt").exists(), (it / "charts" / "chart_error.txt").read_text()
        time.sleep(0.2)
    assert all((it / "charts" / n).read_bytes().startswith(b"\x89PNG") for n in linked)
    assert [p.name for p in write_report_charts(it)] == linked  # the foreground drawing agrees
