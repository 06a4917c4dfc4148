"""The LLM judge: structured output against a loopback OpenAI API (retries, failures, votes),
a forced tool on a loopback Anthropic API, and the real embedded model end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillassay.grade.grader import Grader, compile_expectations, run_view
from skillassay.grade.judge import (
    JudgePolicy,
    cap,
    gather,
    parse_reply,
    reply_schema,
)
from skillassay.grade.judge_providers import AnthropicJudge, LocalJudge, OpenAIJudge
from skillassay.models import Eval, Grading, Metrics, Timing
from tests import fake_anthropic_api
from tests.fake_openai_api import FakeOpenAI, grading_reply, schema_of

FAST = JudgePolicy(attempts=3, wait_initial=0, wait_max=0)
PLAIN = "The answer gives the VPN port"


def make_run(tmp_path: Path, answer: str = "The Acme VPN uses port 4433.", notes: str | None = None,
             files: dict[str, bytes] | None = None) -> Path:
    run = tmp_path / "ws" / "eval-1" / "with_skill" / "run-1"
    (run / "outputs").mkdir(parents=True)
    (run / "outputs" / "answer.md").write_text(answer, encoding="utf-8")
    (run / "outputs" / "metrics.json").write_text("{}", encoding="utf-8")
    for name, data in (files or {}).items():
        (run / "outputs" / name).write_bytes(data)
    if notes is not None:
        (run / "outputs" / "user_notes.md").write_text(notes, encoding="utf-8")
    (run / "transcript.md").write_text("# Transcript\n\n## 1. echo\n", encoding="utf-8")
    (run / "timing.json").write_text(json.dumps({"executor_duration_seconds": 2.0}), encoding="utf-8")
    return run


def grade_with(judge, run: Path, tmp_path: Path, expectations: list, policy: JudgePolicy = FAST) -> Grading:
    ev = Eval(id=1, name="port", prompt="What port does the Acme VPN use?", expectations=expectations)
    compiled = compile_expectations(ev, tmp_path / "evals.json")
    view = run_view(run, Metrics(), Timing(executor_duration_seconds=2.0), ev.prompt, tmp_path)
    grading = Grader(judge=judge, policy=policy).grade_run(compiled, view)
    return Grading.model_validate(json.loads(grading.model_dump_json(exclude_unset=True)))


@pytest.fixture
def openai_fake(monkeypatch):
    fakes = []

    def start(script):
        fake = FakeOpenAI(script).start()
        fakes.append(fake)
        return fake, OpenAIJudge(model="judge-test", client=_client(fake))

    yield start
    for fake in fakes:
        fake.stop()


def _client(fake: FakeOpenAI):
    import openai

    return openai.OpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)


def test_structured_output_grades_mixed_expectations(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True)])
    run = make_run(tmp_path)
    g = grade_with(judge, run, tmp_path, [{"type": "contains", "value": "4433"}, PLAIN])
    fake.assert_clean()
    assert [e.passed for e in g.expectations] == [True, True]
    assert g.expectations[1].evidence == 'The answer names the port (quoted from answer.md: "port 4433")'
    assert g.summary.passed == 2 and g.summary.total == 2
    assert g.claims and g.claims[0].claim == "The port is 4433" and g.claims[0].verified is True
    assert g.eval_feedback is None  # only when the judge raises something
    assert g.timing.grader_duration_seconds is not None
    assert g.timing.total_duration_seconds == pytest.approx(2.0 + g.timing.grader_duration_seconds)
    timing = json.loads((run / "timing.json").read_text())
    assert timing["executor_duration_seconds"] == 2.0 and timing["grader_start"] <= timing["grader_end"]
    # What was sent: strict json_schema for exactly one expectation (the typed one is not judged).
    body = fake.requests[0]
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert list(schema_of(body)["properties"]["expectations"]["properties"]) == ["E1"]
    user = body["messages"][1]["content"]
    assert "E1: The answer gives the VPN port" in user and "port 4433" in user
    assert "Burden of proof" in body["messages"][0]["content"]


def test_invalid_json_reply_is_retried(openai_fake, tmp_path):
    fake, judge = openai_fake(['{"expectations": {"E1": {"passed": tr', grading_reply(False, "No port is named", quote="")])
    g = grade_with(judge, make_run(tmp_path, answer="I do not know."), tmp_path, [PLAIN])
    fake.assert_clean()
    assert len(fake.requests) == 2
    assert g.expectations[0].passed is False and g.expectations[0].evidence == "No port is named"


def test_persistent_failure_leaves_expectation_ungraded(openai_fake, tmp_path):
    fake, judge = openai_fake(["not json at all"] * 3)
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN, {"type": "contains", "value": "4433"}])
    fake.assert_clean()
    ungraded = g.expectations[0]
    assert ungraded.passed is None
    assert "invalid judge output after 3 attempts" in ungraded.evidence
    assert g.expectations[1].passed is True  # typed assertions are unaffected
    assert g.summary.passed == 1 and g.summary.failed == 0 and g.summary.total == 2


def test_schema_mismatch_is_retried_then_ungraded(openai_fake, tmp_path):
    wrong_keys = json.dumps({"expectations": {"E7": {"quote": "port 4433", "passed": True, "evidence": "x"}}, "claims": [],
                             "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
                             "eval_feedback": None})
    fake, judge = openai_fake([wrong_keys] * 3)
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN])
    fake.assert_clean()
    assert g.expectations[0].passed is None and "expected ['E1']" in g.expectations[0].evidence


def test_majority_vote_records_agreement(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True), grading_reply(False, "Nothing"), grading_reply(True)])
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN], JudgePolicy(samples=3, wait_initial=0))
    fake.assert_clean()
    e = g.expectations[0]
    assert e.passed is True and e.evidence.startswith("judge 2/3 agree: ")
    assert e.model_extra["judge_votes"] == {"passed": 2, "failed": 1, "unquoted": 0, "invalid": 0}
    assert e.model_extra["judge_agreement"] == pytest.approx(0.6667)


def test_tied_vote_is_ungraded(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True), grading_reply(False, "Nothing")])
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN], JudgePolicy(samples=2, wait_initial=0))
    assert g.expectations[0].passed is None and "split 1 pass / 1 fail" in g.expectations[0].evidence


def test_pass_without_a_quote_is_ungraded(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True, evidence="It does", quote="")])
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN])
    assert g.expectations[0].passed is None
    assert g.expectations[0].evidence == "Ungraded: the judge passed it without quoting the output"
    assert g.summary.passed == 0 and g.summary.failed == 0


def test_pass_whose_quote_is_not_in_the_output_is_ungraded(openai_fake, tmp_path):
    """The reproduction: `grade --judge local` passed a Fahrenheit answer for "gives the
    temperature in Celsius" with the evidence "true". A quote the output does not hold (here
    the task's own words, or "true") is not evidence."""
    fake, judge = openai_fake([grading_reply([True, True], evidence="true", quote="true"),
                               grading_reply([True, True], evidence="matches", quote="in Celsius")])
    run = make_run(tmp_path, answer="It is 72°F in Paris right now.")
    for _ in range(2):
        g = grade_with(judge, run, tmp_path, ["The answer gives the temperature in Celsius",
                                              "The answer names the city"])
        assert [e.passed for e in g.expectations] == [None, None]
        assert "does not occur in the answer, output files or transcript" in g.expectations[0].evidence
        assert g.expectations[0].model_extra["judge_votes"]["unquoted"] == 1
        (run / "grading_cache.json").unlink()
    fake.assert_clean()


