"""What `run` and `aggregate` say and exit with when the measurement cannot carry a verdict
(everything errored), when nothing was gated, and when the gate is undecided: real runs of
the `echo` executor on the example skill, real files."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from skillassay.cli.main import app

runner = CliRunner()


def run_echo(skill: Path, ws: Path, cfg: dict, *extra: str) -> tuple[int, str]:
    path = ws.parent / "cfg.json"
    path.write_text(json.dumps(cfg))
    result = runner.invoke(app, ["run", str(skill), "--executor", "echo", "--workspace", str(ws),
                                 "--config", str(path), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_every_trial_errored_never_exits_0_and_says_why(example_skill: Path, tmp_path: Path) -> None:
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1},
                         "-o", "delay_seconds=2", "--timeout", "0.05")
    assert code == 3, out
    assert "gate: PASS" not in out and "gate: INVALID" in out
    assert "all with_skill trials errored" in out and "all baseline trials errored" in out
    assert "16 trials run (16 errored)" in out
    assert "next: Fix the measurement first" in out
    it = tmp_path / "ws" / "iteration-1"
    assert "INVALID" in (it / "benchmark.md").read_text() and "This measurement is invalid" in (it / "report.md").read_text()
    # the same files aggregated again: aggregate says so and does not exit 0 either
    result = runner.invoke(app, ["aggregate", str(it)])
    assert result.exit_code == 3 and "measurement invalid" in result.output and "all with_skill trials errored" in result.output


def test_no_thresholds_says_nothing_was_gated(example_skill: Path, tmp_path: Path) -> None:
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1})
    assert code == 0, out
    assert "gate: PASS" not in out and "gate: NOT_GATED" in out and "nothing was gated" in out


def test_inconclusive_run_says_what_would_decide_it(example_skill: Path, tmp_path: Path) -> None:
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.9}})
    assert code == 3, out
    assert "INCONCLUSIVE: min_pass_rate" in out
    step = next(line for line in out.splitlines() if line.startswith("  next: min_pass_rate is undecided"))
    assert "trials" in step or "evals" in step


def test_progress_line_counts_errors_not_failures(example_skill: Path, tmp_path: Path) -> None:
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1})
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert len(lines) == 16 and any(": FAIL (0 errored so far, " in line for line in lines), out
    assert not any("failed," in line for line in lines)
