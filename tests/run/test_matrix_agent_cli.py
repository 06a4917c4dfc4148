"""Issue 37's "Done when", with the REAL Claude Code CLI: one matrix run of three agents, Claude
Code under two models against the loopback stand-in for the Anthropic API (which answers per
model, and per arm by whether the request lists the skill) and a `command` agent that never reads
the skill. One iteration; each agent's folder reads as a skill-creator iteration; matrix.json
calls the heterogeneity, the command agent's gate FAILs, the matrix FAILs, and report.md says so
in its first lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke
from fake_model_api import FakeModelAPI, Reply
from test_matrix_run import read_like_skill_creator

from skillassay.models.matrix import MatrixSummary

pytestmark = [pytest.mark.agent_cli,
              pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")]
FAKE_KEY = "sk-ant-fake-test-key-0123456789"
SKILL = "zebra-magic"
EVALS = 6  # the fewest where a FAIL at 0/6 holds family-wise across three agents
ANSWERS = {  # model -> (with the skill listed, without): the skill helps both models
    "claude-sonnet-4-5": ("MAGICWORD", "I do not know."),
    "claude-haiku-4-5": ("MAGICWORD, briefly.", "No idea."),
}


def answer(body: dict[str, Any]) -> Reply:
    """As a model would: the skill's word only when the skill is listed to it."""
    seen = json.dumps(body.get("system", "")) + json.dumps(body.get("messages", []))
    with_skill, without = ANSWERS.get(str(body.get("model")), ("?", "?"))
    return Reply(text=with_skill if SKILL in seen else without, input_tokens=200, output_tokens=10)


def make_skill(root: Path, base_url: str) -> tuple[Path, Path]:
    skill = root / SKILL
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {SKILL}\ndescription: Answers with the magic word. Use for every "
                                    "question.\n---\nAlways answer MAGICWORD.\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": SKILL, "evals": [
        {"id": i, "prompt": f"Question {i}: what is the word?",
         "expectations": [{"type": "contains", "value": "MAGICWORD"}]} for i in range(1, EVALS + 1)]}))
    claude = {"executor": "claude-code", "options": {"base_url": base_url}}
    config = root / "matrix.json"
    config.write_text(json.dumps({
        "trials_per_eval": 1, "sandbox": "none", "concurrency": 2, "thresholds": {"min_pass_rate": 0.5},
        "agents": [{"name": "sonnet", "model": "claude-sonnet-4-5", **claude},
                   {"name": "haiku", "model": "claude-haiku-4-5", **claude},
                   {"name": "deaf", "executor": "command", "options": {"argv": ["echo", "no idea"]}}]}))
    return skill, config


def test_matrix_of_two_claude_models_and_a_command_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    ws = tmp_path / "ws"
    with FakeModelAPI([], answer=answer) as api:
        skill, config = make_skill(tmp_path, api.base_url)
        result = invoke("run", str(skill), "--workspace", str(ws), "--config", str(config))
    assert result.exit_code == 1, result.output
    models = {r["body"].get("model") for r in api.model_requests()}
    assert {"claude-sonnet-4-5", "claude-haiku-4-5"} <= models, models  # each agent ran its own model
    it = ws / "iteration-1"
    for name in ("sonnet", "haiku", "deaf"):
        runs = read_like_skill_creator(it / "agents" / name)
        assert len(runs["with_skill"]) == len(runs["without_skill"]) == EVALS
    summary = MatrixSummary.model_validate_json((it / "matrix.json").read_text())
    by_name = {a.name: a for a in summary.agents}
    assert by_name["sonnet"].with_skill_pass_rate == by_name["haiku"].with_skill_pass_rate == 1.0
    assert by_name["sonnet"].baseline_pass_rate == by_name["haiku"].baseline_pass_rate == 0.0
    assert by_name["deaf"].effect == 0.0 and by_name["deaf"].verdict == "FAIL"
    assert summary.heterogeneity.called, summary.heterogeneity.explanation
    assert summary.verdict == "FAIL"
    pairs = {tuple(p.agents): p.differs for p in summary.heterogeneity.pairs}
    assert not pairs[("sonnet", "haiku")]
    head = "\n".join((it / "report.md").read_text().splitlines()[:4])
    assert "FAIL" in head and "deaf" in head, head
    assert "deaf" in result.flat and "matrix: FAIL" in result.flat, result.output
    assert FAKE_KEY not in "".join(p.read_text(errors="replace") for p in it.rglob("*.json"))
