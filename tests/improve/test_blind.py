"""Blind comparison and post-hoc analysis, against loopback fakes of the hosted APIs (the real
SDKs talk HTTP to a stdlib server answering in the APIs' response shapes) and, marked `model`,
end to end on the embedded model."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from skillassay.grade.judge_providers import AnthropicJudge, OpenAIJudge
from skillassay.improve.analysis import analyze_file
from skillassay.improve.blind import compare_blind, make_compare_judge
from skillassay.improve.history import record_iteration
from skillassay.models.improve import Analysis, Comparison
from skillassay.run.engine import RunRequest, run_benchmark

SIDE = {"content": {"correctness": 5, "completeness": 5, "accuracy": 4},
        "structure": {"organization": 4, "formatting": 5, "usability": 4}}
WEAK = {"content": {"correctness": 3, "completeness": 2, "accuracy": 3},
        "structure": {"organization": 3, "formatting": 2, "usability": 3}}


def prefers_the_port(user: str) -> dict[str, Any]:
    """A consistent judge: the output that states port 4433 wins, whatever label it has."""
    a = user.split("## Output A", 1)[1].split("## Output B", 1)[0]
    b = user.split("## Output B", 1)[1]
    winner = "A" if "4433" in a and "4433" not in b else "B" if "4433" in b and "4433" not in a else "TIE"
    good, bad = ("A", "B") if winner != "B" else ("B", "A")
    return {"rubric": {good: SIDE, bad: WEAK if winner != "TIE" else SIDE},
            "output_quality": {good: {"score": 9, "strengths": [f"Output {good} gives the port"], "weaknesses": []},
                               bad: {"score": 5, "strengths": [], "weaknesses": [f"Output {bad} lacks it"]}},
            "reasoning": f"Output {winner} states the port." if winner != "TIE" else "Equivalent.",
            "winner": winner}


def always_a(user: str) -> dict[str, Any]:
    return {**prefers_the_port(user), "winner": "A", "reasoning": "A is first."}


ANALYSIS = {"winner_strengths": ["States the port fact"], "loser_weaknesses": ["No port fact"],
            "instruction_following": {"winner": {"score": 9, "issues": []}, "loser": {"score": 6, "issues": ["guessed"]}},
            "improvement_suggestions": [{"priority": "high", "category": "instructions",
                                         "suggestion": "State the port", "expected_impact": "Eval 1 passes"}],
            "transcript_insights": {"winner_execution_pattern": "read skill -> answered",
                                    "loser_execution_pattern": "answered without the fact"}}


class FakeAPI:
    """POST /v1/chat/completions (OpenAI) and /v1/messages (Anthropic), in the real response
    shapes. `reply(user_text, schema)` gives the JSON object or a raw string (an invalid reply)."""

    def __init__(self, reply: Callable[[str, dict], Any]) -> None:
        self.reply, self.requests = reply, []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                if self.path.endswith("/chat/completions"):
                    user = body["messages"][-1]["content"]
                    out = fake.reply(user, body["response_format"]["json_schema"]["schema"])
                    content = out if isinstance(out, str) else json.dumps(out)
                    data = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                         "message": {"role": "assistant", "content": content, "refusal": None}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                else:
                    user = body["messages"][-1]["content"]
                    out = fake.reply(user, body["tools"][0]["input_schema"])
                    block = ({"type": "text", "text": out} if isinstance(out, str) else
                             {"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"], "input": out})
                    data = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                            "content": [block], "stop_reason": "tool_use", "stop_sequence": None,
                            "usage": {"input_tokens": 10, "output_tokens": 5}}
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def openai(self) -> OpenAIJudge:
        import openai

        return OpenAIJudge(model="gpt-test", client=openai.OpenAI(base_url=self.url + "/v1", api_key="k", max_retries=0))

    def anthropic(self) -> AnthropicJudge:
        import anthropic

        return AnthropicJudge(model="claude-test", client=anthropic.Anthropic(base_url=self.url, api_key="k", max_retries=0))


@pytest.fixture
def api() -> Iterator[Callable[[Callable[[str, dict], Any]], FakeAPI]]:
    servers: list[FakeAPI] = []

    def start(reply: Callable[[str, dict], Any]) -> FakeAPI:
        servers.append(FakeAPI(reply))
        return servers[-1]

    yield start
    for s in servers:
        s.server.shutdown()


@pytest.fixture
def iterations(example_skill: Path, tmp_path: Path) -> tuple[Path, Path]:
    """iteration-1: the skill without the port fact; iteration-2: with it (the better one)."""
    ws = tmp_path / "ws"
    md = example_skill / "SKILL.md"
    full = md.read_text()
    md.write_text(full.replace("The Acme VPN server uses port 4433.\n", ""))
    a = run_benchmark(RunRequest(skill_dir=example_skill, executor="echo", workspace=ws, trials=1)).iteration_dir
    md.write_text(full)
    b = run_benchmark(RunRequest(skill_dir=example_skill, executor="echo", workspace=ws, trials=1)).iteration_dir
    return a, b


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.slow
def test_labels_are_mapped_back_whatever_order_was_shown(api, iterations, seed: int) -> None:
    fake = api(lambda user, schema: prefers_the_port(user))
    a, b = iterations
    result = compare_blind(a, b, fake.openai(), seed=seed)
    by_eval = {o.pair.eval_id: o for o in result.outcomes}
    assert len(by_eval) == 8 and all(o.error is None for o in result.outcomes)
    port = by_eval[1].comparison
    assert port.winner == "B"  # ITER_B has the port, in whichever position the judge saw it
    assert port.rubric["B"].content_score == 4.7 and port.rubric["B"].structure_score == 4.3
    assert port.rubric["B"].overall_score == 9.0 and port.rubric["A"].overall_score == 5.4
    assert port.output_quality["B"].strengths == ["Output B gives the port"]  # text from the A-first order
    assert port.expectation_results["B"].passed == 1 and port.expectation_results["A"].passed == 0
    # The echo executor answers with the skill text, so every ITER_B output states the port.
    assert {o.comparison.winner for o in result.outcomes} == {"B"}
    # Both orders were judged: each pair costs two requests, with the better output once as A, once as B.
    assert len(fake.requests) == 16
    eval1 = [r for _, r in fake.requests if "What port" in r["messages"][-1]["content"]]
    shown_a = [r["messages"][-1]["content"].split("## Output B")[0] for r in eval1]
    assert sorted("4433" in s.split("## Output A")[1] for s in shown_a) == [False, True]
    # The judge never sees which iteration wrote what.
    assert not any("iteration-" in json.dumps(r) for _, r in fake.requests)
    assert fake.requests[0][1]["response_format"]["json_schema"]["strict"] is True
    # The written file is the spec's shape, labels in ITER_A/ITER_B terms.
    written = json.loads(by_eval[1].path.read_text())
    assert Comparison.model_validate(written).winner == "B"
    assert written["blind"]["A"]["iteration"] == str(a) and written["blind"]["position_consistent"] is True
    assert by_eval[1].path == b / "blind" / "vs-iteration-1" / "eval-1" / "comparison-1.json"
    s = result.summary
    assert (s["b_wins"], s["a_wins"], s["ties"], s["n_evals"]) == (8, 0, 0, 8)
    assert s["win_rate_b"] == 1.0 and s["win_rate_b_interval"] == [pytest.approx(0.675592, abs=1e-6), 1.0]


def test_a_verdict_that_follows_the_position_is_a_tie(api, iterations) -> None:
    fake = api(lambda user, schema: always_a(user))
    a, b = iterations
    comparison = compare_blind(a, b, fake.openai(), eval_id="1").outcomes[0].comparison
    assert comparison.winner == "TIE"
    assert comparison.model_extra["blind"]["position_consistent"] is False
    assert comparison.reasoning.startswith("Position bias")


def test_invalid_replies_are_retried_then_reported_never_invented(api, iterations) -> None:
    a, b = iterations
    calls = []

    def flaky(user: str, schema: dict) -> Any:
        calls.append(1)
        return "not json at all" if len(calls) == 1 else prefers_the_port(user)

    assert compare_blind(a, b, api(flaky).openai(), eval_id="1").outcomes[0].comparison.winner == "B"
    assert len(calls) == 3  # one retry, then both orders

    broken = api(lambda user, schema: {"winner": "A"})  # valid JSON, not the schema
    result = cli(["compare-blind", str(a), str(b), "--eval", "1", "--judge", "openai"],
                                env={"OPENAI_BASE_URL": broken.url + "/v1", "OPENAI_API_KEY": "k"})
    assert result.exit_code == 1, result.output
    assert "judge failed" in result.output
    assert not (b / "blind" / "vs-iteration-1" / "eval-1" / "comparison-1.json").exists()
    summary = json.loads((b / "blind" / "vs-iteration-1" / "summary.json").read_text())
    assert summary["n_evals"] == 0 and "after 3 attempts" in summary["failures"][0]["error"]
    assert len(broken.requests) == 3


def test_anthropic_judge_and_analysis(api, iterations) -> None:
    a, b = iterations
    fake = api(lambda user, schema: ANALYSIS if "winner_strengths" in schema["properties"] else prefers_the_port(user))
    out = compare_blind(a, b, fake.anthropic(), eval_id="1").outcomes[0]
    assert out.comparison.winner == "B"
    path = analyze_file(out.path, fake.anthropic())
    assert path.name == "analysis.json"
    analysis = Analysis.model_validate(json.loads(path.read_text()))
    assert analysis.comparison_summary.winner == "B"
    assert analysis.comparison_summary.winner_skill == str(b / "skill-snapshot")
    assert analysis.comparison_summary.loser_skill == str(a / "skill-snapshot")
    assert analysis.improvement_suggestions[0].priority == "high"
    # The analyst saw both skills: the winner's has the port fact, the loser's does not.
    user = fake.requests[-1][1]["messages"][-1]["content"]
    winner_part, rest = user.split("## Losing skill")
    loser_part, transcripts = rest.split("## Transcript with the winning skill")
    assert "port 4433" in winner_part and "port 4433" not in loser_part
    assert "What port does the Acme VPN server use?" in transcripts


def test_blind_results_do_not_disturb_the_iteration(api, iterations) -> None:
    a, b = iterations
    compare_blind(a, b, api(lambda user, schema: prefers_the_port(user)).openai(), eval_id="1")
    history = record_iteration(b.parent, b)  # discovery must not take blind/ for an eval
    assert len(history.iterations[-1].model_extra["per_eval"]) == 8


@pytest.mark.model
def test_blind_comparison_on_the_embedded_model(iterations) -> None:
    a, b = iterations
    result = compare_blind(a, b, make_compare_judge("local"), eval_id="1")
    outcome = result.outcomes[0]
    assert outcome.error is None, outcome.error
    data = json.loads(outcome.path.read_text())
    comparison = Comparison.model_validate(data)
    assert comparison.rubric is not None and set(comparison.rubric) == {"A", "B"}
    orders = data["blind"]["orders"]
    assert len(orders) == 2 and {o["shown_as"]["A"] for o in orders} == {"A", "B"}
    if data["blind"]["position_consistent"]:
        assert comparison.winner == orders[0]["winner"] == orders[1]["winner"]
    else:
        assert comparison.winner == "TIE"
    assert comparison.expectation_results["B"].passed == 1  # from grading.json, not the model
