"""Plain-language expectations need a judge, and an expectation left without a verdict is never
a failure: `run` refuses up front without a judge; a trial the judge could not grade is
"ungraded", in no pass rate, counted in benchmark.json (`ungraded_trials`) and said so by the
console, benchmark.md, report.md and the viewer. Real echo executor, real files, the judge on
a loopback OpenAI API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from skillassay.analyze.cells import Arm
from skillassay.store.records import Outcome, TrialRecord
from tests.fake_openai_api import FakeOpenAI, grading_reply

PLAIN = "The answer is friendly"


def write_evals(skill: Path) -> Path:
    """Eval 1 is graded by a program (both arms pass it); eval 2 needs the judge."""
    path = skill / "evals" / "evals.json"
    path.write_text(json.dumps({"skill_name": "acme-vpn", "evals": [
        {"id": 1, "name": "typed", "prompt": "What port does the Acme VPN server use?",
         "expectations": [{"type": "icontains", "value": "acme"}]},
        {"id": 2, "name": "tone", "prompt": "Say hello to a new Acme VPN user.",
         "expectations": [{"type": "icontains", "value": "hello"}, PLAIN]},
    ]}), encoding="utf-8")
    return path


def run_cli(skill: Path, ws: Path, *extra: str) -> Any:
    return cli(["run", str(skill), "--evals", str(skill / "evals" / "evals.json"), "--executor",
                               "echo", "--workspace", str(ws), "--trials", "2", *extra])


@pytest.mark.parametrize("judge", [[], ["--judge", "none"]])
def test_run_refuses_plain_expectations_without_a_judge(example_skill: Path, tmp_path: Path, judge: list[str]):
    """The README's own "Writing evals" example scored 0/3 on right answers: each plain string
    was recorded passed null and the trial counted as failed. Now nothing runs at all."""
    write_evals(example_skill)
    ws = tmp_path / "ws"
    result = run_cli(example_skill, ws, *judge)
    assert result.exit_code == 2, result.output
    assert "evals.json: $.evals[?(@.id==2)].expectations[1]" in result.output
    assert "eval 2 (tone)" in result.output and repr(PLAIN) in result.output and "--judge local" in result.output
    assert "eval 1" not in result.output  # only the evals that need a judge are named
    assert "Traceback" not in result.output and not ws.exists()  # no trial, no iteration folder


def run_ungraded(skill: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The judge answers, but its quote is not in the output: eval 2's four trials end ungraded."""
    write_evals(skill)
    with FakeOpenAI([grading_reply(True, quote="the moon is made of cheese")] * 4) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result = run_cli(skill, ws, "--judge", "openai", "--allow-weak-judge", "--junit", str(ws.parent / "junit.xml"))
        fake.assert_clean()
    assert result.exit_code != 2, result.output
    return result