def test_a_fail_needs_no_quote_but_a_real_quote_counts(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply([False, True], evidence="see quote", quote=""),
                               grading_reply(True, evidence="names the port", quote="“PORT   4433”")])
    run = make_run(tmp_path, answer="The Acme VPN uses\nport 4433.")
    g = grade_with(judge, run, tmp_path, [PLAIN, "The answer is short"])
    assert [e.passed for e in g.expectations] == [False, None]  # the pass quoted nothing
    (run / "grading_cache.json").unlink()
    g = grade_with(judge, run, tmp_path, [PLAIN])  # case, spacing and curly quotes forgiven
    assert g.expectations[0].passed is True
    assert g.expectations[0].evidence.endswith('(quoted from answer.md: "“PORT   4433”")')
    fake.assert_clean()


def test_a_quote_too_short_to_show_anything_is_not_evidence(openai_fake, tmp_path):
    """SmolLM2 quoted "1" for an answer naming port 1453: it occurs, and proves nothing."""
    fake, judge = openai_fake([grading_reply(True, quote="1")])
    g = grade_with(judge, make_run(tmp_path, answer="It uses port 1453."), tmp_path, [PLAIN])
    assert g.expectations[0].passed is None
    assert g.expectations[0].evidence == "Ungraded: the judge's quote '1' is too short to show anything"
    fake.assert_clean()


