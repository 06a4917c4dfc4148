"""The embedded model carries a conversation (issue 39), on the bundled multi-turn example
examples/acme-returns: a 3-turn eval run with and without the skill, the chat history sent with
every later turn, per-turn grades, and the skill's difference per turn in benchmark.json.
SmolLM2-135M is tiny: its answers are evidence about this example only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import repo_paths

from skillassay.run.engine import RunRequest, run_benchmark

pytestmark = pytest.mark.model
EXAMPLE = repo_paths.REPO / "examples" / "acme-returns"


def test_the_example_conversation_shows_the_skill_helping_turn_by_turn(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "acme-returns"
    shutil.copytree(EXAMPLE, skill)
    outcome = run_benchmark(RunRequest(skill_dir=skill, executor="local", trials=1, workspace=tmp_path / "ws"))
    assert outcome.executed == 4 and outcome.failed == 0
    turns = outcome.benchmark.turns
    assert turns is not None and [t.turn for t in turns.per_turn] == [1, 2, 3]
    assert all(t.n_evals == 2 for t in turns.per_turn)
    skill_passes = sum(t.with_skill.passes for t in turns.per_turn)
    base_passes = sum(t.baseline.passes for t in turns.per_turn)
    assert skill_passes >= base_passes + 3, turns  # measured: the skill's facts reach the later turns too
    assert turns.per_turn[0].with_skill.passes > turns.per_turn[0].baseline.passes

    run = next((tmp_path / "ws/iteration-1").glob("eval-1-*/with_skill/run-1"))
    answers = [t["answer"] for t in json.loads((run / "turns.json").read_text())["turns"]]
    requests = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "request"]
    assert [r["turn"] for r in requests] == [1, 2, 3]
    third = requests[2]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in third if m["role"] == "assistant"] == answers[:2]
    assert "Acme customers may return an order within 21 days" in third[1]["content"]  # the skill, once
    assert third[-1]["content"] == "How many days until the Acme refund reaches my card?"
    grading = json.loads((run / "grading.json").read_text())
    assert [e["turn"] for e in grading["expectations"]] == [1, 2, 3, None]
    assert "Per turn" in (tmp_path / "ws/iteration-1/report.md").read_text()
