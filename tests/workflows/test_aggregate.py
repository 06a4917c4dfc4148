"""`skillassay aggregate`: every layout skill-creator workspaces use, numbers checked by hand.

Fixture runs are built from schemas.md's grading.json and timing.json examples, varying only the
verdicts, tokens and durations whose aggregates the tests compute by hand."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from skillassay.errors import InputError
from skillassay.models import Timing
from skillassay.store.discover import identity_from_folder
from skillassay.store.read import duration_of, read_trial
from skillassay.workflows.aggregate import aggregate_iteration

# schemas.md examples, verbatim where the tests do not vary them.
SPEC_GRADING: dict[str, Any] = {
    "expectations": [
        {"text": "The output includes the name 'John Smith'", "passed": True,
         "evidence": "Found in transcript Step 3: 'Extracted names: John Smith, Sarah Johnson'"},
        {"text": "The spreadsheet has a SUM formula in cell B10", "passed": False,
         "evidence": "No spreadsheet was created. The output was a text file."},
    ],
    "summary": {"passed": 2, "failed": 1, "total": 3, "pass_rate": 0.67},
    "execution_metrics": {"tool_calls": {"Read": 5, "Write": 2, "Bash": 8}, "total_tool_calls": 15,
                          "total_steps": 6, "errors_encountered": 0, "output_chars": 12450,
                          "transcript_chars": 3200},
    "timing": {"executor_duration_seconds": 165.0, "grader_duration_seconds": 26.0,
               "total_duration_seconds": 191.0},
    "user_notes_summary": {"uncertainties": ["Used 2023 data, may be stale"], "needs_review": [],
                           "workarounds": ["Fell back to text overlay for non-fillable fields"]},
}
SPEC_TIMING: dict[str, Any] = {
    "total_tokens": 84852, "duration_ms": 23332, "total_duration_seconds": 23.3,
    "executor_start": "2026-01-15T10:30:00Z", "executor_end": "2026-01-15T10:32:45Z",
    "executor_duration_seconds": 165.0, "grader_start": "2026-01-15T10:32:46Z",
    "grader_end": "2026-01-15T10:33:12Z", "grader_duration_seconds": 26.0,
}


def grading(verdicts: list[bool]) -> dict[str, Any]:
    """The spec's grading.json with these verdicts (texts reused in turn) and a matching summary."""
    g = copy.deepcopy(SPEC_GRADING)
    texts = [e["text"] for e in SPEC_GRADING["expectations"]]
    g["expectations"] = [{"text": f"{texts[i % 2]} #{i}", "passed": v, "evidence": "see output"}
                         for i, v in enumerate(verdicts)]
    n = sum(verdicts)
    g["summary"] = {"passed": n, "failed": len(verdicts) - n, "total": len(verdicts),
                    "pass_rate": round(n / len(verdicts), 2)}
    return g


def timing(tokens: int | None, seconds: float) -> dict[str, Any]:
    """The spec's timing.json with these figures; executor_duration_seconds keeps the spec's
    165.0, which must NOT be used while total_duration_seconds is there."""
    t = dict(SPEC_TIMING, total_duration_seconds=seconds, duration_ms=int(seconds * 1000))
    if tokens is None:
        del t["total_tokens"]
    else:
        t["total_tokens"] = tokens
    return t


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")


def write_run(run: Path, verdicts: list[bool], tokens: int | None, seconds: float) -> None:
    write(run / "grading.json", grading(verdicts))
    write(run / "timing.json", timing(tokens, seconds))
    write(run / "outputs" / "metrics.json", {"total_tool_calls": 18, "errors_encountered": 0,
                                              "output_chars": 12450, "transcript_chars": 3200})


