"""A workspace written by an earlier release (tests/fixtures/golden_ws, written before the code
moved into stage folders) must keep reading as it did then: the same runs, counts and figures
from `aggregate`, and `gate` and `report` still work on it. Later releases may add fields and
refine the statistics and verdicts, so what is pinned is what the old files say, not every
derived sentence: every value the old benchmark.json had in runs[], run_summary, per_eval and
the arms' summary figures must come back unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import cli

ROOT = repo_paths.REPO
FIXTURE = repo_paths.FIXTURES / "golden_ws"
EXAMPLE = str(ROOT / "examples" / "acme-vpn")
ARM_FIGURES = ("pass_rate", "avg_tokens", "avg_duration_seconds")


def _iteration(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE / "workspace", ws)
    for p in ws.rglob("*"):
        if p.is_file() and p.suffix in {".json", ".md"}:
            text = p.read_text(encoding="utf-8")
            if "@EXAMPLE@" in text:
                p.write_text(text.replace("@EXAMPLE@", EXAMPLE), encoding="utf-8")
    return ws / "iteration-1"


def _expected(name: str) -> Any:
    return json.loads((FIXTURE / "expected" / name).read_text(encoding="utf-8").replace("@EXAMPLE@", EXAMPLE))


def assert_kept(old: Any, new: Any, where: str = "$") -> None:
    """Every value of `old` is in `new` at the same place (new may add keys)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for k, v in old.items():
            assert k in new, f"{where}.{k} is gone"
            assert_kept(v, new[k], f"{where}.{k}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            assert_kept(a, b, f"{where}[{i}]")
    else:
        assert old == new, f"{where}: {old!r} became {new!r}"


def test_aggregate_of_an_old_workspace_reads_the_same_runs_and_figures(tmp_path: Path) -> None:
    it = _iteration(tmp_path)
    result = cli(["aggregate", str(it)])
    assert result.exit_code in (0, 3), result.output  # 3: inconclusive or not gated is fine, a crash is not
    new = json.loads((it / "benchmark.json").read_text(encoding="utf-8"))
    old = _expected("aggregate-benchmark.json")
    for section in ("runs", "run_summary", "per_eval"):
        assert_kept(old[section], new[section], section)
    old_meta = {k: v for k, v in old["metadata"].items() if k != "timestamp"}
    assert_kept(old_meta, new["metadata"], "metadata")
    for arm in ("with_skill", "baseline"):
        for key in ARM_FIGURES:
            assert new["summary"][arm][key] == old["summary"][arm][key], (arm, key)


@pytest.mark.slow
def test_gate_and_report_still_read_an_old_workspace(tmp_path: Path) -> None:
    it = _iteration(tmp_path)
    gate = cli(["gate", str(it), "--json"])
    assert gate.exit_code in (0, 1, 3), gate.output
    new, old = json.loads(gate.stdout), _expected("gate.json")
    assert [t["key"] for t in new["thresholds"]] == [t["key"] for t in old["thresholds"]]
    assert new["config_path"] == old["config_path"]
    # the thresholds come from the config the workspace recorded: the example's, as it is today
    today = json.loads((Path(EXAMPLE) / "evals" / "benchmark_config.json").read_text(encoding="utf-8"))["thresholds"]
    for a, b in zip(old["thresholds"], new["thresholds"], strict=True):
        # the gate's value is now the statistics' unrounded estimate its interval belongs to; the
        # summary (and so the old gate) rounds a duration to 3 decimals (0 beside 0.000106..)
        value = round(b["value"], 3) if a["key"] == "max_avg_duration_seconds" else b["value"]
        assert (a["value"], today[a["key"]]) == (value, b["threshold"]) or a["key"] == "min_improvement_ratio"
    report = cli(["report", str(it)])
    assert report.exit_code == 0, report.output
    assert (it / "report.md").read_text(encoding="utf-8").startswith("# ")
