"""A judge is measured on the labelled cases shipped with the package before its verdicts
count (grade/judge_check.py): `judge-check` reports its agreement with a Wilson interval and
writes nothing unless asked; `run` and `grade` refuse a judge whose interval's lower bound is
below the floor (exit 2, naming --allow-weak-judge), record the agreement in iteration.json,
and with the override grade anyway and say so in report.md. The hosted judge runs on a loopback
fake of the OpenAI API (the real SDK, the real HTTP exchange): one fake grades like the labels,
one passes everything it is shown (what the 135M judge did with the restart command)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from skillassay.grade.judge_check import FLOOR, cache_path, load_cases, wilson
from tests.fake_openai_api import FakeOpenAI, schema_of

CASES = load_cases()
PLAIN = "The answer names the Acme VPN"


def shown_answer(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"]
    # the answer sits inside the prompt's data fence (grade/fence.py): <data-N> ... </data-N>
    m = re.search(r"## Final answer \(outputs/answer\.md\)\n<(data-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.S)
    assert m, user
    return m.group(2).strip()


def judge_reply(decide: Callable[[str], bool]) -> Callable[[dict[str, Any]], str]:
    """A valid reply that passes or fails (decide(answer)) every expectation asked, quoting the
    answer's first words for a pass (the quote check then counts it)."""

    def reply(body: dict[str, Any]) -> str:
        answer = shown_answer(body)
        keys = list(schema_of(body)["properties"]["expectations"]["properties"])
        passed = decide(answer)
        verdict = {"quote": answer[:12] if passed else "", "passed": passed, "evidence": "as labelled"}
        return json.dumps({"expectations": {k: verdict for k in keys}, "claims": [],
                           "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
                           "eval_feedback": None})

    return reply


