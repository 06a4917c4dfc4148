"""Multi-turn evals in evals.json (issue 39): `turns` instead of `prompt`, validated like every
spec file (exit 2 naming the eval, the turn and the field), the first message exposed as
`prompt` so skill-creator's readers still find one, and single-prompt evals unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import invoke

from skillassay.models import EvalSet

SKILL_MD = "---\nname: talker\ndescription: Talks. Use when asked to talk.\n---\nSay hello.\n"


def write_skill(root: Path, evals: list[dict]) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "talker", "evals": evals}), encoding="utf-8")
    return root


def conversation(first: str = "hi", second: str = "and then?") -> dict:
    return {"id": 1, "turns": [{"prompt": first, "expectations": [{"type": "contains", "value": "hi"}]},
                               {"prompt": second}],
            "expectations": [{"type": "contains", "value": "then"}]}


def test_the_first_turn_is_the_prompt_and_expectations_name_their_turn() -> None:
    ev = EvalSet.model_validate({"skill_name": "talker", "evals": [conversation()]}).evals[0]
    assert ev.prompt == "hi" and ev.turn_prompts == ["hi", "and then?"]
    assert ev.expectation_turns() == [1, None]
    assert ev.expectation_paths() == ["turns[0].expectations[0]", "expectations[0]"]


def test_a_single_prompt_eval_is_unchanged() -> None:
    ev = EvalSet.model_validate({"skill_name": "t", "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}).evals[0]
    assert ev.turns is None and ev.turn_prompts == ["p"] and ev.expectation_turns() == []
    assert ev.all_expectations() == ["x"]


def test_an_empty_turn_prompt_exits_2_naming_the_eval_turn_and_field(tmp_path: Path) -> None:
    bad = conversation(second="")
    skill = write_skill(tmp_path / "talker", [{"id": 7, "prompt": "fine"}, bad])
    result = invoke("validate", str(skill))
    assert result.exit_code == 2, result.output
    assert "evals.json" in result.output and "$.evals[1].turns[1].prompt" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_one_turn_and_a_prompt_that_differs_are_refused(tmp_path: Path) -> None:
    one = {"id": 1, "turns": [{"prompt": "only"}]}
    both = {**conversation(), "id": 2, "prompt": "something else"}
    skill = write_skill(tmp_path / "talker", [one, both])
    result = invoke("validate", str(skill))
    assert result.exit_code == 2, result.output
    assert "$.evals[0].turns" in result.output and "at least 2" in result.output, result.output
    assert "$.evals[1]" in result.output and "not both" in result.output, result.output


def test_a_typo_inside_a_turn_is_named(tmp_path: Path) -> None:
    ev = conversation()
    ev["turns"][1]["expectatons"] = []
    skill = write_skill(tmp_path / "talker", [ev])
    result = invoke("validate", str(skill))
    assert result.exit_code == 2 and "$.evals[0].turns[1].expectatons" in result.output, result.output


def test_a_bad_assertion_in_a_turn_is_named_with_its_turn(tmp_path: Path) -> None:
    ev = conversation()
    ev["turns"][1]["expectations"] = [{"type": "no-such-check"}]
    skill = write_skill(tmp_path / "talker", [ev])
    result = invoke("validate", str(skill))
    assert result.exit_code == 2, result.output
    assert "turns[1].expectations[0]" in result.output, result.output


def test_a_file_with_both_written_as_we_write_it_reads_back() -> None:
    """eval_metadata.json and skill-creator files carry `prompt` beside `turns`: equal, accepted."""
    ev = {**conversation(), "prompt": "hi"}
    assert EvalSet.model_validate({"skill_name": "t", "evals": [ev]}).evals[0].prompt == "hi"


def test_schema_documents_turns() -> None:
    result = invoke("schema", "evals")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    text = json.dumps(schema)
    assert '"turns"' in text and "conversation" in text
