"""A 3-turn eval run end to end by `skillassay run --executor claude-code` and `--executor codex`
(issue 39's "Done when"): the REAL CLIs against the loopback fake of their APIs, whose model
answers each turn right only when the arm's skill is listed in what it was sent; grading.json
grades each turn, benchmark.json, benchmark.md and report.md show the per-turn pass rates. Then a run stopped between turns (turn 1 answered, turn 2 in flight) and run again: that
trial starts over from turn 1 and ends graded, with nothing of the stopped attempt in it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import invoke
from fake_model_api import FakeModelAPI, Reply, ScriptItem, Stall, conversation
from process_support import wait_for

pytestmark = pytest.mark.agent_cli
FAKE_KEY = "sk-ant-fake-test-key-0123456789"
# (the user's message, the answer with the skill, the answer without, what turn k expects)
TURNS = (("How many days do I have to return an Acme order?", "Within 21 days.", "Within 30 days.", "21"),
         ("Which return code does an Acme return need?", "The code RTN-5521.", "No code is needed.", "RTN-5521"),
         ("How many days until the Acme refund reaches my card?", "8 days.", "About two weeks.", "8 days"))


def make_skill(root: Path) -> Path:
    skill = root / "acme-returns"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: acme-returns\ndescription: The Acme returns policy. Use when a customer asks how to return an "
        "Acme order.\n---\n# Acme returns\nReturn within 21 days with the code RTN-5521; refunds take 8 days.\n",
        encoding="utf-8")
    turns = [{"prompt": q, "expectations": [{"type": "contains", "value": want, "text": f"turn {k} says {want}"}]}
             for k, (q, _, _, want) in enumerate(TURNS, 1)]
    evals = {"skill_name": "acme-returns", "evals": [{"id": 1, "name": "returns", "turns": turns, "expectations": [
        {"type": "max_tokens", "value": 5000, "text": "the conversation stays under 5000 tokens"}]}]}
    (skill / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    return skill


def turn_of(request: dict[str, Any]) -> int:
    """Which user message a model request answers: the last one it carries (1-based)."""
    last = [text for role, text in conversation(request) if role == "user"][-1]
    return next(k for k, (q, *_) in enumerate(TURNS, 1) if q in last)


def answer(request: dict[str, Any]) -> Reply:
    """The model knows the policy only when the skill is listed in its request (the with-skill arm)."""
    _, right, wrong, _ = TURNS[turn_of(request) - 1]
    return Reply(text=right if "acme-returns" in json.dumps(request["body"]) else wrong,
                 input_tokens=100, output_tokens=10)


# executor -> (model, the options after base_url's value, the event that opens each of its runs)
CLIS = {"claude-code": ("claude-sonnet-4-5", "", ("subtype", "init")),
        "codex": ("gpt-5", "/v1", ("type", "thread.started"))}


def run_args(skill: Path, ws: Path, base_url: str, executor: str = "claude-code") -> list[str]:
    model, suffix, _ = CLIS[executor]
    extra = ["-o", "max_retries=0"] if executor == "codex" else []
    return ["run", str(skill), "--workspace", str(ws), "--executor", executor, "--model", model, "--trials", "1",
            "--concurrency", "1", "--no-adaptive", "--sandbox", "none", "-o", f"base_url={base_url}{suffix}", *extra]


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai-test-key-0123456789abcdef")
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def trial_dir(ws: Path, arm: str) -> Path:
    found = sorted(ws.glob(f"iteration-1/eval-*/{arm}/run-1"))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("executor", sorted(CLIS))
def test_a_three_turn_eval_is_graded_turn_by_turn_in_both_arms(tmp_path: Path, claude_env: None,
                                                               executor: str) -> None:
    if shutil.which("codex" if executor == "codex" else "claude") is None:
        pytest.skip(f"{executor}'s CLI not on PATH")
    skill, ws = make_skill(tmp_path / "skills"), tmp_path / "ws"
    with FakeModelAPI([answer] * 6) as api:
        result = invoke(*run_args(skill, ws, api.base_url, executor))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert len(api.model_requests()) == 6, result.output  # 3 turns x 2 arms, each turn its own request
    key, value = CLIS[executor][2]
    for arm, passed in (("with_skill", True), ("without_skill", False)):
        run = trial_dir(ws, arm)
        grading = json.loads((run / "grading.json").read_text())
        by_turn = {e.get("turn"): e["passed"] for e in grading["expectations"]}
        assert by_turn == {1: passed, 2: passed, 3: passed, None: True}, grading["expectations"]
        events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
        assert [e["turn"] for e in events if e.get(key) == value] == [1, 2, 3]  # a run per turn
        assert len({e.get("session_id") or e.get("thread_id") for e in events if e.get(key) == value}) == 1
        metrics = json.loads((run / "outputs" / "metrics.json").read_text())
        assert [(t["turn"], t["total_tokens"]) for t in metrics["turns"]] == [(1, 110), (2, 110), (3, 110)]
    iteration = ws / "iteration-1"
    per_turn = json.loads((iteration / "benchmark.json").read_text())["turns"]["per_turn"]
    assert [(t["turn"], t["with_skill"]["pass_rate"], t["baseline"]["pass_rate"]) for t in per_turn] == [
        (1, 1.0, 0.0), (2, 1.0, 0.0), (3, 1.0, 0.0)]
    assert "Per turn: where in the conversation the skill helps" in (iteration / "benchmark.md").read_text()
    report = invoke("report", str(iteration))
    assert report.exit_code == 0, report.output
    assert "| 3 | 1 | 100%" in (iteration / "report.md").read_text()


@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
def test_a_run_stopped_between_turns_starts_the_trial_over(tmp_path: Path, claude_env: None) -> None:
    """SIGTERM (what a supervisor sends) while turn 2 of the second trial waits on the model: the
    run stops its agents and leaves that trial ungraded; the next run keeps the first trial and
    redoes the second from turn 1."""
    skill, ws = make_skill(tmp_path / "skills"), tmp_path / "ws"
    held, release = threading.Event(), threading.Event()

    second_turns: list[int] = []

    def hold_turn_two(request: dict[str, Any]) -> ScriptItem:
        """Turn 2 of the second trial waits until the run was stopped, then its (gone) client
        gets the opening of a stream that goes nowhere."""
        if turn_of(request) == 2:
            second_turns.append(1)
            if len(second_turns) == 2:
                held.set()
                release.wait(120)
                return Stall()
        return answer(request)

    env = {**os.environ, "PYTHONPATH": str(repo_paths.REPO / "src"), "CI": ""}
    with FakeModelAPI([hold_turn_two] * 9) as api:
        argv = [sys.executable, "-m", "skillassay", *run_args(skill, ws, api.base_url)]
        proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            wait_for(held.is_set, 120, proc, "turn 2 of the second trial")
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=60)
        finally:
            release.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode != 0, stderr
        graded = list(ws.glob("iteration-1/eval-*/*/run-*/grading.json"))
        assert len(graded) == 1, stderr  # the first trial; the second, stopped half-way, is not graded
        first_grading = graded[0].read_text()
        stopped = len(api.model_requests())
        again = invoke(*run_args(skill, ws, api.base_url))
    assert again.exception is None or isinstance(again.exception, SystemExit), again.output
    assert len(api.model_requests()) - stopped == 3  # the stopped trial again, every turn from turn 1
    assert graded[0].read_text() == first_grading  # the finished trial is kept, not run again
    for arm in ("with_skill", "without_skill"):
        run = trial_dir(ws, arm)
        grading = json.loads((run / "grading.json").read_text())
        assert sorted(str(e.get("turn")) for e in grading["expectations"]) == ["1", "2", "3", "None"]
        events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
        assert [e["turn"] for e in events if e.get("subtype") == "init"] == [1, 2, 3]  # no leftover of the stop
        assert [r["turn"] for r in json.loads((run / "turns.json").read_text())["turns"]] == [1, 2, 3]
