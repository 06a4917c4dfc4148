"""What keeps `run` and start-up fast (issue 17), checked as behaviour, not as timings: the
gate is evaluated once per run, `skillassay --help` imports none of the libraries only the
commands need, and a run's report shows the very verdict `run` printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import repo_paths
from cli_runner import cli

from skillassay.analyze import gate as gate_module
from skillassay.run import engine
from skillassay.workflows import gate_iteration
from skillassay.workflows import report_iteration as report_module

SRC = repo_paths.REPO / "src"


def test_run_evaluates_the_gate_once(example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_locked evaluated the gate, then the report evaluated it again from the files (and
    scanned every installed package's entry points to find the executor once more)."""
    calls: list[str] = []
    scans: list[Path] = []
    real_evaluate, real_not_measured = gate_module.evaluate, gate_iteration.not_measured

    def counted(where: str):  # type: ignore[no-untyped-def]
        def evaluate(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(where)
            return real_evaluate(*args, **kwargs)
        return evaluate

    def not_measured(iteration_dir, thresholds):  # type: ignore[no-untyped-def]
        scans.append(iteration_dir)
        return real_not_measured(iteration_dir, thresholds)

    for module, where in ((engine, "engine"), (report_module, "report"), (gate_iteration, "gate_iteration")):
        monkeypatch.setattr(module, "evaluate", counted(where))
    monkeypatch.setattr(report_module, "not_measured", not_measured)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.9}}))
    result = cli(["run", str(example_skill), "--executor", "echo", "--workspace",
                                      str(tmp_path / "ws"), "--config", str(cfg), "--point-estimate"])
    assert result.exit_code == 1, result.output
    assert calls == ["engine"], calls
    assert scans == []
    # the verdict in report.md is the one run printed (FAIL, naming the threshold)
    report = (tmp_path / "ws" / "iteration-1" / "report.md").read_text()
    assert "FAIL: min_pass_rate" in result.output
    assert "FAIL" in report and "min_pass_rate" in report


@pytest.mark.slow
def test_report_command_still_evaluates_its_own_gate(example_skill: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`skillassay report` has no verdict handed to it: it evaluates the gate from the files,
    with --strict / --config as given (not the run's)."""
    ws = tmp_path / "ws"
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"trials_per_eval": 1, "thresholds": {"min_pass_rate": 0.9}}))
    assert cli(["run", str(example_skill), "--executor", "echo", "--workspace", str(ws),
                               "--config", str(cfg)]).exit_code == 3
    calls: list[bool] = []
    real = gate_module.evaluate

    def evaluate(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(bool(kwargs.get("strict")))
        return real(*args, **kwargs)

    monkeypatch.setattr(report_module, "evaluate", evaluate)
    result = cli(["report", str(ws / "iteration-1"), "--config", str(cfg), "--strict"])
    assert result.exit_code == 0, result.output
    assert calls == [True]
    assert "FAIL" in (ws / "iteration-1" / "report.md").read_text()


def _modules_after(code: str, *argv: str) -> set[str]:
    """sys.modules of a fresh interpreter (the worktree's code) once `code` ran with argv."""
    probe = (f"import sys; sys.argv = ['skillassay', *{list(argv)!r}]\n{code}\n"
             "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, proc.stderr[-2000:]
    return set(line[-1].split()[1:])


MAIN = ("from skillassay.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass")


def test_help_imports_no_library_only_commands_need() -> None:
    """`skillassay --help` is typer and rich: nothing numerical, no models, no templates."""
    loaded = _modules_after(MAIN, "--help")
    assert "typer" in loaded  # the probe ran the CLI
    heavy = {"numpy", "scipy", "pydantic", "pydantic_core", "jinja2", "yaml", "filelock", "tenacity",
             "orjson", "skillassay.models", "skillassay.run.engine", "skillassay.analyze.statistics"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_now_iso_is_datetime_isoformat_to_the_microsecond() -> None:
    """now_iso formats the date once per second: the text must stay what isoformat wrote."""
    import re
    import time
    from datetime import UTC, datetime

    from skillassay.store.jsonio import now_iso

    for _ in range(3):
        before = datetime.now(UTC)
        stamp = now_iso()
        after = datetime.now(UTC)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), stamp
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        assert before <= parsed <= after
        assert stamp == parsed.isoformat(timespec="microseconds")[:-6] + "Z"
        time.sleep(0.4)  # across a second boundary at least once


def test_fresh_trials_are_not_probed_one_by_one(example_skill: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning lists each configuration folder once; only trials whose run folder exists
    are read back (resume), so a fresh iteration reads none and a resumed one reads its own."""
    read: list[str] = []
    real = engine.read_trial

    def counted(run_dir, *args):  # type: ignore[no-untyped-def]
        read.append(run_dir)
        return real(run_dir, *args)

    monkeypatch.setattr(engine, "read_trial", counted)
    ws = tmp_path / "ws"
    assert cli(["run", str(example_skill), "--executor", "echo", "--workspace", str(ws),
                               "--trials", "1"]).exit_code in (0, 1, 3)
    assert read == []
    # as if killed before aggregating: a finished iteration is not extended in place (issue 34)
    (ws / "iteration-1" / "benchmark.json").unlink()
    result = cli(["run", str(example_skill), "--executor", "echo", "--workspace", str(ws),
                                 "--trials", "2"])
    assert "8 trials already graded, 8 to run" in result.output or "already graded" in result.output, result.output
    assert sorted(Path(r).name for r in read) == ["run-1"] * 16, read