def test_quoting_the_task_from_the_transcript_is_not_evidence(openai_fake, tmp_path):
    """A transcript holds the task as the user's message: the task's words found only there
    are the judge quoting the task back. The agent's own words in the transcript do count."""
    fake, judge = openai_fake([grading_reply(True, quote="What port does the Acme VPN use?"),
                               grading_reply(True, quote="ran lookup_port")])
    run = make_run(tmp_path, answer="Done.")
    (run / "transcript.md").write_text("## user\nWhat port does the Acme VPN use?\n## tool\nran lookup_port\n")
    g = grade_with(judge, run, tmp_path, [PLAIN])
    assert g.expectations[0].passed is None
    assert g.expectations[0].evidence == ("Ungraded: the judge quoted the task ('What port does the Acme VPN use?'), "
                                          "not the output")
    (run / "grading_cache.json").unlink()
    g = grade_with(judge, run, tmp_path, [PLAIN])
    assert g.expectations[0].passed is True and "(quoted from transcript.md: " in g.expectations[0].evidence
    fake.assert_clean()


def test_votes_count_only_quoted_verdicts(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True, quote="port 9999"), grading_reply(True),
                               grading_reply(False, "No port", quote="")])
    g = grade_with(judge, make_run(tmp_path), tmp_path, [PLAIN], JudgePolicy(samples=3, wait_initial=0))
    fake.assert_clean()
    e = g.expectations[0]
    assert e.passed is None and e.evidence == "Ungraded: judge samples split 1 pass / 1 fail, 1 without a real quote"
    assert e.model_extra["judge_votes"] == {"passed": 1, "failed": 1, "unquoted": 1, "invalid": 0}


def test_quote_found_in_an_output_file_or_across_an_ellipsis(openai_fake, tmp_path):
    fake, judge = openai_fake([grading_reply(True, quote="Server: vpn.acme.test ... port: 4433"),
                               grading_reply(True, quote="port: 4433 ... Server")])
    run = make_run(tmp_path, answer="See the file.", files={"config.txt": b"Server: vpn.acme.test\nport: 4433\n"})
    g = grade_with(judge, run, tmp_path, [PLAIN])
    assert g.expectations[0].passed is True and "quoted from outputs/config.txt" in g.expectations[0].evidence
    (run / "grading_cache.json").unlink()
    g = grade_with(judge, run, tmp_path, [PLAIN])  # the parts exist, but not in this order
    assert g.expectations[0].passed is None
    fake.assert_clean()


def test_feedback_and_user_notes_are_kept_when_present(openai_fake, tmp_path):
    feedback = {"suggestions": [{"assertion": PLAIN, "reason": "Any number would pass"}], "overall": "Weak."}
    fake, judge = openai_fake([grading_reply(True, feedback=feedback)])
    run = make_run(tmp_path, notes="## Uncertainties\n- Port may change in 2027\n")
    g = grade_with(judge, run, tmp_path, [PLAIN])
    assert g.eval_feedback is not None and g.eval_feedback.suggestions[0].reason == "Any number would pass"
    assert g.eval_feedback.overall == "Weak."
    assert "Port may change in 2027" in fake.requests[0]["messages"][1]["content"]


def test_without_judge_plain_expectations_are_ungraded_and_notes_parsed(tmp_path):
    run = make_run(tmp_path, notes="# Notes\n## Uncertainties\n- stale data\n## Workarounds\n- used text overlay\n")
    g = grade_with(None, run, tmp_path, [PLAIN])
    assert g.expectations[0].passed is None and "no judge configured" in g.expectations[0].evidence
    assert g.user_notes_summary.uncertainties == ["stale data"]
    assert g.user_notes_summary.workarounds == ["used text overlay"]


