"""An agent that leaves thousands of files: metrics.json lists the first LIST_CAP names and
counts the rest (grading still sees every file), a run's viewer page renders and lists up to
its caps and counts the rest, and `view --static` keeps its time budget inside one such run."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.store.bounded import LIST_CAP, list_files
from skillassay.viewer.build import RENDER_CAP, build_index, run_payload
from skillassay.viewer.static_html import static_html

MANY = 3 * LIST_CAP


def test_metrics_lists_the_first_names_and_counts_them_all(example_skill: Path, tmp_path: Path) -> None:
    evals_path = example_skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text())
    evals["evals"] = [{**evals["evals"][0], "expectations": [
        {"type": "contains", "value": "4433"},
        {"type": "file_exists", "path": "zz-last.txt"},  # past the listed names: grading looks on disk
        {"type": "file_count", "glob": "*", "min": MANY + 1}]}]
    evals_path.write_text(json.dumps(evals))
    script = f'for i in $(seq -w 1 {MANY}); do : > "f$i.txt"; done; echo last > zz-last.txt; echo "port 4433"'
    argv = "argv=" + json.dumps(["sh", "-c", script])
    result = cli(["run", str(example_skill), "--executor", "command", "-o", argv,
                                      "--trials", "1", "--workspace", str(tmp_path / "ws")])
    assert result.exit_code in (0, 1, 3), result.output
    run = tmp_path / "ws" / "iteration-1" / "eval-1-server-port" / "with_skill" / "run-1"
    metrics = json.loads((run / "outputs" / "metrics.json").read_text())
    assert len(metrics["files_created"]) == LIST_CAP
    assert metrics["files_created"][0] == "f0001.txt"
    assert metrics["files_created_total"] == MANY + 1
    grading = json.loads((run / "grading.json").read_text())
    assert [e["passed"] for e in grading["expectations"]] == [True, True, True], grading


def test_a_run_page_renders_and_lists_up_to_its_caps(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, {1: ("P", "F")})
    outputs = it / "eval-1-e1" / "with_skill" / "run-1" / "outputs"
    for i in range(MANY):
        (outputs / f"f{i:05d}.py").write_text(f"x = {i}\n")
    index = build_index(it, json.loads((it / "benchmark.json").read_text()))
    served = run_payload(index, "eval-1-e1/with_skill/run-1", None, served=True)
    assert served is not None
    files = served["files"]
    assert len(files) == LIST_CAP + 1
    assert sum(f["kind"] == "code" for f in files) == RENDER_CAP
    assert files[-1]["name"] == f"[{MANY + 1 - LIST_CAP:,} more files]"
    downloads = [f for f in files if f["kind"] == "binary"]
    assert downloads and all(f["href"].startswith("api/file?") for f in downloads)
    assert list_files(outputs, 10).total == MANY + 1


def test_the_static_page_keeps_its_time_budget_inside_one_big_run(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, {1: ("P", "F")})
    outputs = it / "eval-1-e1" / "with_skill" / "run-1" / "outputs"
    body = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(2_000))
    for i in range(RENDER_CAP):
        (outputs / f"m{i:03d}.py").write_text(body)
    t0 = time.perf_counter()
    html = static_html(it, render_seconds=0.5)
    took = time.perf_counter() - t0
    assert "not shown: a run&#x27;s page renders at most" in html or "not shown: a run's page renders at most" in html
    assert took < 0.5 + 8, took  # rendering all 100 files takes far longer than the budget
