"""The `command` executor carries a conversation (issue 39): it runs once per turn with that
turn's message as {prompt}, SKILLASSAY_TURN/SKILLASSAY_TURNS and the earlier turns in
SKILLASSAY_HISTORY_FILE, in one work dir. A turn that fails ends the trial as errored with the
turns before it kept, and the next run runs it again from turn 1. Real subprocesses throughout
(tests/turns_agent.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import repo_paths
from cli_runner import invoke
from turns_support import PROMPTS, write_skill

from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.command import CommandExecutor

AGENT = str(repo_paths.REPO / "tests" / "turns_agent.py")


def argv(tmp_path: Path, mode: str = "fail") -> list[str]:
    return [sys.executable, AGENT, str(tmp_path / "log"), str(tmp_path / "flag"), mode, "{prompt}"]


def test_each_turn_gets_its_message_and_the_history_before_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    ex = CommandExecutor(ExecutorSettings(timeout_seconds=60, options={"argv": argv(tmp_path)}))
    result = ex.run(TrialRequest(prompt=PROMPTS[0], workdir=work, skill=None, seed=1, settings=ex.settings,
                                 turns=PROMPTS[1:]))
    assert result.status == "ok", result.error
    assert [t.index for t in result.turns] == [1, 2, 3]
    assert result.turns[0].final_text.startswith("turn 1 of 3: first question | heard before:  | answers before: 0")
    assert "turn 3 of 3: third question | heard before: first question / second question | answers before: 2" \
        in result.turns[2].final_text
    assert result.final_text == result.turns[2].final_text
    assert sorted(p.name for p in work.iterdir()) == ["turn1.txt", "turn2.txt", "turn3.txt"]  # one work dir
    assert [t.transcript_start for t in result.turns] == [0, 5, 10]  # argv, marker, stdout, stderr, exit per turn



@pytest.mark.slow  # two whole runs of real subprocesses
def test_a_failing_turn_errors_the_trial_keeps_earlier_turns_and_resumes_from_turn_1(tmp_path: Path) -> None:
    (tmp_path / "flag").touch()
    skill, ws = write_skill(tmp_path / "talker"), tmp_path / "ws"
    args = ("run", str(skill), "--executor", "command", "-o", "argv=" + json.dumps(argv(tmp_path)),
            "--workspace", str(ws), "--trials", "1", "--fail-fast", "0", "--sandbox", "none")
    first = invoke(*args)
    run = ws / "iteration-1/eval-1-talk/with_skill/run-1"
    metrics = json.loads((run / "outputs/metrics.json").read_text())
    assert first.exit_code != 0 and metrics["status"] == "error", first.output
    assert metrics["error"].startswith("turn 2: exit code 1") and "turn 2 broke" in metrics["error"], metrics
    assert [t["status"] for t in metrics["turns"]] == ["ok", "error"]
    turns = json.loads((run / "turns.json").read_text())["turns"]
    assert turns[0]["answer"].startswith("turn 1 of 3: first question")  # the turn before it is kept
    assert {json.loads(line)["turn"] for line in (run / "transcript.jsonl").read_text().splitlines()} == {1, 2}

    (tmp_path / "flag").unlink()  # the cause fixed: the same command resumes and runs it again
    second = invoke(*args)
    assert second.exit_code in (0, 1, 3), second.output
    assert not (ws / "iteration-2").exists()
    assert (run / "attempts/1/turns.json").is_file() and (run / "attempts/1/metrics.json").is_file()
    grading = json.loads((run / "grading.json").read_text())
    assert [(e["turn"], e["passed"]) for e in grading["expectations"]] == [(1, True), (2, True), (3, True)]
    assert sorted(p.name for p in (run / "outputs").iterdir()) == \
        ["answer.md", "metrics.json", "turn1.txt", "turn2.txt", "turn3.txt"]  # stale.txt went with the attempt
