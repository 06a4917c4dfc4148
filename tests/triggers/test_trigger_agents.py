"""`skillassay triggers --agent ... --agent ...` (issue 37 item 6): each agent's recall and
false-trigger rate in one triggers.json, each agent's own trigger eval under agents/<name>/, and
one agent exactly the trigger eval it always was. The agents are real `sh` processes (the
command executor) told apart by their model: `fires` loads the skill when the query names a
zebra, `deaf` never loads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

from skillassay.models.triggers import TriggerReport

AGENT = ('if [ "$1" = fires ]; then case "$0" in *zebra*) echo zebra-facts > "$SKILLASSAY_LOADED_SKILLS_FILE";; '
         '*) : > "$SKILLASSAY_LOADED_SKILLS_FILE";; esac; else : > "$SKILLASSAY_LOADED_SKILLS_FILE"; fi; echo answered')
ARGV = ["-o", "argv=" + json.dumps(["sh", "-c", AGENT, "{prompt}", "{model}"]), "--runs", "1", "--sandbox", "none"]


def write_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "zebra-facts"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: zebra-facts\ndescription: Knows zebra lore.\n---\nZebras.\n")
    (skill / "evals" / "trigger_evals.json").write_text(json.dumps(
        [{"query": "zebra fact", "should_trigger": True}, {"query": "zebra stripes", "should_trigger": True},
         {"query": "mango fact", "should_trigger": False}, {"query": "kiwi fact", "should_trigger": False}]))
    return skill


@pytest.mark.slow
def test_each_agents_recall_and_false_trigger_rate_in_one_triggers_json(tmp_path: Path) -> None:
    skill = write_skill(tmp_path)
    ws = tmp_path / "ws"
    result = invoke("triggers", str(skill), "--workspace", str(ws), "--agent", "command:fires",
                    "--agent", "command:deaf", "--min-trigger-recall", "0.9", *ARGV)
    assert result.exit_code in (1, 3), result.output  # `deaf` never loads it: not a PASS
    folder = ws / "triggers"
    report = TriggerReport.model_validate_json((folder / "triggers.json").read_text())
    assert report.agents is not None
    by_name = {a.name: a for a in report.agents}
    assert (by_name["fires"].recall.value, by_name["fires"].false_trigger_rate.value) == (1.0, 0.0)
    assert (by_name["deaf"].recall.value, by_name["deaf"].false_trigger_rate.value) == (0.0, 0.0)
    assert by_name["fires"].executor["model"] == "fires"
    assert report.recall.value == 0.5 and report.recall.denominator == 4  # pooled over both agents' runs
    assert report.gate is not None and report.gate.status != "PASS" and "deaf" in report.gate.headline
    for name in ("fires", "deaf"):
        own = TriggerReport.model_validate_json((folder / "agents" / name / "triggers.json").read_text())
        assert own.agents is None and own.recall == by_name[name].recall
    records = [run.record for q in report.queries for run in q.runs]
    assert all((folder / r).is_file() for r in records), records
    assert "fires: recall 100%" in result.flat and "deaf: recall 0%" in result.flat, result.output
    md = (folder / "triggers.md").read_text()
    assert "| fires |" in md and "| deaf |" in md


def test_one_agent_writes_the_triggers_json_it_always_did(tmp_path: Path) -> None:
    skill = write_skill(tmp_path)
    plain = invoke("triggers", str(skill), "--workspace", str(tmp_path / "a"), "--executor", "command",
                   "--model", "fires", *ARGV)
    one = invoke("triggers", str(skill), "--workspace", str(tmp_path / "b"), "--agent", "command:fires", *ARGV)
    assert plain.exit_code == one.exit_code == 0, (plain.output, one.output)
    a, b = (json.loads((tmp_path / w / "triggers" / "triggers.json").read_text()) for w in ("a", "b"))
    assert list(a) == list(b) and "agents" not in b
    assert a["recall"] == b["recall"] and a["executor"] == b["executor"]
    assert not (tmp_path / "b" / "triggers" / "agents").exists()
