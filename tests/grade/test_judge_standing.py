"""The embedded judge's measured standing ships with the package (grade/judge_standing.py), so
`run --judge local` refuses it at once instead of measuring it for ~20 minutes first; a record
stands only for the judge it was measured on (identity with its prompt templates, case set,
model file), and any other key is measured again, never trusted. The hosted judge here is the
loopback fake of the OpenAI API (the real SDK and HTTP exchange), as in test_judge_check.py."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from skillassay.grade import judge_check
from skillassay.grade.grader import make_grader
from skillassay.grade.judge_check import OVERRIDE_FLAG, Agreement, cases_sha256, current_key, load_cases, wilson
from skillassay.grade.judge_standing import find_record, shipped_data, standing_key, with_record
from tests.fake_openai_api import FakeOpenAI, schema_of

CASES = load_cases()


def fails_all(body: dict[str, Any]) -> str:
    """A valid judge reply failing every expectation asked: half the labels agree."""
    keys = list(schema_of(body)["properties"]["expectations"]["properties"])
    return json.dumps({"expectations": {k: {"quote": "", "passed": False, "evidence": "no"} for k in keys},
                       "claims": [], "user_notes_summary": {"uncertainties": [], "needs_review": [],
                                                            "workarounds": []}, "eval_feedback": None})


def agreement(identity: dict[str, Any], agreed: int) -> dict[str, Any]:
    low, high = wilson(agreed, len(CASES))
    return Agreement(judge=identity, cases=len(CASES), agreed=agreed, false_passes=0,
                     false_fails=len(CASES) - agreed, ungraded=0, low=low, high=high,
                     measured_at="2026-01-02T00:00:00Z", cases_sha256=cases_sha256()).to_dict()


def plain_evals(skill: Path) -> Path:
    path = skill / "evals" / "evals.json"
    path.write_text(json.dumps({"skill_name": "acme-vpn", "evals": [
        {"id": 1, "name": "port", "prompt": "What port does the Acme VPN server use?",
         "expectations": ["The answer names the Acme VPN"]}]}), encoding="utf-8")
    return path


def run_with_judge(skill: Path, ws: Path, judge: str) -> Any:
    return cli(["run", str(skill), "--evals", str(plain_evals(skill)), "--executor", "echo",
                "--workspace", str(ws), "--trials", "1", "--judge", judge])


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing measured on this machine


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch, empty_cache: None) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI([]).start()
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield fake
    fake.stop()


def test_a_record_stands_only_under_its_exact_key() -> None:
    identity = {"judge": "local", "model": "m", "templates": "aaaa", "samples": 1}
    key = standing_key(identity, "cases-1", "model-1")
    data = with_record(None, key, {"agreed": 5}, {"llama_cpp_python": "0.3"})
    assert find_record(key, data) == {"agreed": 5}
    assert find_record(json.loads(json.dumps(key)), data) == {"agreed": 5}  # key order does not matter
    for other in (standing_key(identity, "cases-1", "model-2"),  # another model file
                  standing_key({**identity, "templates": "bbbb"}, "cases-1", "model-1"),  # another prompt version
                  standing_key(identity, "cases-2", "model-1"),  # other labelled cases
                  standing_key(identity, "cases-1", None)):
        assert find_record(other, data) is None
    assert find_record(key, {**data, "schema_version": 99}) is None
    assert find_record(key, "not a record") is None
    replaced = with_record(data, key, {"agreed": 6}, {})
    assert len(replaced["records"]) == 1 and find_record(key, replaced) == {"agreed": 6}


@pytest.mark.slow  # the stale record's measurement: every labelled case through the real SDK (~3-6 s)
def test_a_shipped_record_refuses_at_once_and_a_stale_one_is_measured_again(
        fake_openai: FakeOpenAI, example_skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grader = make_grader("openai", None, 1, use_cache=False)
    key = current_key(grader)

    # the exact key: refused from the record, the judge never asked
    monkeypatch.setattr(judge_check, "shipped_data", lambda: with_record(None, key, agreement(key["judge"], 28), {}))
    refused = run_with_judge(example_skill, tmp_path / "ws1", "openai")
    assert refused.exit_code == 2, refused.output
    assert fake_openai.requests == []
    assert "agreed with the right verdict on 28 of" in refused.output and OVERRIDE_FLAG in refused.output
    assert "shipped with skillassay" in refused.output

    # a record of another prompt version that says the judge is perfect is not trusted: measured again
    stale_key = {**key, "judge": {**key["judge"], "templates": "0" * 16}}
    monkeypatch.setattr(judge_check, "shipped_data",
                        lambda: with_record(None, stale_key, agreement(key["judge"], len(CASES)), {}))
    fake_openai.script.extend([fails_all] * len(CASES))
    measured = run_with_judge(example_skill, tmp_path / "ws2", "openai")
    fake_openai.assert_clean()
    assert len(fake_openai.requests) == len(CASES)
    assert measured.exit_code == 2, measured.output
    assert f"on {len(CASES) // 2} of {len(CASES)} labelled cases" in measured.output
    assert "shipped with skillassay" not in measured.output
    # the measurement said how far it was, in a few lines, not one per case
    progress = [line for line in measured.output.splitlines() if "labelled cases (" in line and "judged" in line]
    assert 4 <= len(progress) <= 9 and f"judged {len(CASES)} of {len(CASES)}" in progress[-1]


def test_the_embedded_judges_standing_is_shipped_for_the_installed_model(empty_cache: None) -> None:
    pytest.importorskip("llama_cpp")
    from skillassay.executors.local import find_embedded_model

    if find_embedded_model() is None:
        pytest.skip("the embedded model is not installed")
    key = current_key(make_grader("local", None, 1, use_cache=False))
    record = find_record(key, shipped_data())
    assert record is not None, ("grade/judge_standing.json has no record for the embedded judge as it is now: "
                                "run `skillassay judge-check --judge local --output r.json` and "
                                "`python scripts/ship_judge_standing.py r.json`")
    assert record["cases"] == len(CASES) and record["cases_sha256"] == cases_sha256()


def test_run_judge_local_with_nothing_cached_refuses_within_seconds(empty_cache: None, example_skill: Path,
                                                                     tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from skillassay.executors.local import find_embedded_model

    if find_embedded_model() is None:
        pytest.skip("the embedded model is not installed")
    record = find_record(current_key(make_grader("local", None, 1, use_cache=False)), shipped_data())
    assert record is not None and not record["meets_floor"]
    start = time.monotonic()
    refused = run_with_judge(example_skill, tmp_path / "ws", "local")
    seconds = time.monotonic() - start
    assert refused.exit_code == 2, refused.output
    assert seconds < 30, seconds  # measuring instead takes ~20 minutes here
    text = " ".join(refused.output.split())
    assert f"agreed with the right verdict on {record['agreed']} of {record['cases']} labelled cases" in text
    assert OVERRIDE_FLAG in text and "Traceback" not in text
    assert not (tmp_path / "ws").exists()  # no trial spent


def test_the_override_records_the_shipped_standing_and_never_a_record_of_another_model_file(
        empty_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --allow-weak-judge and nothing cached, iteration.json gets the shipped standing
    (it said `measured: false` before it shipped); a record of another model file is not it."""
    pytest.importorskip("llama_cpp")
    from skillassay.executors.local import find_embedded_model

    if find_embedded_model() is None:
        pytest.skip("the embedded model is not installed")
    grader = make_grader("local", None, 1, use_cache=False)
    record = judge_check.standing(grader, allow_weak=True)
    assert record["measured"] is True and record["source"] == "shipped" and record["allowed_by"] == OVERRIDE_FLAG
    shipped = find_record(current_key(grader), shipped_data())
    assert shipped is not None and record["agreed"] == shipped["agreed"]

    data = shipped_data()
    for rec in data["records"]:
        rec["key"]["model_sha256"] = "0" * 64  # the same judge measured on another model file
    monkeypatch.setattr(judge_check, "shipped_data", lambda: data)
    assert judge_check.standing(grader, allow_weak=True)["measured"] is False  # unmeasured, not the stale figure
