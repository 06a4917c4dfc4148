"""`skillassay aggregate` (workflows/aggregate.py, reading run folders one at a time) writes the
same per-turn section as `run` for a multi-turn iteration, and `skillassay grade` re-grades each
turn on its own answer (from turns.json) and keeps the conversation in eval_metadata.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

SKILL_MD = "---\nname: returns\ndescription: Acme returns. Use when asked.\n---\nReturn window: 21 days.\n"


@pytest.mark.slow  # a whole run, then an aggregation
def test_aggregate_and_grade_keep_the_turns(tmp_path: Path) -> None:
    skill = tmp_path / "returns"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    evals = [{"id": i, "turns": [{"prompt": "window?", "expectations": [{"type": "contains", "value": "21 days"}]},
                                 {"prompt": f"bye {i}", "expectations": [{"type": "contains", "value": "bye"}]}]}
             for i in (1, 2)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "returns", "evals": evals}))
    ws = tmp_path / "ws"
    assert invoke("run", str(skill), "--executor", "echo", "--workspace", str(ws), "--trials", "2").exit_code in (0, 1, 3)
    it = ws / "iteration-1"
    out = tmp_path / "again.json"
    result = invoke("aggregate", str(it), "-o", str(out))
    assert result.exit_code == 0, result.output
    ran, aggregated = json.loads((it / "benchmark.json").read_text()), json.loads(out.read_text())
    assert aggregated["turns"] == ran["turns"]
    assert [t["with_skill"]["passes"] for t in ran["turns"]["per_turn"]] == [4, 4]
    assert "Per turn" in out.with_suffix(".md").read_text()

    regraded = invoke("grade", str(it))
    assert regraded.exit_code in (0, 1, 3), regraded.output
    assert json.loads((it / "benchmark.json").read_text())["turns"] == ran["turns"]
    grading = json.loads((it / "eval-1/with_skill/run-1/grading.json").read_text())
    assert [(e["turn"], e["passed"]) for e in grading["expectations"]] == [(1, True), (2, True)]
    assert len(json.loads((it / "eval-1/eval_metadata.json").read_text())["turns"]) == 2