def test_anthropic_judge_uses_a_forced_tool(tmp_path):
    import anthropic

    verdict = {"expectations": {"E1": {"quote": "port 4433", "passed": True, "evidence": "names it"}}, "claims": [],
               "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
               "eval_feedback": None}
    with fake_anthropic_api.FakeAnthropic([fake_anthropic_api.tool_use("record_grading", verdict)]) as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-ant-test", max_retries=0)
        g = grade_with(AnthropicJudge(model="claude-test", client=client), make_run(tmp_path), tmp_path, [PLAIN])
        fake.assert_clean()
    body = fake.requests[0]["body"]
    assert body["tool_choice"] == {"type": "tool", "name": "record_grading"}
    assert body["tools"][0]["input_schema"]["properties"]["expectations"]["required"] == ["E1"]
    assert g.expectations[0].passed is True and g.expectations[0].evidence == 'names it (quoted from answer.md: "port 4433")'


def test_inputs_are_capped_and_binary_files_described(tmp_path):
    from skillassay.grade.judge import Caps

    run = make_run(tmp_path, answer="x" * 5000, files={"chart.png": b"\x89PNG\x00\x01" * 100,
                                                        "report.txt": b"line\n" * 1000})
    view = run_view(run, Metrics(), Timing(), "prompt")
    inputs = gather(view, Caps(answer=100, file_each=50, files_total=80))
    assert len(inputs.answer) < 200 and "chars cut" in inputs.answer
    files = {f.name: f for f in inputs.files}
    assert set(files) == {"chart.png", "report.txt"}  # answer.md/metrics.json are not "files"
    assert files["chart.png"].text is None and "binary PNG" in files["chart.png"].note
    assert "bytes cut" in files["report.txt"].text  # head and tail read, the middle never
    assert cap("short", 10) == "short"


def test_reply_schema_and_parse_agree():
    from skillassay.grade.judge import JudgeOutputError

    schema = reply_schema(2, LocalJudge().caps, bounded=True)
    assert schema["properties"]["expectations"]["required"] == ["E1", "E2"]
    assert schema["properties"]["claims"]["maxItems"] == 1
    with pytest.raises(JudgeOutputError):
        parse_reply({"expectations": {}}, 2)


@pytest.mark.model
def test_local_model_judges_end_to_end(tmp_path):
    """The real embedded SmolLM2 with grammar-constrained decoding: a schema-valid grading."""
    run = make_run(tmp_path, answer="The Acme VPN server uses port 4433.")
    g = grade_with(LocalJudge(), run, tmp_path, [PLAIN, {"type": "contains", "value": "4433"}],
                   JudgePolicy(attempts=2, wait_initial=0))
    judged = g.expectations[0]
    votes = judged.model_extra["judge_votes"]
    assert votes["invalid"] == 0, judged.evidence  # a schema-valid reply, not a judge failure
    if judged.passed is None:  # a 135M model often quotes the expectation rather than the answer
        assert votes["unquoted"] == 1 and any(why in judged.evidence for why in (  # which: the model's whim
            "does not occur in the answer", "too short to show anything", "quoted the task", "without quoting"))
    elif judged.passed:
        assert "(quoted from answer.md: " in judged.evidence
    assert g.expectations[1].passed is True
    assert all(c.type in ("factual", "process", "quality") for c in g.claims or [])
    assert g.user_notes_summary is not None
    assert json.loads((run / "grading_cache.json").read_text())["schema_version"] == 1


@pytest.mark.model
def test_local_judge_never_passes_without_a_real_quote(tmp_path):
    """The reproduction on the real embedded model: `grade --judge local` passed 6 of 6, a
    Fahrenheit answer for "in Celsius" among them, with the evidence "true". Whatever the
    small model now says, a pass stands only on text that is in the answer."""
    from skillassay.grade.evidence import Sources

    answers = ["It is 72°F in Paris right now.", "I don't know.", "The Acme VPN server uses port 4433."]
    for i, answer in enumerate(answers):
        run = make_run(tmp_path / str(i), answer=answer)
        g = grade_with(LocalJudge(), run, tmp_path / str(i), ["The answer gives the temperature in Celsius"],
                       JudgePolicy(attempts=2, wait_initial=0))
        e = g.expectations[0]
        assert e.model_extra["judge_votes"]["invalid"] == 0, e.evidence
        if e.passed:
            quote = e.evidence.rsplit('(quoted from answer.md: "', 1)[1].removesuffix('")')
            assert Sources.of([("answer.md", answer)]).find(quote) == "answer.md"
        elif e.passed is None:
            assert e.evidence.startswith("Ungraded: the judge")
