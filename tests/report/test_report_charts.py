"""Nothing writes into a workspace after the command that owns it has returned (issue 40): the
report's charts are drawn before `run` returns, so a workspace deleted right after it stays
deleted (a detached chart process used to bring back a phantom iteration-1/charts/, and the
next run then started iteration 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import repo_paths

REPO = repo_paths.REPO


def run_echo(skill: Path, ws: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("CI", None)  # the detached drawing was skipped in CI only
    return subprocess.run([sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "echo", "--trials",
                           "1", "--workspace", str(ws)], env=env, capture_output=True, text=True, timeout=300)


def test_a_workspace_deleted_right_after_run_stays_deleted(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_echo(example_skill, ws)
    assert proc.returncode in (0, 1, 3), proc.stderr
    charts = sorted(p.name for p in (ws / "iteration-1" / "charts").iterdir())
    assert "pass_rate.png" in charts, charts  # drawn before run returned
    shutil.rmtree(ws)
    time.sleep(4)  # the detached child took about 1-2 s here to import matplotlib and draw
    assert not ws.exists(), sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))


def test_the_charts_report_md_links_exist_when_run_returns(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_echo(example_skill, ws)
    assert proc.returncode in (0, 1, 3), proc.stderr
    it = ws / "iteration-1"
    text = (it / "report.md").read_text()
    assert "![charts/pass_rate.png](charts/pass_rate.png)" in text
    assert (it / "charts" / "pass_rate.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("data", ["", "not json"])
def test_the_waiting_chart_process_draws_nothing_without_good_data(tmp_path: Path, data: str) -> None:
    """A run that ends without a report (interrupted, stopped early) closes the chart process's
    input: it must exit and leave no file behind."""
    from skillassay.report.report_charts import ChartDrawer

    it = tmp_path / "iteration-1"
    it.mkdir()
    drawer = ChartDrawer()
    if data:
        with pytest.raises(RuntimeError):
            drawer.draw(it, data)  # type: ignore[arg-type]
    drawer.close()
    assert drawer.proc.poll() is not None
    assert list(it.iterdir()) == []
