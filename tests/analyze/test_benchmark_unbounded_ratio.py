"""An improvement ratio over a baseline that passed nothing has one name, "unbounded", in
`compare` too (it printed "n/a -> n/a"), comparison_previous.json says so (it held only null),
and benchmark.json's estimate_meets has the min_improvement_ratio key such a ratio meets (it was
left out while `gate --point-estimate` said PASS) (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.wording import UNBOUNDED

NOTHING_PASSES_BASELINE = {1: ("PPF", "FFF"), 2: ("PFF", "FFF"), 3: ("PPP", "FFF")}


def test_compare_names_both_unbounded_ratios_and_stores_them(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, NOTHING_PASSES_BASELINE)
    it = write_iteration(tmp_path, 2, {**NOTHING_PASSES_BASELINE, 2: ("PPF", "FFF")})
    result = cli(["compare", str(it)])
    assert result.exit_code == 0, result.output
    assert f"improvement ratio {UNBOUNDED} -> {UNBOUNDED}" in result.flat and "n/a -> n/a" not in result.flat, result.output
    ratio = json.loads((it / "comparison_previous.json").read_text())["metrics"]["improvement_ratio"]
    assert ratio["current"] is None and ratio["previous"] is None  # what an older reader found there
    assert ratio["current_unbounded"] is True and ratio["previous_unbounded"] is True, ratio
    assert cli(["validate", str(it / "comparison_previous.json")]).exit_code == 0


def test_a_bounded_ratio_is_not_called_unbounded(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPF", "PFF"), 2: ("PPP", "FFF")})
    it = write_iteration(tmp_path, 2, NOTHING_PASSES_BASELINE)
    result = cli(["compare", str(it)])
    assert f"improvement ratio {UNBOUNDED} -> " not in result.flat and f"-> {UNBOUNDED}" in result.flat, result.output
    ratio = json.loads((it / "comparison_previous.json").read_text())["metrics"]["improvement_ratio"]
    assert ratio["previous"] > 4 and ratio["previous_unbounded"] is False and ratio["current_unbounded"] is True


def test_estimate_meets_holds_the_unbounded_ratio_as_meeting_a_minimum(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, NOTHING_PASSES_BASELINE, thresholds={"min_improvement_ratio": 1.5})
    assert json.loads((it / "benchmark.json").read_text())["estimate_meets"]["min_improvement_ratio"] is True
    gate = cli(["gate", str(it), "--point-estimate"])
    assert "PASS" in gate.output, gate.output
    bench = json.loads((it / "benchmark.json").read_text())
    assert bench["estimate_meets"]["min_improvement_ratio"] is True, bench["estimate_meets"]


def test_no_pass_in_either_arm_is_no_ratio_and_meets_nothing(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {1: ("FFF", "FFF"), 2: ("FFF", "FFF")}, thresholds={"min_improvement_ratio": 1.5})
    assert "min_improvement_ratio" not in json.loads((it / "benchmark.json").read_text())["estimate_meets"]
