"""`validate` checks a trigger eval set (SKILL_DIR/evals/trigger_evals.json) as `triggers`
reads it (issue 34): every bad entry named by file and field, exit 2; a skill folder's own
trigger eval set is checked with it. It used to say "cannot tell the file kind"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import repo_paths
from cli_runner import cli

from skillassay.errors import InputError
from skillassay.spec.validate import kind_of

EXAMPLE = repo_paths.EXAMPLE


def test_the_example_trigger_eval_set_is_valid() -> None:
    result = cli(["validate", str(EXAMPLE / "evals" / "trigger_evals.json")])
    assert result.exit_code == 0 and "1 valid" in result.output, result.output
    assert kind_of(Path("trigger_evals.json")) == "trigger_evals"


def test_each_bad_entry_is_named_by_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "trigger_evals.json"
    path.write_text(json.dumps([{"query": "a", "should_trigger": True},
                                {"query": 3, "should_trigger": "maybe"},
                                {"query": "a", "should_trigger": False},
                                {"query": "b", "should_trigger": True, "shold": 1}]))
    result = cli(["validate", str(path)])
    text = result.output
    assert result.exit_code == 2, text
    for field in ("[1].query", "[1].should_trigger", "[3].shold"):
        assert f"{path}: ${field}" in text.replace("\n", ""), (field, text)
    assert "Traceback" not in text


@pytest.mark.parametrize("content, words", [
    ("{\"query\": \"a\", \"should_trigger\": true}", "expected a JSON list"),
    ("[]", "at least one query"),
    ("[{\"query\": \"a\", \"should_trigger\": true}, {\"query\": \"a\", \"should_trigger\": false}]", "repeats query [0]"),
    ("[{\"query\": \"a\"", "JSON"),
])
def test_the_triggers_reader_and_validate_refuse_the_same_files(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "trigger_evals.json"
    path.write_text(content)
    from skillassay.spec.trigger_evals import load_trigger_queries

    with pytest.raises(InputError) as caught:
        load_trigger_queries(path)
    assert words in str(caught.value)
    result = cli(["validate", "--kind", "trigger_evals", str(path)])
    assert result.exit_code == 2 and words in result.output and str(path) in result.output, result.output


def test_a_skill_folder_has_its_trigger_eval_set_checked(tmp_path: Path) -> None:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    assert cli(["validate", str(skill)]).exit_code == 0
    (skill / "evals" / "trigger_evals.json").write_text(json.dumps([{"query": "", "should_trigger": True}]))
    result = cli(["validate", str(skill)])
    assert result.exit_code == 2 and "trigger_evals.json: $[0].query" in result.output.replace("\n", ""), result.output