def test_an_ungraded_trial_is_not_a_failure(example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Eval 2's four ungraded trials are out of every pass rate (the with-skill pass rate is
    eval 1's 100%, not 50%), counted per arm and per eval, and every surface says so."""
    ws = tmp_path / "ws"
    result = run_ungraded(example_skill, ws, monkeypatch)
    it = ws / "iteration-1"
    bench = json.loads((it / "benchmark.json").read_text())

    s = bench["summary"]
    assert s["with_skill"]["ungraded_trials"] == 2 and s["baseline"]["ungraded_trials"] == 2
    assert s["with_skill"]["pass_rate"] == 1.0 and s["baseline"]["pass_rate"] == 1.0  # eval 1 only
    tone = next(pe for pe in bench["per_eval"] if pe["eval_id"] == 2)
    assert tone["with_skill"]["ungraded_trials"] == 2 and tone["with_skill"]["trials_completed"] == 0
    assert tone["with_skill"]["pass_rate"] is None  # no graded trial: no rate, not 0%
    assert bench["run_summary"]["with_skill"]["ungraded_trials"] == 2
    assert bench["run_summary"]["without_skill"]["ungraded_trials"] == 2
    run = next(r for r in bench["runs"] if r["eval_id"] == 2 and r["configuration"] == "with_skill")
    assert run["result"]["passed"] == 1 and run["result"]["failed"] == 0 and run["result"]["total"] == 2
    assert any(n.startswith("trial ungraded: 1 of 2 expectations") for n in run["notes"])
    st = bench["statistics"]
    assert st["configurations"]["with_skill"]["trials_ungraded"] == 2
    assert st["per_eval"][1]["configurations"]["with_skill"]["ungraded"] == 2
    assert any(f.startswith("measurement invalid: 2 of 4 with_skill trials ungraded") for f in st["validity"])
    assert any("Eval 2 (tone) with_skill: 2 of 2 trials ungraded" in n for n in bench["notes"])
    assert "All without_skill trials failed" not in " ".join(bench["notes"])

    # The console: each ungraded trial's line, then the count.
    assert "eval 2 with_skill run-1: UNGRADED" in result.output
    assert "4 trials ungraded (an expectation has no verdict)" in result.output
    md = (it / "benchmark.md").read_text()
    assert "**⚠ 4 trials ungraded** (2 with skill, 2 baseline)" in md and "| Ungraded trials (excluded) | 2 | 2 |" in md
    report = (it / "report.md").read_text()
    assert "This measurement is invalid" in report and "2 of 4 with_skill trials ungraded" in report
    assert "no graded trial (2 ungraded)" in report and "Grade the 4 ungraded trials" in report

    from skillassay.viewer.build import benchmark_payload

    assert benchmark_payload(it, bench)["ungraded"] == {"with_skill": 2, "baseline": 2}

    junit = (tmp_path / "junit.xml").read_text()
    assert "with skill no graded trial (2 ungraded); baseline no graded trial (2 ungraded)" in junit
    assert "2 with_skill trials ungraded (an expectation has no verdict; excluded from pass rates)" in junit

    # `aggregate` reads the same runs back from disk and counts the same.
    # ungraded trials make the measurement invalid: written, but never exit 0
    agg = cli(["aggregate", str(it), "-o", str(tmp_path / "again.json")])
    assert agg.exit_code == 3, agg.output
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["summary"]["with_skill"]["ungraded_trials"] == 2 and again["summary"]["with_skill"]["pass_rate"] == 1.0
    assert "4 trials ungraded" in agg.output

    # `grade` without a judge re-grades without refusing (nothing is spent), and still says so.
    regraded = cli(["grade", str(it)])
    assert regraded.exit_code == 0, regraded.output
    assert "4 trials ungraded" in regraded.output
    g = json.loads((it / "eval-2-tone" / "with_skill" / "run-1" / "grading.json").read_text())
    assert g["expectations"][1]["passed"] is None and "no judge configured" in g["expectations"][1]["evidence"]


def test_arm_leaves_ungraded_trials_out_of_the_rates_but_keeps_their_cost():
    def record(n: int, verdicts: tuple[bool | None, ...], status: str = "ok") -> TrialRecord:
        passed = None if status != "ok" or None in verdicts else all(verdicts)
        return TrialRecord(1, "e", "with_skill", n, status, passed, sum(v is True for v in verdicts), len(verdicts),
                           tokens=100 * n, expectations=tuple(Outcome(f"x{i}", v) for i, v in enumerate(verdicts)))

    arm = Arm()
    # (False, None) would be a failed trial: a failed expectation decides it (issue 34, tests/test_records.py)
    for r in (record(1, (True, True)), record(2, (True, None)), record(3, (None, None)), record(4, (True,), "error")):
        arm.add(r)
    assert (arm.completed, arm.passes, arm.ungraded, arm.errored, arm.recorded) == (1, 1, 2, 1, 4)
    assert arm.pass_rate == 1.0 and arm.expectation_rates == [1.0]
    assert list(arm.tokens) == [100, 200, 300]  # what an ungraded trial cost was measured
    other = Arm()
    other.add(record(5, (None,)))
    arm.merge(other)
    assert arm.ungraded == 3


def test_history_rates_leave_ungraded_trials_out():
    from skillassay.improve.history import per_eval_rates

    graded = TrialRecord(1, "e", "with_skill", 1, "ok", True, 2, 2,
                         expectations=(Outcome("a", True), Outcome("b", True)))
    ungraded = TrialRecord(1, "e", "with_skill", 2, "ok", None, 1, 2,
                           expectations=(Outcome("a", True), Outcome("b", None)))
    (rate,) = per_eval_rates([graded, ungraded])
    assert (rate.rate, rate.trials_completed, rate.passes) == (1.0, 1, 1)  # was 0.75 over 2 trials


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's Chromium at /usr/bin/chromium")
def test_viewer_says_ungraded(example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """In a real headless Chromium, from the static page: an ungraded run is badged UNGRADED
    (not a red 1/2), and the benchmark tab counts the ungraded trials."""
    from playwright.sync_api import sync_playwright

    ws = tmp_path / "ws"
    run_ungraded(example_skill, ws, monkeypatch)
    page_file = tmp_path / "review.html"
    assert cli(["view", str(ws / "iteration-1"), "--static", str(page_file)]).exit_code == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(page_file.as_uri() + "#eval-2-tone/with_skill/run-1")
        pg.wait_for_selector("body[data-ready='1']", timeout=15000)
        assert pg.locator("h2 .badge").text_content() == "UNGRADED 1/2"
        assert "1 of 2 expectations passed, 1 ungraded" in pg.text_content(".grades")
        assert "in no pass rate (it is not a failure)" in pg.text_content(".grades")
        assert pg.locator(".grades .badge").nth(1).text_content() == "UNGRADED"
        pg.goto(page_file.as_uri() + "#eval-1-typed/with_skill/run-1")
        pg.reload()
        pg.wait_for_selector("body[data-ready='1']", timeout=15000)
        assert pg.locator("h2 .badge").text_content() == "1/1"  # a graded run keeps its plain badge
        pg.click("#tab-benchmark")
        pg.wait_for_selector("body[data-benchmark-ready='1']")
        ungraded = pg.locator("section.block", has_text="Ungraded trials").text_content()
        assert "4 trials ungraded (2 with skill, 2 baseline)" in ungraded
        browser.close()
    assert not errors
