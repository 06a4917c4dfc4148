"""`report`, `history` and `gate` take a workspace as `view` does (issue 34): its latest iteration, said
so on stderr. (`history show` takes the workspace; given an iteration folder, its workspace.)"""

from __future__ import annotations

from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "demo-workspace"
    write_iteration(ws, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF")})
    write_iteration(ws, 2, {1: ("PPP", "FFF"), 2: ("PPF", "FFF")})
    return ws


def test_report_on_a_workspace_reports_its_latest_iteration(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    result = cli(["report", str(ws)])
    assert result.exit_code == 0, result.output
    assert "latest iteration, iteration-2" in result.output
    assert (ws / "iteration-2" / "report.md").is_file() and not (ws / "report.md").exists()


def test_history_record_and_show_take_a_workspace_or_an_iteration(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    result = cli(["history", "record", str(ws)])
    assert result.exit_code == 0, result.output
    assert (ws / "history.json").is_file() and not (tmp_path / "history.json").exists()
    shown = cli(["history", "show", str(ws / "iteration-2")])
    assert shown.exit_code == 0 and "current best" in shown.output, shown.output


def test_gate_on_a_workspace_gates_its_latest_iteration(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    on_workspace, on_latest = cli(["gate", str(ws), "--json"]), cli(["gate", str(ws / "iteration-2"), "--json"])
    assert "latest iteration, iteration-2" in on_workspace.stderr, on_workspace.output
    assert on_workspace.exit_code == on_latest.exit_code and on_workspace.stdout == on_latest.stdout