LABELS = {c.output.strip(): c.passed for c in CASES}
labelled = judge_reply(lambda answer: LABELS.get(answer, True))  # a run's own answers: passed
passes_all = judge_reply(lambda answer: True)


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[list[Any]], FakeOpenAI]]:
    """The loopback OpenAI API, and a private cache folder (the measured agreement is cached
    per judge in the user's cache: no test may see another's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fakes: list[FakeOpenAI] = []

    def start(script: list[Any]) -> FakeOpenAI:
        fake = FakeOpenAI(script).start()
        fakes.append(fake)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        return fake

    yield start
    for fake in fakes:
        fake.stop()


def plain_evals(skill: Path) -> Path:
    path = skill / "evals" / "evals.json"
    path.write_text(json.dumps({"skill_name": "acme-vpn", "evals": [
        {"id": 1, "name": "port", "prompt": "What port does the Acme VPN server use?",
         "expectations": [{"type": "icontains", "value": "acme"}, PLAIN]}]}), encoding="utf-8")
    return path


def run_cli(skill: Path, ws: Path, *extra: str) -> Any:
    return cli(["run", str(skill), "--evals", str(plain_evals(skill)), "--executor", "echo",
                               "--workspace", str(ws), "--trials", "1", "--judge", "openai", *extra])


def test_the_shipped_cases_are_balanced_and_hold_the_restart_command_near_miss() -> None:
    assert 30 <= len(CASES) <= 60
    assert sum(c.passed for c in CASES) == len(CASES) // 2
    assert len({c.id for c in CASES}) == len(CASES)
    restart = [c for c in CASES if "exact restart command" in c.expectation]
    wrong = [c for c in restart if not c.passed]
    assert any(c.passed for c in restart) and wrong
    assert all("Zephyr Cache" in c.output and "systemctl restart zephyr-cache" not in c.output for c in wrong[:2])


def test_wilson_interval_matches_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint

    for k, n in ((0, 56), (28, 56), (50, 56), (56, 56), (1, 3)):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson(k, n) == pytest.approx((lo, hi), abs=1e-9)


def test_judge_check_reports_agreement_and_writes_nothing_unless_asked(fake_api, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fake = fake_api([labelled] * len(CASES))
    result = cli(["judge-check", "--judge", "openai", "--judge-model", "judge-test"])
    fake.assert_clean()
    assert result.exit_code == 0, result.output
    n = len(CASES)
    lo, hi = wilson(n, n)
    assert f"agreed with the right verdict on {n} of {n} labelled cases (100%, 95% CI {lo:.0%}..{hi:.0%}" in result.output
    assert f"meets the {FLOOR:.0%}" in result.output
    assert list(tmp_path.iterdir()) == []  # no file here, no cache entry

    fake = fake_api([passes_all] * n)
    out_file = tmp_path / "check.json"
    result = cli(["judge-check", "--judge", "openai", "--judge-model", "judge-test",
                                 "--output", str(out_file), "--save"])
    fake.assert_clean()
    assert result.exit_code == 1, result.output  # below the floor
    written = json.loads(out_file.read_text())
    assert written["agreed"] == n // 2 and written["false_passes"] == n // 2 and written["meets_floor"] is False
    assert any(d["id"] == 2 and d["right"] is False and d["judge"] is True for d in written["disagreements"])
    assert "is below the 80%" in result.output and "--allow-weak-judge" in result.output
    assert cache_path().is_file()  # --save: run and grade find it


def test_run_refuses_a_judge_below_the_floor_and_the_override_is_reported(fake_api, example_skill: Path,
                                                                          tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    fake = fake_api([passes_all] * len(CASES))
    refused = run_cli(example_skill, ws)
    fake.assert_clean()
    assert refused.exit_code == 2, refused.output
    assert "--allow-weak-judge" in refused.output and "below the floor of 80%" in refused.output
    assert "Traceback" not in refused.output and not ws.exists()  # no trial spent

    fake = fake_api([passes_all] * 2)  # measured once: the run's two trials only
    allowed = run_cli(example_skill, ws, "--allow-weak-judge")
    fake.assert_clean()
    assert allowed.exit_code in (0, 1, 3), allowed.output
    record = json.loads((ws / "iteration-1" / "iteration.json").read_text())["judge_check"]
    assert record["allowed_by"] == "--allow-weak-judge" and record["measured"] is True
    assert record["agreed"] == len(CASES) // 2 and record["meets_floor"] is False
    report = (ws / "iteration-1" / "report.md").read_text()
    assert "below the floor of 80%" in report and "--allow-weak-judge" in report


def test_run_records_a_judge_that_meets_the_floor(fake_api, example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    fake = fake_api([labelled] * (len(CASES) + 2))  # the check, then the run's two trials
    result = run_cli(example_skill, ws)
    fake.assert_clean()
    assert result.exit_code in (0, 1, 3), result.output
    assert "measuring the judge openai" in result.output
    record = json.loads((ws / "iteration-1" / "iteration.json").read_text())["judge_check"]
    assert record["measured"] and record["meets_floor"] and record["agreed"] == len(CASES)
    assert record["allowed_by"] is None
    assert "labelled cases" not in (ws / "iteration-1" / "report.md").read_text()


def test_grade_refuses_a_judge_below_the_floor(fake_api, example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    plain_evals(example_skill)
    fake = fake_api([passes_all] * 2)
    assert run_cli(example_skill, ws, "--allow-weak-judge").exit_code in (0, 1, 3)
    fake = fake_api([passes_all] * len(CASES))
    result = cli(["grade", str(ws), "--judge", "openai", "--no-cache"])
    fake.assert_clean()
    assert result.exit_code == 2 and "--allow-weak-judge" in result.output, result.output


@pytest.mark.model
def test_judge_check_measures_the_embedded_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded judge for real on a balanced quick look at the labelled cases (all 56 take
    6-11 minutes here; the smallest look, one case of each verdict, is enough for what is
    asserted): its agreement, its interval and the note that it is a tiny model; it writes
    nothing (no cache entry) without --save, and a quick look cannot be saved."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out_file = tmp_path / "local.json"
    n = 2
    result = cli(["judge-check", "--judge", "local", "--cases", str(n), "--output", str(out_file)])
    assert result.exit_code in (0, 1), result.output
    measured = json.loads(out_file.read_text())
    assert measured["cases"] == n and measured["judge"]["judge"] == "local"
    assert (measured["low"], measured["high"]) == pytest.approx(wilson(measured["agreed"], n), abs=1e-4)
    assert f"on {measured['agreed']} of {n} labelled cases" in result.output
    assert "tiny model" in result.output
    assert result.exit_code == (0 if measured["meets_floor"] else 1)
    assert not (tmp_path / "cache" / "skillassay" / "judge-check.json").exists()


def test_a_quick_look_is_balanced_and_never_saved() -> None:
    from skillassay.grade.judge_check import balanced_subset, load_cases

    picked = balanced_subset(load_cases(), 6)
    assert len(picked) == 6 and sum(c.passed for c in picked) == 3
    result = cli(["judge-check", "--judge", "local", "--cases", "6", "--save"])
    assert result.exit_code == 2 and "--cases" in result.output, result.output
