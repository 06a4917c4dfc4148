"""Which agents a run measures (issue 37, run/agents.py): names derived from --agent, checked
names in the config, and every mistake an exit 2 naming the file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

from skillassay.errors import InputError
from skillassay.models.agents import AgentConfig
from skillassay.run.agent_checks import agent_problems
from skillassay.run.agents import parse_agent_flags, slug, unique_names


def test_names_from_models_are_folder_safe_and_unique() -> None:
    agents = parse_agent_flags(["claude-code:claude-haiku-4-5", "claude-code:Claude/Haiku 4.5",
                                "local", "local:qwen2.5:0.5b", "echo", "echo"])
    assert [a.name for a in agents] == ["claude-haiku-4-5", "claude-haiku-4.5", "local", "qwen2.5-0.5b", "echo",
                                        "echo-2"]
    assert agents[3].executor == "local" and agents[3].model == "qwen2.5:0.5b"  # only the first colon splits
    assert slug("../../etc") == "etc" and slug("///") == "agent" and len(slug("x" * 99)) == 40
    assert unique_names(["a" * 40, "a" * 40]) == ["a" * 40, "a" * 38 + "-2"]


@pytest.mark.parametrize("value", ["", ":model", "nope:model"])
def test_a_bad_agent_flag_names_the_flag(value: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_agent_flags([value])
    assert caught.value.problems[0].file == "--agent"


def test_duplicate_name_and_unknown_executor_name_their_fields() -> None:
    agents = [AgentConfig(name="a", executor="echo"), AgentConfig(name="a", executor="echo"),
              AgentConfig(name="b", executor="no-such-executor")]
    problems = agent_problems(agents, "cfg.json")
    assert [(p.file, p.location) for p in problems] == [("cfg.json", "$.agents[1].name"),
                                                        ("cfg.json", "$.agents[2].executor")]


def write_skill(root: Path, agents: object) -> Path:
    skill = root / "s"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "s", "evals": [
        {"id": 1, "prompt": "p", "expectations": [{"type": "contains", "value": "x"}]}]}), encoding="utf-8")
    (skill / "evals" / "benchmark_config.json").write_text(json.dumps({"agents": agents}), encoding="utf-8")
    return skill


@pytest.mark.parametrize(("agents", "field"), [
    ([{"name": "a", "executor": "echo"}, {"name": "a", "executor": "echo"}], "$.agents[1].name"),
    ([{"name": "a", "executor": "echo"}, {"name": "../x", "executor": "echo"}], "$.agents[1].name"),
    ([{"name": "a", "executor": "echo"}, {"name": "b", "executor": "nope"}], "$.agents[1].executor"),
    ([{"name": "a", "executor": "echo", "required": "yes"}], "$.agents[0].required"),
])
def test_run_refuses_a_bad_agents_list_naming_file_and_field(tmp_path: Path, agents: object, field: str) -> None:
    skill = write_skill(tmp_path, agents)
    result = invoke("run", str(skill), "--workspace", str(tmp_path / "ws"))
    assert result.exit_code == 2, result.output
    assert not result.crashed
    assert "benchmark_config.json" in result.flat and field in result.flat, result.output
    assert not (tmp_path / "ws").exists()  # refused before anything was written
    assert invoke("validate", str(skill)).exit_code == 2


def test_run_refuses_an_unknown_agent_flag(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, [])
    result = invoke("run", str(skill), "--workspace", str(tmp_path / "ws"), "--agent", "echo", "--agent", "nope:m")
    assert result.exit_code == 2 and "--agent" in result.flat and "nope" in result.flat, result.output
    assert not (tmp_path / "ws").exists()


def test_an_agent_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    from skillassay.store.agents_layout import agent_dir

    top = tmp_path / "iteration-1"
    (top / "agents").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (top / "agents" / "a").symlink_to(outside)
    with pytest.raises(InputError):
        agent_dir(top, "a")
    (top / "agents" / "a").unlink()
    (top / "agents").rmdir()
    (top / "agents").symlink_to(outside)
    with pytest.raises(InputError):
        agent_dir(top, "b")
    with pytest.raises(InputError):
        agent_dir(tmp_path, "../x")
