"""`aggregate`'s console line writes both rates the same way and names each (issue 34): it
printed "pass rate with skill 75%, baseline 0%, expectation pass-rate delta +0.69", a per-trial
percentage beside a per-expectation fraction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import repo_paths
from cli_runner import cli

from skillassay.wording import pct


def test_the_expectation_pass_rate_is_named_and_written_in_percent(tmp_path: Path) -> None:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(repo_paths.EXAMPLE, skill)
    assert cli(["run", str(skill), "--executor", "echo", "--trials", "1"]).exit_code in (0, 3)
    it = tmp_path / "acme-vpn-workspace" / "iteration-1"
    result = cli(["aggregate", str(it)])
    bench = json.loads((it / "benchmark.json").read_text())
    s, rs = bench["summary"], bench["run_summary"]
    assert s["with_skill"]["pass_rate"] != rs["with_skill"]["pass_rate"]["mean"]  # the example's evals tell them apart
    line = next(x for x in result.output.splitlines() if x.startswith("pass rate with skill"))
    assert line == (f"pass rate with skill {pct(s['with_skill']['pass_rate'])}, baseline {pct(s['baseline']['pass_rate'])}; "
                    f"expectation pass rate with skill {pct(rs['with_skill']['pass_rate']['mean'])}, baseline "
                    f"{pct(rs['without_skill']['pass_rate']['mean'])}"), line
