"""A gate line's figure sits inside its own printed interval (audit of issue 34): the duration
printed "0 (95% CI 1.8e-05..3.1e-05)", the summary's figure rounded to 3 decimals beside the
statistics' unrounded interval; and an estimate written to 4 significant figures beside bounds
written to 3 could print past its bound (0.9674 beside ..0.967)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze.gate import ThresholdResult

LINE = re.compile(r"\) (?P<value>[-+0-9.e]+) \(95% CI (?P<lo>[-+0-9.e]+)\.\.(?P<hi>[-+0-9.e]+)")


def printed(line: str) -> tuple[float, float, float]:
    m = LINE.search(line)
    assert m, line
    return float(m["value"]), float(m["lo"]), float(m["hi"])


def test_an_estimate_just_under_its_upper_bound_is_printed_inside_it() -> None:
    for value, interval in ((0.96744, [0.5, 0.96745]), (0.50004, [0.50003, 0.9]), (2.4e-05, [1.8e-05, 3.1e-05])):
        line = ThresholdResult("max_avg_duration_seconds", 60.0, value, "PASS", interval).line()
        v, lo, hi = printed(line)
        assert lo <= v <= hi, line


def test_a_sub_millisecond_duration_is_printed_inside_its_interval(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {i: ("PPP", "FFF") for i in range(1, 6)},
                         thresholds={"max_avg_duration_seconds": 60})
    for k, timing in enumerate(sorted(it.rglob("timing.json"))):
        timing.write_text(json.dumps({"total_tokens": 100, "total_duration_seconds": 1.8e-05 + k * 1e-06}))
    assert cli(["aggregate", str(it)]).exit_code == 0
    gate = cli(["gate", str(it)])
    line = next(x for x in gate.output.splitlines() if "max_avg_duration_seconds" in x)
    v, lo, hi = printed(line)
    assert v > 0 and lo <= v <= hi, line
