"""The trigger-conditioned effect (issue 20, item 5): the with-skill arm split by whether the
agent loaded the skill, end to end through `run` with a real subprocess agent (the `command`
executor) that reports it, so "the skill does not help" can be told from "it was never loaded".

The agent script is deterministic: per eval it always, never, or once in four trials loads
the skill (and then answers with its codeword), and on one eval it loads it without saying so
(unknown, which must never count as "not loaded")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.analyze.cells import Arm, group_records
from skillassay.analyze.triggered import trigger_split
from skillassay.models import MODELS, Benchmark
from skillassay.models.runfiles import ExpectationResult
from skillassay.report.loading import load_text, loading_context
from skillassay.stats.binomial import wilson_interval
from skillassay.store.records import TrialRecord

AGENT = r'''
import json, os, pathlib, sys
prompt, counters = sys.argv[1], pathlib.Path(sys.argv[2])
skill_dir = os.environ["SKILLASSAY_SKILL_DIR"]
mode = prompt.split()[-1]
counter = counters / mode
n = int(counter.read_text()) if counter.exists() else 0
if skill_dir:
    counter.write_text(str(n + 1))
loaded = bool(skill_dir) and (mode in ("always", "silent") or (mode == "rarely" and n % 4 == 0))
if loaded:
    body = pathlib.Path(skill_dir, "SKILL.md").read_text()
    print("The codeword is", body.split("codeword is ")[1].split()[0])
else:
    print("I do not know the codeword.")
report = os.environ.get("SKILLASSAY_LOADED_SKILLS_FILE")
if skill_dir and mode != "silent" and report:
    pathlib.Path(report).write_text("codeword\n" if loaded else "")
'''

EVALS = [("always", 1), ("never", 2), ("rarely", 3), ("silent", 4)]


def make_skill(root: Path) -> Path:
    skill = root / "codeword"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: codeword\ndescription: Knows the codeword. Use when asked for the codeword.\n---\n"
        "# Codeword\nThe codeword is ZEBRA-42 and nothing else.\n", encoding="utf-8")
    evals = {"skill_name": "codeword", "evals": [
        {"id": i, "name": mode, "prompt": f"What is the codeword? mode {mode}",
         "expectations": [{"type": "contains", "value": "ZEBRA-42"}]} for mode, i in EVALS]}
    (skill / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    return skill


def run_split(tmp_path: Path) -> Path:
    skill = make_skill(tmp_path)
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    counters = tmp_path / "counters"
    counters.mkdir()
    argv = json.dumps([sys.executable, str(script), "{prompt}", str(counters)])
    ws = tmp_path / "ws"
    result = cli(["run", str(skill), "--executor", "command", "-o", f"argv={argv}",
                  "--trials", "4", "--concurrency", "1", "--workspace", str(ws),
                  "--sandbox", "none"])  # its counters live outside its work folder
    assert result.exit_code in (0, 1, 3), result.output
    return ws / "iteration-1"


@pytest.mark.slow
def test_with_skill_arm_is_split_by_whether_the_skill_was_loaded(tmp_path: Path) -> None:
    iteration = run_split(tmp_path)
    metrics = {f"{p.parents[3].name}/{p.parents[1].name}": json.loads(p.read_text())
               for p in iteration.glob("eval-*/with_skill/run-*/outputs/metrics.json")}
    triggered = {k: m["skill_triggered"] for k, m in metrics.items()}
    assert [v for k, v in sorted(triggered.items()) if k.startswith("eval-1")] == [True] * 4
    assert [v for k, v in sorted(triggered.items()) if k.startswith("eval-2")] == [False] * 4
    assert sorted(v for k, v in triggered.items() if k.startswith("eval-3")) == [False, False, False, True]
    assert [v for k, v in triggered.items() if k.startswith("eval-4")] == [None] * 4  # unknown, not false
    baseline = [json.loads(p.read_text())["skill_triggered"]
                for p in iteration.glob("eval-*/without_skill/run-*/outputs/metrics.json")]
    assert baseline == [None] * 16

    raw = json.loads((iteration / "benchmark.json").read_text())
    Benchmark.model_validate(raw)
    split = raw["trigger_conditioned"]
    assert split["configuration"] == "with_skill"
    rows = {r["eval_id"]: r for r in split["per_eval"]}
    assert rows[1]["loaded"]["trials"] == 4 and rows[1]["loaded"]["passes"] == 4
    assert rows[1]["not_loaded"]["trials"] == 0 and rows[1]["not_loaded"]["pass_rate"] is None
    assert rows[2]["not_loaded"] == {**rows[2]["not_loaded"], "trials": 4, "passes": 0, "pass_rate": 0.0}
    assert rows[2]["load_rate"] == 0.0 and rows[2]["rarely_loaded"] is True
    assert rows[3]["loaded"]["passes"] == 1 and rows[3]["not_loaded"]["trials"] == 3
    assert rows[3]["load_rate"] == 0.25 and rows[3]["rarely_loaded"] is True
    lo, hi = rows[3]["load_rate_wilson"]
    assert 0 < lo < 0.25 < hi < 1
    # Unknown is its own group: never "not loaded", never a load-rate denominator.
    assert rows[4]["unknown"] == {**rows[4]["unknown"], "trials": 4, "passes": 4}
    assert rows[4]["not_loaded"]["trials"] == 0 and rows[4]["load_rate"] is None
    assert rows[4]["rarely_loaded"] is False
    assert rows[1]["rarely_loaded"] is False

    overall = split["overall"]
    assert overall["loaded"]["trials"] == 5 and overall["loaded"]["passes"] == 5
    assert overall["loaded"]["pass_rate"] == 1.0 and overall["loaded"]["n_evals"] == 2
    assert overall["not_loaded"]["trials"] == 7 and overall["not_loaded"]["pass_rate"] == 0.0
    assert overall["unknown_trials"] == 4
    assert split["rarely_loaded_evals"] == [2, 3]
    # Clustered by eval, and never narrower than the trials-independent (Wilson) interval.
    lo, hi = overall["not_loaded"]["interval"]
    assert lo == 0.0 and hi > 0.2
    within = overall["within_eval_difference"]
    assert within["n_evals"] == 1 and within["mean"] == 1.0 and within["interval"] is None

    # `aggregate` streams the runs from disk (workflows/iteration_reader.py) and must split them the same way.
    again = iteration / "again.json"
    assert cli(["aggregate", str(iteration), "-o", str(again)]).exit_code == 0
    assert json.loads(again.read_text())["trigger_conditioned"] == split

    notes = raw["notes"]
    assert any("Eval 2 (never)" in n and "never loaded" in n for n in notes), notes
    assert any("Eval 3 (rarely)" in n and "1 of 4" in n for n in notes), notes
    assert not any("Eval 4 (silent)" in n and "loaded" in n for n in notes), notes

    report = (iteration / "report.md").read_text()
    section = report.split("### Skill loaded or not")[1].split("\n### ")[0]
    assert "observational" in section
    assert "| eval-3 (rarely) | 1 of 4 (25%" in section
    assert "unknown" in section
    bench_md = (iteration / "benchmark.md").read_text()
    assert "Skill loaded" in bench_md


# ---------------------------------------------------------------------------------------------
# The split's statistics, on records


def _records(eval_id: int, outcomes: list[tuple[bool | None, bool]]) -> list:
    return [TrialRecord(eval_id=eval_id, eval_name=f"e{eval_id}", configuration="with_skill", run_number=i + 1,
                        status="ok", passed=passed, passed_count=int(passed), total_count=1, skill_triggered=loaded)
            for i, (loaded, passed) in enumerate(outcomes)]


def _split(*evals: list[tuple[bool | None, bool]]) -> dict:
    records = [r for i, outcomes in enumerate(evals, 1) for r in _records(i, outcomes)]
    split = trigger_split(group_records(records, ("with_skill", "without_skill")), "with_skill", "without_skill")
    assert split is not None
    return split


def test_pooled_interval_is_clustered_by_eval_and_never_narrower_than_wilson() -> None:
    # Evals that agree exactly (all 3/3 when loaded): the clustered SE is 0, the interval is not a point.
    agree = _split(*[[(True, True)] * 3 for _ in range(4)])["overall"]["loaded"]
    lo, hi = agree["interval"]
    assert hi == 1.0 and lo == round(wilson_interval(12, 12)[0], 6) and lo < 0.8
    # Evals that disagree: wider than the pooled Wilson interval, which treats the 12 trials as independent.
    spread = _split([(True, True)] * 3, [(True, False)] * 3, [(True, True)] * 3, [(True, False)] * 3)
    lo, hi = spread["overall"]["loaded"]["interval"]
    wlo, whi = wilson_interval(6, 12)
    assert lo < wlo and hi > whi


def test_unknown_is_never_not_loaded_and_the_flag_is_below_half() -> None:
    split = _split([(True, True), (False, False)], [(None, False)] * 3, [(False, False), (False, True), (True, True)])
    rows = {r["eval_id"]: r for r in split["per_eval"]}
    assert rows[1]["load_rate"] == 0.5 and rows[1]["rarely_loaded"] is False  # exactly half: not "rarely"
    assert rows[2]["unknown"]["trials"] == 3 and rows[2]["not_loaded"]["trials"] == 0
    assert rows[2]["load_rate"] is None and rows[2]["rarely_loaded"] is False
    assert rows[3]["rarely_loaded"] is True and split["rarely_loaded_evals"] == [3]
    assert split["overall"]["not_loaded"]["trials"] == 3 and split["overall"]["unknown_trials"] == 3
    within = split["overall"]["within_eval_difference"]
    # eval 1: 1/1 - 0/1 = 1; eval 3: 1/1 - 1/2 = 0.5
    assert within["n_evals"] == 2 and within["mean"] == 0.75
    lo, hi = within["interval"]
    assert -1.0 <= lo < 0.75 < hi <= 1.0


def test_no_with_skill_trial_means_no_split_and_old_files_still_read() -> None:
    assert trigger_split(group_records([], ("with_skill",)), "with_skill", None) is None
    assert "trigger_conditioned" in MODELS["benchmark"].model_json_schema()["properties"]
    old = Benchmark.model_validate({"skill_name": "x", "summary": {"total_evals": 0, "with_skill": {"pass_rate": None},
                                                                   "baseline": {"pass_rate": None}}})
    assert old.trigger_conditioned is None and "trigger_conditioned" not in old.to_json_dict()


def test_an_executor_that_never_says_gives_one_sentence_and_no_flag() -> None:
    split = _split([(None, True)] * 3, [(None, False)] * 3)
    assert split["rarely_loaded_evals"] == [] and split["overall"]["load_rate"] is None
    bench = Benchmark.model_validate({"skill_name": "x", "trigger_conditioned": split,
                                      "summary": {"total_evals": 2, "with_skill": {"pass_rate": 0.5},
                                                  "baseline": {"pass_rate": 0.0}}})
    ctx = loading_context(bench)
    assert ctx is not None and ctx["rows"] == [] and ctx["recommendations"] == []
    assert ctx["sentences"] == ["The executor did not report whether the agent loaded the skill in any of the 6 "
                                "graded with-skill trials (unknown, not \"not loaded\"), so the pass rate cannot "
                                "be split by it."]


def test_merged_arms_keep_the_split() -> None:
    """Parallel readers (workflows/iteration_reader.py) count runs into separate Arms and merge them."""
    records = _records(1, [(True, True), (False, False), (None, True), (False, True)])
    whole, a, b = Arm(), Arm(), Arm()
    for r in records:
        whole.add(r)
    for r in records[:2]:
        a.add(r)
    for r in records[2:]:
        b.add(r)
    a.merge(b)
    assert (a.loaded_completed, a.loaded_passes, a.unloaded_completed, a.unloaded_passes) == (1, 1, 2, 1)
    assert a == whole


def test_the_load_rate_counts_ungraded_trials_whose_loading_is_known() -> None:
    """An ungraded trial is in no pass rate, but whether it loaded the skill is still known."""
    ungraded = TrialRecord(eval_id=1, eval_name="e1", configuration="with_skill", run_number=9, status="ok",
                           passed=None, total_count=1, skill_triggered=True,
                           expectations=(ExpectationResult(text="judged", passed=None),))
    records = [*_records(1, [(False, False), (False, False)]), ungraded]
    row = trigger_split(group_records(records, ("with_skill",)), "with_skill", None)["per_eval"][0]
    assert (row["known_trials"], row["loaded_trials"], row["loaded"]["trials"]) == (3, 1, 0)
    assert load_text(row).startswith("1 of 3 (33%")