# Hand-computed figures for the arms below (expectation pass rate = passed / total per run):
#   skill:    [1, 1, 1/2] -> runs fully passed 2/3; mean expectation rate 5/6 = 0.8333
#             tokens 1000, 2000, 3000 -> mean 2000; seconds 10, 20, 30 -> mean 20
#   baseline: [0, 1/2, 0] -> runs fully passed 0/3; mean expectation rate 1/6 = 0.1667
#             tokens 500, 500, 800 -> mean 600; seconds 5, 5, 5 -> mean 5
#   delta (skill - baseline): pass_rate +0.67, time +15.0, tokens +1400
GOOD = [([True, True], 1000, 10.0), ([True, True], 2000, 20.0), ([True, False], 3000, 30.0)]
POOR = [([False, False], 500, 5.0), ([True, False], 500, 5.0), ([False, False], 800, 5.0)]


def build(eval_dir: Path, arms: dict[str, list], *, run_level: bool = True) -> None:
    for config, runs in arms.items():
        for k, (verdicts, tokens, seconds) in enumerate(runs, start=1):
            write_run(eval_dir / config / f"run-{k}" if run_level else eval_dir / config, verdicts, tokens, seconds)


def documented(iteration: Path, prefix: str = "") -> Path:
    ev = iteration / prefix / "eval-1-alpha" if prefix else iteration / "eval-1-alpha"
    write(ev / "eval_metadata.json", {"eval_id": 1, "eval_name": "alpha", "prompt": "Fill the form"})
    build(ev, {"with_skill": GOOD, "without_skill": POOR})
    return iteration


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def check_hand_computed(bench: dict[str, Any], skill: str = "with_skill", baseline: str = "without_skill") -> None:
    rs = bench["run_summary"]
    assert rs[skill]["pass_rate"]["mean"] == pytest.approx(0.8333, abs=1e-4)
    assert rs[baseline]["pass_rate"]["mean"] == pytest.approx(0.1667, abs=1e-4)
    assert rs[skill]["tokens"]["mean"] == 2000 and rs[baseline]["tokens"]["mean"] == 600
    assert rs[skill]["time_seconds"]["mean"] == 20 and rs[baseline]["time_seconds"]["mean"] == 5
    assert rs["delta"] == {"pass_rate": "+0.67", "expectation_pass_rate": "+0.67", "time_seconds": "+15.0", "tokens": "+1400"}
    s = bench["summary"]
    assert s["with_skill"]["pass_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["baseline"]["pass_rate"] == 0
    assert s["with_skill"]["avg_tokens"] == 2000 and s["baseline"]["avg_tokens"] == 600


@pytest.mark.parametrize("prefix", ["", "runs"], ids=["documented", "legacy-runs-folder"])
def test_run_level_layouts_give_hand_computed_figures(tmp_path: Path, prefix: str) -> None:
    it = documented(tmp_path / "pdf-workspace" / "iteration-1", prefix)
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 0, result.output
    bench = load(it / "benchmark.json")
    check_hand_computed(bench)
    assert bench["metadata"]["skill_name"] == "pdf"  # from <skill>-workspace
    assert bench["metadata"]["evals_run"] == [1] and bench["metadata"]["runs_per_configuration"] == 3
    assert bench["iteration"] == 1 and len(bench["runs"]) == 6
    assert (it / "benchmark.md").read_text(encoding="utf-8").startswith("# Benchmark: pdf")


def test_run_entries_carry_every_field_the_viewer_reads(tmp_path: Path) -> None:
    it = documented(tmp_path / "iteration-1")
    bench = load(aggregate_iteration(it, timestamp="2026-01-15T10:30:00Z").json_path)
    run = next(r for r in bench["runs"] if r["configuration"] == "with_skill" and r["run_number"] == 3)
    assert run["eval_id"] == 1 and run["eval_name"] == "alpha"
    assert run["result"] == {"pass_rate": 0.5, "passed": 1, "failed": 1, "total": 2, "time_seconds": 30.0,
                             "tokens": 3000, "tool_calls": 18, "errors": 0}
    assert run["expectations"][1] == {"text": "The spreadsheet has a SUM formula in cell B10 #1",
                                      "passed": False, "evidence": "see output"}
    assert run["notes"] == ["Used 2023 data, may be stale", "Fell back to text overlay for non-fillable fields"]
    assert bench["metadata"]["timestamp"] == "2026-01-15T10:30:00Z"


def test_flat_outputs_layout_counts_as_run_one(tmp_path: Path) -> None:
    """eval-*/<config>/outputs/ with grading.json beside it: the old script wrote "runs": []."""
    it = tmp_path / "iteration-1"
    build(it / "eval-1-alpha", {"with_skill": GOOD[:1], "without_skill": POOR[:1]}, run_level=False)
    bench = load(aggregate_iteration(it).json_path)
    assert [(r["configuration"], r["run_number"]) for r in bench["runs"]] == [("with_skill", 1), ("without_skill", 1)]
    assert bench["run_summary"]["delta"] == {"pass_rate": "+1.00", "expectation_pass_rate": "+1.00", "time_seconds": "+5.0", "tokens": "+500"}


def test_old_skill_baseline_keeps_skill_minus_baseline(tmp_path: Path) -> None:
    """with_skill vs old_skill: alphabetical order would make old_skill the primary arm and
    flip every delta (the old script did)."""
    it = tmp_path / "iteration-2"
    build(it / "eval-1-alpha", {"old_skill": POOR, "with_skill": GOOD})
    check_hand_computed(load(aggregate_iteration(it).json_path), "with_skill", "old_skill")


def test_new_skill_worse_than_old_skill_gives_negative_delta(tmp_path: Path) -> None:
    it = tmp_path / "iteration-3"
    build(it / "eval-1-alpha", {"new_skill": POOR, "old_skill": GOOD})
    result = aggregate_iteration(it)
    assert (result.arms.skill, result.arms.baseline) == ("new_skill", "old_skill")
    delta = load(result.json_path)["run_summary"]["delta"]
    assert delta == {"pass_rate": "-0.67", "expectation_pass_rate": "-0.67", "time_seconds": "-15.0", "tokens": "-1400"}


def test_two_unrecognised_configuration_names_are_refused(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    build(it / "eval-1-alpha", {"v1": POOR, "v2": GOOD})
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 2
    assert "cannot tell the skill from the baseline" in result.output and "Traceback" not in result.output


def test_missing_tokens_stay_missing_never_output_chars(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    runs = [(v, None, s) for v, _, s in GOOD]
    build(it / "eval-1-alpha", {"with_skill": runs, "without_skill": POOR})
    bench = load(aggregate_iteration(it).json_path)
    assert all(r["result"]["tokens"] is None for r in bench["runs"] if r["configuration"] == "with_skill")
    assert bench["run_summary"]["with_skill"]["tokens"]["mean"] is None
    assert bench["run_summary"]["delta"]["tokens"] == "n/a"
    assert bench["summary"]["with_skill"]["avg_tokens"] is None


def test_tokens_from_metrics_usage_beside_grading(tmp_path: Path) -> None:
    """metrics.json may sit at run-K/metrics.json; our executors' `usage` gives the tokens."""
    run = tmp_path / "run-1"
    write(run / "grading.json", grading([True]))
    write(run / "timing.json", {"duration_ms": 1500})
    write(run / "metrics.json", {"total_tool_calls": 4, "usage": {"input_tokens": 300, "output_tokens": 45}})
    record, issues = read_trial(str(run), 1, "a", "with_skill", 1)
    assert issues == [] and record is not None
    assert (record.tokens, record.duration_seconds, record.tool_calls) == (345, 1.5, 4)


def test_duration_precedence_follows_timing_json() -> None:
    """total_duration_seconds (from the task notification) wins over the executor stamps, which
    the spec's own example shows disagreeing (23.3 s vs 165 s)."""
    assert duration_of(Timing.model_validate(SPEC_TIMING)) == 23.3
    assert duration_of(Timing(duration_ms=23332, executor_duration_seconds=165.0)) == 23.332
    assert duration_of(Timing(executor_duration_seconds=165.0)) == 165.0
    assert duration_of(Timing()) is None


def test_skill_creator_grading_without_our_fields(tmp_path: Path) -> None:
    """No summary, no evidence, no timing.json, no metrics.json: counts come from the
    expectations, the duration from grading.json's executor figure (never the grader-inclusive
    total), tokens stay missing."""
    run = tmp_path / "with_skill" / "run-1"
    write(run / "grading.json", {"expectations": [{"text": "a", "passed": True}, {"text": "b", "passed": False}],
                                 "timing": {"executor_duration_seconds": 165.0, "total_duration_seconds": 191.0}})
    record, issues = read_trial(str(run), 1, "a", "with_skill", 1)
    assert issues == [] and record is not None
    assert (record.passed_count, record.total_count, record.passed) == (1, 2, False)
    assert (record.duration_seconds, record.tokens) == (165.0, None)
    assert [e.evidence for e in record.expectations] == ["", ""]


def test_eval_identity_from_metadata_or_folder(tmp_path: Path) -> None:
    assert identity_from_folder("eval-3-foo") == (3, "foo")
    assert identity_from_folder("eval-foo") == ("foo", "foo")
    assert identity_from_folder("eval-12") == (12, "eval-12")
    it = tmp_path / "iteration-1"
    build(it / "eval-3-foo", {"with_skill": GOOD[:1], "without_skill": POOR[:1]})
    build(it / "eval-bar", {"with_skill": GOOD[:1], "without_skill": POOR[:1]})
    build(it / "descriptive-name", {"with_skill": GOOD[:1], "without_skill": POOR[:1]})
    write(it / "descriptive-name" / "eval_metadata.json", {"eval_id": 7, "eval_name": "described"})
    bench = load(aggregate_iteration(it).json_path)
    assert {(r["eval_id"], r["eval_name"]) for r in bench["runs"]} == {(3, "foo"), (7, "described"), ("bar", "bar")}


def test_missing_and_malformed_grading_are_listed_by_path(tmp_path: Path) -> None:
    it = documented(tmp_path / "iteration-1")
    ev = it / "eval-1-alpha"
    (ev / "with_skill" / "run-4" / "outputs").mkdir(parents=True)  # never graded
    write(ev / "with_skill" / "run-5" / "grading.json", "{not json")
    bad = grading([True])
    bad["summary"]["passed"] = 5
    write(ev / "without_skill" / "run-4" / "grading.json", bad)
    write(ev / "without_skill" / "run-5" / "grading.json", {"expectations": [{"text": "x", "passed": "maybe"}]})
    write(ev / "with_skill" / "run-1" / "timing.json", "[1, 2]")
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # rich may wrap long paths
    expected = [
        (ev / "with_skill" / "run-4" / "grading.json", "missing (run not graded)"),
        (ev / "with_skill" / "run-5" / "grading.json", "invalid JSON at line 1 column 2"),
        (ev / "without_skill" / "run-4" / "grading.json", "$.summary: passed (5) is greater than total (1)"),
        (ev / "without_skill" / "run-5" / "grading.json", "$.expectations[0].passed:"),
    ]
    notes = load(it / "benchmark.json")["notes"]
    for path, message in expected:
        assert f"{path}: {message}" in out
        assert any(n.startswith(f"Run not aggregated: {path}: {message}") for n in notes), notes
    timing_path = ev / "with_skill" / "run-1" / "timing.json"
    assert f"Partly read: {timing_path}: expected a JSON object; its figures are reported as missing" in notes
    bench = load(it / "benchmark.json")
    assert len(bench["runs"]) == 6  # the good ones, unchanged
    assert bench["run_summary"]["with_skill"]["tokens"]["mean"] == 2500  # run-1 lost its tokens: (2000+3000)/2


def test_empty_iteration_exits_2_naming_what_was_looked_for(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    it.mkdir()
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 2
    assert "no eval folder found" in result.output and "Traceback" not in result.output
    (it / "eval-1" / "with_skill" / "run-1").mkdir(parents=True)
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "none of the 1 run folder(s) has a usable grading.json" in out
    assert "eval-*/<config>/run-K/grading.json" in out
    assert f"{it / 'eval-1' / 'with_skill' / 'run-1' / 'grading.json'}: missing (run not graded)" in out
    assert not (it / "benchmark.json").exists()


def test_empty_iteration_raises_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no eval folder found"):
        aggregate_iteration(tmp_path)


def test_output_option_config_and_names(tmp_path: Path) -> None:
    it = documented(tmp_path / "iteration-1")
    config = tmp_path / "benchmark_config.json"
    write(config, {"skill_name": "pdf", "trials_per_eval": 5, "baseline_type": "no_skill",
                   "thresholds": {"min_pass_rate": 0.5}})
    out = tmp_path / "reports" / "b.json"
    result = cli(["aggregate", str(it), "--config", str(config), "-o", str(out),
                                 "--skill-path", "/skills/pdf"])
    assert result.exit_code == 0, result.output
    bench = load(out)
    assert bench["metadata"]["skill_name"] == "pdf" and bench["metadata"]["skill_path"] == "/skills/pdf"
    assert bench["metadata"]["runs_per_configuration"] == 5
    assert bench["per_eval"][0]["with_skill"]["trials_requested"] == 5
    # the estimate clears 0.5; the gate does not decide it on these few trials (issue 34)
    assert bench["estimate_meets"] == {"min_pass_rate": True} and bench["thresholds_met"] == {"min_pass_rate": False}
    assert "## Gate:" in (tmp_path / "reports" / "b.md").read_text(encoding="utf-8")
    assert not (it / "benchmark.json").exists()


def test_bad_config_is_input_error_naming_file_and_field(tmp_path: Path) -> None:
    it = documented(tmp_path / "iteration-1")
    config = tmp_path / "cfg.json"
    write(config, {"trials_per_eval": "three"})
    result = cli(["aggregate", str(it), "--config", str(config)])
    assert result.exit_code == 2
    assert str(config) in result.output and "trials_per_eval" in result.output


def test_skill_creator_evals_json_runs_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """skill-creator's evals.json (plain-string expectations, `files` relative to the skill
    root, optional `assertions`) validates and runs with a judge; without one, `run` refuses
    before any trial (each trial would end ungraded), naming the eval and --judge."""
    from tests.fake_openai_api import FakeOpenAI, grading_reply

    skill = tmp_path / "pdf"
    write(skill / "SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms. Use when a user has a PDF form.\n---\n# PDF\n")
    write(skill / "evals" / "files" / "sample1.txt", "Name: John Smith\n")
    evals = {"skill_name": "pdf", "evals": [{
        "id": 1, "prompt": "User's example prompt", "expected_output": "Description of expected result",
        "files": ["evals/files/sample1.txt"],
        "expectations": ["The output includes X", "The skill used script Y"],
        "assertions": ["The output names John Smith"],
    }]}
    write(skill / "evals" / "evals.json", evals)
    assert cli(["validate", str(skill / "evals" / "evals.json"), "--judge", "local"]).exit_code == 0
    ws = tmp_path / "ws"
    refused = cli(["run", str(skill), "--executor", "echo", "--workspace", str(ws), "--trials", "1"])
    assert refused.exit_code == 2 and "eval 1" in refused.output and "--judge" in refused.output, refused.output
    assert "$.evals[?(@.id==1)].expectations[0]" in refused.output and not ws.exists()  # nothing spent
    with FakeOpenAI([grading_reply([True, False, True], quote="example prompt")] * 2) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result = cli(["run", str(skill), "--executor", "echo", "--workspace", str(ws), "--trials", "1",
                      "--judge", "openai", "--allow-weak-judge"])
        fake.assert_clean()
    assert result.exit_code in (0, 1, 3), result.output  # a verdict, never bad input
    g = load(next((ws / "iteration-1").glob("eval-1*/with_skill/run-1/grading.json")))
    assert [e["text"] for e in g["expectations"]] == ["The output includes X", "The skill used script Y",
                                                     "The output names John Smith"]
    assert [e["passed"] for e in g["expectations"]] == [True, False, True]
    agg = cli(["aggregate", str(ws / "iteration-1")])
    assert agg.exit_code == 0, agg.output


@pytest.mark.parametrize("layout", ["documented", "legacy-runs-folder", "flat-outputs"])
@pytest.mark.slow
def test_viewer_renders_a_skill_creator_workspace(tmp_path: Path, layout: str) -> None:
    """Aggregated, gated and shown in the viewer without re-running anything, in each layout."""
    from skillassay.viewer.build import build_index, run_payload

    it = tmp_path / "pdf-workspace" / "iteration-1"
    if layout == "flat-outputs":
        build(it / "eval-1-alpha", {"with_skill": GOOD[:1], "without_skill": POOR[:1]}, run_level=False)
        (it / "eval-1-alpha" / "with_skill" / "outputs" / "answer.md").write_text("# Filled\nform done")
    else:
        documented(it, "runs" if layout == "legacy-runs-folder" else "")
    assert cli(["aggregate", str(it)]).exit_code == 0
    index = build_index(it)
    expected = 2 if layout == "flat-outputs" else 6
    assert len(index.runs) == expected
    assert {r.configuration for r in index.runs} == {"with_skill", "without_skill"}
    first = index.runs[0]
    assert first.configuration == "with_skill" and first.eval_name == "alpha" and first.total == 2
    payload = run_payload(index, first.run_id, None, served=False)
    assert payload is not None and payload["grading"]["expectations"]
    names = [f["name"] for f in payload["files"]]
    assert "metrics.json" in names
    if layout == "flat-outputs":
        assert "answer.md" in names
    out = tmp_path / "view.html"
    assert cli(["view", str(it), "--static", str(out)]).exit_code == 0
    assert out.stat().st_size > 1000


def varied_iteration(iteration: Path, n_evals: int = 6) -> Path:
    """Evals with different trial counts, an errored run, missing tokens and an extra
    configuration: enough variety for every figure to depend on every run."""
    for e in range(1, n_evals + 1):
        ev = iteration / f"eval-{e}-case"
        write(ev / "eval_metadata.json", {"eval_id": e * 5, "eval_name": f"case {e}"})
        build(ev, {"with_skill": GOOD[: 1 + e % 3], "without_skill": POOR, "variant": GOOD[e % 2:]})
        write(ev / "without_skill" / "run-2" / "outputs" / "metrics.json", {"status": "error", "error": "boom"})
        write(ev / "with_skill" / "run-1" / "timing.json", timing(None, 4.0 + e))
    return iteration


def streamed_equals_records(it: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Aggregate `it` in-process and in worker processes, and build benchmark.json from records
    held in memory (the `run` / `grade` path): all three must agree, byte for byte where they
    write the same file. Returns the streamed benchmark."""
    import skillassay.workflows.iteration_reader as reader
    from skillassay.analyze.arms import pick_arms
    from skillassay.analyze.benchmark import build_benchmark
    from skillassay.models import BenchmarkConfig
    from skillassay.store.benchmark_file import write_benchmark
    from skillassay.workflows.aggregate import collect

    one = aggregate_iteration(it, output=out / "one.json", timestamp="T")
    with monkeypatch.context() as m:
        m.setattr(reader, "PARALLEL_FROM_RUNS", 1)
        m.setattr(reader, "MAX_WORKERS", 3)
        m.setattr(reader, "_idle_cores", lambda: 2.0)  # workers even when the machine is busy
        assert reader._workers(6, 100) >= 2 or (reader.os.cpu_count() or 1) == 1
        many = aggregate_iteration(it, output=out / "many.json", timestamp="T")
    assert one.runs_read == many.runs_read
    assert (out / "one.json").read_bytes() == (out / "many.json").read_bytes()
    records = collect(it).records
    bench = build_benchmark(records, skill_name="w", skill_path=None, iteration=1, timestamp="T",
                            trials_requested=one.benchmark.metadata.runs_per_configuration,
                            thresholds=BenchmarkConfig().thresholds,
                            arms=pick_arms(r.configuration for r in records))
    write_benchmark(out / "records.json", bench)
    from_records, streamed = load(out / "records.json"), load(out / "one.json")
    for key in ("runs", "run_summary", "summary", "per_eval", "statistics"):
        assert from_records[key] == streamed[key], key
    assert [n for n in streamed["notes"] if n in from_records["notes"]] == from_records["notes"]
    assert not list(out.rglob(".skillassay-spool-*"))
    return streamed


def test_worker_processes_write_what_one_process_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big iterations are read in worker processes, eval by eval, with runs[] spooled to disk
    and statistics merged from per-eval counts; small ones in-process from the same code; the
    records path (`run`, `grade`) builds from records held in memory."""
    it = varied_iteration(tmp_path / "w-workspace" / "iteration-1")
    streamed = streamed_equals_records(it, tmp_path, monkeypatch)
    # with_skill 2,3,1,2,3,1 runs; without_skill 3 each; variant 2,3,2,3,2,3
    assert len(streamed["runs"]) == 12 + 18 + 15
    assert [(r["eval_id"], r["configuration"], r["run_number"]) for r in streamed["runs"]][:4] == [
        (5, "variant", 1), (5, "variant", 2), (5, "with_skill", 1), (5, "with_skill", 2)]


def test_workers_only_when_a_core_is_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes cost CPU (fork, contention, result transfer) and only pay when a core is
    free: a busy machine reads in one process, a quiet one in several once there is enough."""
    import skillassay.workflows.iteration_reader as reader

    monkeypatch.setattr(reader, "_cpus", lambda: 2)
    monkeypatch.setattr(reader, "_idle_cores", lambda: 0.4)
    assert reader._workers(50, 20_000) == 1
    monkeypatch.setattr(reader, "_idle_cores", lambda: 1.6)
    assert reader._workers(50, 20_000) == 4
    assert reader._workers(50, reader.PARALLEL_FROM_RUNS - 1) == 1
    assert reader._workers(3, 20_000) == 3


def test_folders_sharing_an_eval_id_aggregate_as_records_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two folders, one eval id, different names and configurations (and ids 3 and "3", which
    sort alike): the eval's name, the configurations' order and runs[] follow record order."""
    it = tmp_path / "iteration-1"
    build(it / "eval-1-a", {"with_skill": GOOD[:1], "without_skill": POOR[:1], "zz": GOOD[:1]})
    build(it / "runs" / "eval-1-b", {"aa": POOR[:2]})
    build(it / "eval-3-x", {"with_skill": GOOD[:2], "without_skill": POOR[:2]})
    build(it / "runs" / "three", {"with_skill": GOOD[2:], "without_skill": POOR[2:]})
    write(it / "runs" / "three" / "eval_metadata.json", {"eval_id": "3", "eval_name": "text id"})
    streamed = streamed_equals_records(it, tmp_path, monkeypatch)
    assert [k for k in streamed["run_summary"] if k != "delta"] == ["with_skill", "without_skill", "aa", "zz"]
    assert streamed["per_eval"][0]["eval_name"] == "b"  # eval 1's first record: aa/run-1, in folder b
    assert [(r["eval_id"], r["run_number"]) for r in streamed["runs"] if r["configuration"] == "with_skill"] == [
        (1, 1), (3, 1), ("3", 1), (3, 2)]


def test_mistyped_iteration_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "ws" / "iteration-1"
    with pytest.raises(InputError, match="not a folder"):
        aggregate_iteration(missing)
    assert not (tmp_path / "ws").exists()
    it = tmp_path / "iteration-2"
    (it / "eval-1" / "with_skill" / "run-1").mkdir(parents=True)  # nothing graded
    with pytest.raises(InputError, match="usable grading.json"):
        aggregate_iteration(it, output=tmp_path / "new-folder" / "b.json")
    assert not (tmp_path / "new-folder").exists()


def test_huge_integers_nan_and_lone_surrogates_are_read_as_written(tmp_path: Path) -> None:
    """Untrusted files: a 20-digit token count stays an exact integer (orjson would make it a
    float), a NaN duration is reported as missing (no crash in the statistics), and a lone
    surrogate in evidence still gives valid JSON."""
    it = documented(tmp_path / "iteration-1")
    run = it / "eval-1-alpha" / "with_skill" / "run-1"
    write(run / "timing.json", '{"total_tokens": 18446744073709551616, "total_duration_seconds": NaN}')
    g = grading([True, True])
    g["expectations"][0]["evidence"] = "\ud800"  # json.dumps writes it escaped
    g["expectations"][1]["ref"] = 123456789012345678901234567890
    del g["timing"]  # else its executor_duration_seconds stands in for the missing duration
    write(run / "grading.json", g)
    result = aggregate_iteration(it)
    bench = load(result.json_path)
    entry = next(r for r in bench["runs"] if r["configuration"] == "with_skill" and r["run_number"] == 1)
    assert entry["result"]["tokens"] == 18446744073709551616
    assert entry["result"]["time_seconds"] is None
    assert entry["expectations"][1]["ref"] == 123456789012345678901234567890
    assert entry["expectations"][0]["evidence"] == "\ud800"
    assert any("total_duration_seconds: unexpected value nan" in w for w in result.warnings), result.warnings
    assert bench["run_summary"]["with_skill"]["time_seconds"]["mean"] == 25  # (20 + 30) / 2


def test_one_eval_split_over_legacy_and_current_roots_keeps_run_order(tmp_path: Path) -> None:
    """The same eval id in runs/ (runs 1 and 3) and at the top (run 2): runs[] in run order."""
    it = tmp_path / "iteration-1"
    for root, k in (("runs", 1), ("", 2), ("runs", 3)):
        ev = it / root / "eval-1-a" if root else it / "eval-1-a"
        write_run(ev / "with_skill" / f"run-{k}", [True], 100 * k, 1.0)
        write_run(ev / "without_skill" / f"run-{k}", [False], 10 * k, 1.0)
    bench = load(aggregate_iteration(it).json_path)
    assert [(r["configuration"], r["run_number"], r["result"]["tokens"]) for r in bench["runs"]] == [
        ("with_skill", 1, 100), ("with_skill", 2, 200), ("with_skill", 3, 300),
        ("without_skill", 1, 10), ("without_skill", 2, 20), ("without_skill", 3, 30)]
    assert bench["run_summary"]["with_skill"]["tokens"]["mean"] == 200


@pytest.mark.parametrize("where", ["one-folder", "two-folders"])
def test_two_folders_claiming_one_run_exit_2(tmp_path: Path, where: str) -> None:
    it = tmp_path / "iteration-1"
    write_run(it / "eval-1-a" / "with_skill" / "run-1", [True], 1, 1.0)
    second = it / ("eval-1-a" if where == "one-folder" else "runs/eval-1-b") / "with_skill" / "run-01"
    write_run(second, [False], 2, 1.0)
    result = cli(["aggregate", str(it)])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    assert "eval 1 with_skill run 1 is also at" in out and "Traceback" not in out
    assert not (it / "benchmark.json").exists()
    assert not [p for p in tmp_path.rglob(".skillassay-spool-*")]


@pytest.mark.parametrize("workers", [1, 3])
def test_progress_is_reported_once_per_eval_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     workers: int) -> None:
    """`skillassay aggregate` draws a bar from these calls: one per eval, counting up to all."""
    import skillassay.workflows.iteration_reader as reader

    it = varied_iteration(tmp_path / "iteration-1", n_evals=5)
    monkeypatch.setattr(reader, "PARALLEL_FROM_RUNS", 1)
    monkeypatch.setattr(reader, "MAX_WORKERS", workers)
    monkeypatch.setattr(reader, "_idle_cores", lambda: 2.0)
    calls: list[tuple[int, int]] = []
    aggregate_iteration(it, on_eval=lambda done, total: calls.append((done, total)))
    assert calls == [(k, 5) for k in range(1, 6)]
