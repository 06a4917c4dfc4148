"""What `run` and `aggregate` say and exit with when the measurement cannot carry a verdict
(everything errored), when nothing was gated, and when the gate is undecided: real runs of
the `echo` executor on the example skill, real files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runner import cli


def run_echo(skill: Path, ws: Path, cfg: dict, *extra: str) -> tuple[int, str]:
    path = ws.parent / "cfg.json"
    path.write_text(json.dumps(cfg))
    result = cli(["run", str(skill), "--executor", "echo", "--workspace", str(ws),
                                 "--config", str(path), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_every_trial_errored_never_exits_0_and_says_why(example_skill: Path, tmp_path: Path) -> None:
    # --fail-fast 0: every trial runs (by default the run stops after five identical failures)
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1},
                         "-o", "delay_seconds=2", "--timeout", "0.05", "--fail-fast", "0")
    assert code == 3, out
    assert "gate: PASS" not in out and "gate: INVALID" in out
    assert "all with_skill trials errored" in out and "all baseline trials errored" in out
    assert "16 trials run (16 errored)" in out
    assert "next: Fix the measurement first" in out
    it = tmp_path / "ws" / "iteration-1"
    assert "INVALID" in (it / "benchmark.md").read_text() and "This measurement is invalid" in (it / "report.md").read_text()
    # the same files aggregated again: aggregate says so and does not exit 0 either
    result = cli(["aggregate", str(it)])
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


def _rewrite_metadata(iteration: Path, eval_id: int, **changes: object) -> None:
    path = iteration / f"eval-{eval_id}-e{eval_id}" / "eval_metadata.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_an_eval_is_the_same_only_if_its_content_is(tmp_path: Path) -> None:
    from iteration_factory import write_iteration

    same = {i: ("PPP", "FFF") for i in range(3, 9)}
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), **same})
    it = write_iteration(tmp_path, 2, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), **same})
    # eval 1 is now another task under the same id; eval 2 is the same eval and really regressed
    _rewrite_metadata(it, 1, eval_name="opening-time", prompt="When does the office open?")
    result = cli(["compare", str(it), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["changed_evals"] == [{"eval_id": 1, "eval_name": "opening-time", "previous_eval_name": "e1",
                                      "changed": ["prompt"]}]
    assert 1 not in [r["eval_id"] for r in data["per_eval"]] and 2 in [r["eval_id"] for r in data["per_eval"]]
    assert any("not compared" in n and "prompt of eval-1 (opening-time)" in n for n in data["notes"])
    assert all(r["eval_id"] != 1 for r in data["raw_regressions"] if isinstance(r, dict)) and 1 not in data["raw_regressions"]
    # changed expectations or input files count too; an unchanged eval does not
    _rewrite_metadata(it, 3, expectations=["answer is right", {"type": "contains", "value": "4433"}])
    _rewrite_metadata(it, 4, files=["data.csv"], files_sha256={"data.csv": "ab" * 32})
    data = json.loads(cli(["compare", str(it), "--json"]).stdout)
    assert {r["eval_id"]: r["changed"] for r in data["changed_evals"]} == {1: ["prompt"], 3: ["expectations"]}
    # eval 4: files recorded only now (an older iteration never recorded them) is not a change
    _rewrite_metadata(tmp_path / "iteration-1", 4, files=["data.csv"], files_sha256={"data.csv": "cd" * 32})
    data = json.loads(cli(["compare", str(it), "--json"]).stdout)
    assert {r["eval_id"]: r["changed"] for r in data["changed_evals"]} == {1: ["prompt"], 3: ["expectations"], 4: ["files"]}
    out = cli(["compare", str(it)]).output
    assert "eval-2 (e2): regressed" in out  # the same eval, really worse: called
    assert "eval-1 (opening-time): " not in out.split("Changed since")[0]  # never reported as a regression


def test_run_records_input_files_in_eval_metadata(example_skill: Path, tmp_path: Path) -> None:
    evals = json.loads((example_skill / "evals" / "evals.json").read_text())
    (example_skill / "notes.txt").write_text("port 4433\n")
    evals["evals"][0]["files"] = ["notes.txt"]
    (example_skill / "evals" / "evals.json").write_text(json.dumps(evals))
    code, out = run_echo(example_skill, tmp_path / "ws", {"trials_per_eval": 1})
    assert code == 0, out
    meta = json.loads(next((tmp_path / "ws" / "iteration-1").glob("eval-1-*/eval_metadata.json")).read_text())
    assert meta["files"] == ["notes.txt"] and len(meta["files_sha256"]["notes.txt"]) == 64


def test_run_suggests_baseline_from_when_only_the_skill_changed(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1})
    assert "--baseline-from" not in out  # first iteration: nothing to reuse
    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nOne more line.\n")
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1})
    assert "skill changed since iteration 1" in out
    assert "tip: the baseline arm is unchanged since iteration 1" in out
    assert "`--baseline-from 1` reuses its 8 graded baseline trials" in out
    # taking the advice: the baseline is copied, not run, and nothing is suggested any more
    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nAnd another.\n")
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1}, "--baseline-from", "2")
    assert "8 trials already graded, 8 to run" in out and "tip:" not in out
    # settings changed (another seed): the baseline is not the same measurement, no suggestion
    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nAnd a third.\n")
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1}, "--seed", "7")
    assert "tip:" not in out


def _skill_creator_iteration(root: Path) -> tuple[Path, Path]:
    """Runs executed by someone else, laid out as skill-creator does: descriptive eval folder
    names, outputs on disk, no iteration.json, no grading yet (and one legacy flat run)."""
    it = root / "report-skill-workspace" / "iteration-1"
    answers = {"with_skill": ["Total: 42 EUR", "Total: 42 EUR"], "without_skill": ["about forty", "42 EUR in all"]}
    folder = it / "summarise-invoice"
    folder.mkdir(parents=True)
    (folder / "eval_metadata.json").write_text(json.dumps({"eval_id": 0, "eval_name": "summarise-invoice",
                                                           "prompt": "Summarise the invoice"}))
    for config, texts in answers.items():
        for k, text in enumerate(texts, start=1):
            out = folder / config / f"run-{k}" / "outputs"
            out.mkdir(parents=True)
            (out / "summary.md").write_text(text)
    flat = it / "eval-1-totals" / "with_skill" / "outputs"  # no run-K level, no metadata
    flat.mkdir(parents=True)
    (flat / "summary.md").write_text("Total: 42 EUR")
    evals = root / "evals.json"
    evals.write_text(json.dumps({"skill_name": "report-skill", "evals": [
        {"id": 0, "prompt": "Summarise the invoice",
         "expectations": [{"type": "file_contains", "path": "summary.md", "value": "42 EUR"}]},
        {"id": 1, "prompt": "Give the total",
         "expectations": [{"type": "file_contains", "path": "summary.md", "value": "42"}]}]}))
    return it, evals


def test_grade_with_evals_works_on_a_skill_creator_iteration(tmp_path: Path) -> None:
    it, evals = _skill_creator_iteration(tmp_path)
    result = cli(["grade", str(it), "--evals", str(evals)])
    assert result.exit_code == 0, result.output
    assert "re-graded 5 runs" in result.output
    g = json.loads((it / "summarise-invoice" / "without_skill" / "run-1" / "grading.json").read_text())
    assert g["summary"]["passed"] == 0 and g["summary"]["total"] == 1
    assert (it / "eval-1-totals" / "with_skill" / "grading.json").is_file()
    assert not (it / "eval-0").exists()  # metadata updated in the eval's own folder, no new one
    bench = json.loads((it / "benchmark.json").read_text())
    assert bench["skill_name"] == "report-skill" and bench["iteration"] == 1
    assert bench["summary"]["with_skill"]["pass_rate"] == 1.0 and bench["summary"]["baseline"]["pass_rate"] == 0.5
    # and `aggregate` reads the same folder to the same figures
    assert cli(["aggregate", str(it)]).exit_code in (0, 3)
    again = json.loads((it / "benchmark.json").read_text())
    assert again["summary"]["with_skill"]["pass_rate"] == 1.0
    # without --evals there is nothing to grade against: said, exit 2
    result = cli(["grade", str(it)])
    assert result.exit_code == 2 and "--evals" in result.output


def test_view_on_a_workspace_opens_its_latest_iteration(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, {"trials_per_eval": 1})
    page = tmp_path / "view.html"
    result = cli(["view", str(ws), "--static", str(page)])
    assert result.exit_code == 0, result.output
    assert "opening its latest iteration, iteration-1" in result.output
    html = page.read_text()
    expected = tmp_path / "expected.html"
    assert cli(["view", str(ws / "iteration-1"), "--static", str(expected)]).exit_code == 0
    assert "server-port" in html and len(html) > 0.9 * len(expected.read_text())


def test_history_and_notes_say_expectation_pass_rate(example_skill: Path, tmp_path: Path, caplog) -> None:
    from rich.console import Console

    from skillassay.cli.improve import render_history
    from skillassay.improve.history import load_history

    ws = tmp_path / "ws"
    run_echo(example_skill, ws, {"trials_per_eval": 1})
    console = Console(width=200, record=True)
    console.print(render_history(load_history(ws)))
    header = next(line for line in console.export_text().splitlines() if "version" in line)
    assert "expectation pass rate" in header
    notes = json.loads((ws / "iteration-1" / "benchmark.json").read_text())["notes"]
    cost = next(n for n in notes if n.startswith("Skill "))
    assert "the expectation pass rate by" in cost and "percentage points" in cost
    md = (ws / "iteration-1" / "benchmark.md").read_text()
    assert "tokens, skill / baseline (`token_savings_ratio`): " in md and "with the skill)" in md


def test_bad_history_is_named_not_a_class_name(example_skill: Path, tmp_path: Path, caplog) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "history.json").write_text('{"skill_name": 3}')
    with caplog.at_level("WARNING"):
        code, out = run_echo(example_skill, ws, {"trials_per_eval": 1})
    text = out + caplog.text
    assert "history.json not updated" in text and "$.skill_name" in text
    assert "InputError" not in text


def test_cost_ratio_reads_as_a_cost_or_a_saving() -> None:
    from skillassay.report.benchmark_md import cost_ratio

    assert cost_ratio(3.64, "tokens") == "3.64x (264% more tokens with the skill)"
    assert cost_ratio(0.73, "tokens") == "0.73x (27% less tokens with the skill)"
    assert cost_ratio(None, "time") == "n/a (undefined)"


def test_viewer_gate_of_an_unbounded_ratio_is_valid_json(tmp_path: Path) -> None:
    from iteration_factory import write_iteration

    from skillassay.viewer.build import gate_view

    it = write_iteration(tmp_path, 1, {i: ("PPP", "FFF") for i in range(1, 7)},
                         thresholds={"min_improvement_ratio": 1.5})
    view = gate_view(it, json.loads((it / "benchmark.json").read_text()))
    assert view is not None and view["status"] == "PASS"
    json.dumps(view, allow_nan=False)  # the page's data is JSON: no Infinity in it
    assert "unbounded" in view["thresholds"][0]["line"]
    broken = write_iteration(tmp_path / "b", 1, {1: ("EEE", "FFF"), 2: ("EEE", "FFF")}, thresholds={"min_pass_rate": 0.5})
    view = gate_view(broken, json.loads((broken / "benchmark.json").read_text()))
    assert view is not None and view["status"] == "INVALID" and "all with_skill trials errored" in view["headline"]


@pytest.mark.slow
def test_report_shows_an_unbounded_ratio_that_passes(tmp_path: Path) -> None:
    from iteration_factory import write_iteration

    it = write_iteration(tmp_path, 1, {i: ("PPP", "FFF") for i in range(1, 7)},
                         thresholds={"min_improvement_ratio": 1.5})
    assert cli(["report", str(it)]).exit_code == 0
    text = (it / "report.md").read_text()
    assert "**Gate: PASS**" in text
    row = next(line for line in text.splitlines() if line.startswith("| Improvement |"))
    assert "unbounded (the baseline passed nothing) (95% CI " in row and row.rstrip().endswith("| PASS |")


def test_baseline_of_unchanged_evals_is_reused_when_another_eval_changed(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_echo(example_skill, ws, {"trials_per_eval": 1})
    evals_path = example_skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text())
    evals["evals"][1]["prompt"] += " Answer in one word."
    evals_path.write_text(json.dumps(evals))
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1})
    assert "evals, skill changed since iteration 1" in out  # evals/ is inside the skill folder
    assert "tip: the baseline arm is unchanged since iteration 1 (same settings, and 7 of 8 evals unchanged)" in out
    evals["evals"][1]["prompt"] += " Really."
    evals_path.write_text(json.dumps(evals))
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1}, "--baseline-from", "1")
    assert "7 trials already graded, 9 to run" in out, out
    prov = json.loads((ws / "iteration-3" / "baseline_reuse.json").read_text())
    assert len(prov["runs"]) == 7 and not any(r.startswith("eval-2-") for r in prov["runs"])
    # another seed: a different measurement, refused as before
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 1}, "--baseline-from", "1", "--seed", "5")
    assert code == 2 and "cannot reuse" in out


def test_grade_says_when_the_regraded_figures_are_no_measurement(tmp_path: Path) -> None:
    from iteration_factory import write_iteration

    it = write_iteration(tmp_path / "ws", 1, {1: ("EEE", "FFF"), 2: ("EEE", "FFF")})
    evals = tmp_path / "evals.json"
    evals.write_text(json.dumps({"skill_name": "synthetic", "evals": [
        {"id": i, "prompt": "q", "expectations": [{"type": "contains", "value": "x"}]} for i in (1, 2)]}))
    result = cli(["grade", str(it), "--evals", str(evals)])
    assert result.exit_code == 0, result.output
    assert "measurement invalid: all with_skill trials errored" in result.output


def test_with_skill_runs_of_unchanged_evals_are_reused_when_only_the_eval_set_changed(
        example_skill: Path, tmp_path: Path) -> None:
    """Same skill, settings and seed, and an eval that did not change: its with_skill trials are
    the same measurement, so a new iteration (started because another eval changed) copies them
    instead of paying for them again. The eval set lives outside the skill folder here: inside
    it, editing it changes what the agent sees, and then nothing is the same measurement."""
    ws = tmp_path / "ws"
    evals_path = tmp_path / "evals.json"
    shutil.move(example_skill / "evals" / "evals.json", evals_path)
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 2}, "--evals", str(evals_path))
    assert "32 to run" in out, out
    evals = json.loads(evals_path.read_text())
    evals["evals"][1]["prompt"] += " Answer in one word."
    evals_path.write_text(json.dumps(evals))
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 2}, "--evals", str(evals_path))
    it2 = ws / "iteration-2"
    assert it2.is_dir(), out
    assert "14 trials already graded, 18 to run" in out, out  # 7 unchanged evals x 2 with_skill trials
    assert "tip: 14 with_skill trials of evals unchanged since iteration-1" in out, out
    prov = json.loads((it2 / "skill_reuse.json").read_text())
    assert len(prov["runs"]) == 14 and all("/with_skill/" in r for r in prov["runs"])
    assert not any(r.startswith("eval-2-") for r in prov["runs"])
    # another seed is another measurement: nothing reused
    code, out = run_echo(example_skill, ws, {"trials_per_eval": 2}, "--evals", str(evals_path), "--seed", "5")
    assert "0 trials already graded, 32 to run" in out, out
