"""Related assertions take the same parameter names (`file` names the output file of every file
and JSON check, `pattern` every regular expression); the old names keep working, with a
deprecation note that `validate` and `run` show naming the eval and the assertion."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runner import invoke
from test_assertions import FILES, compile_one, make_view

from skillassay.errors import InputError
from skillassay.grade.grader import check

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "acme-vpn"


@pytest.mark.parametrize("spec", [{"type": "file_exists", "file": "report.txt"},
                                  {"type": "file_contains", "file": "report.txt", "value": "42 rows"},
                                  {"type": "file_matches", "file": "report.txt", "pattern": r"Total: \d+"},
                                  {"type": "json_valid", "file": "data.json"},
                                  {"type": "regex", "pattern": r"\b4433\b"}])
def test_every_file_check_takes_file_and_every_regex_pattern(tmp_path: Path, spec: dict) -> None:
    compiled = compile_one(tmp_path, spec)
    assert compiled.plugin is not None and compiled.plugin.deprecated == []
    view = make_view(tmp_path, files={**FILES, "data.json": "{}"})
    assert check(compiled, view).passed


@pytest.mark.parametrize(("spec", "old", "new"), [({"type": "file_exists", "path": "report.txt"}, "path", "file"),
                                                  ({"type": "file_matches", "path": "report.txt", "pattern": "42"},
                                                   "path", "file"),
                                                  ({"type": "regex", "value": "4433"}, "value", "pattern")])
def test_the_old_names_still_work_with_a_note(tmp_path: Path, spec: dict, old: str, new: str) -> None:
    compiled = compile_one(tmp_path, spec)
    assert compiled.plugin is not None
    assert compiled.plugin.deprecated == [f"'{spec['type']}' parameter '{old}' is deprecated: write '{new}' "
                                          "(the old name still works)"]
    assert check(compiled, make_view(tmp_path, files=FILES)).passed


def test_the_old_and_the_new_name_together_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'path' is the old name of 'file'"):
        compile_one(tmp_path, {"type": "file_exists", "path": "a.txt", "file": "b.txt"})


def test_validate_warns_naming_the_eval_and_the_assertion(tmp_path: Path) -> None:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text(encoding="utf-8"))
    evals["evals"][2]["expectations"].append({"type": "file_exists", "path": "answer.md"})
    evals_path.write_text(json.dumps(evals), encoding="utf-8")
    result = invoke("validate", str(skill))
    assert result.exit_code == 0, result.output
    assert "1 valid" in result.stdout and "Traceback" not in result.output
    flat = " ".join(result.stderr.split())
    assert "warning" in flat and "eval 3 (help-desk-email)" in flat and "expectations[1]" in flat, result.stderr
    assert "'file_exists' parameter 'path' is deprecated: write 'file'" in flat


def test_run_warns_before_the_trials_and_grades_with_the_old_name(tmp_path: Path) -> None:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text(encoding="utf-8"))
    evals["evals"] = [evals["evals"][0] | {"expectations": [{"type": "file_exists", "path": "answer.md"}]}]
    evals_path.write_text(json.dumps(evals), encoding="utf-8")
    result = invoke("run", str(skill), "--executor", "echo", "--workspace", str(tmp_path / "ws"), "--trials", "1")
    assert result.exit_code in (0, 1, 3), result.output
    assert "eval 1 (server-port)" in result.flat and "'path' is deprecated: write 'file'" in result.flat
    grading = json.loads(next((tmp_path / "ws").rglob("grading.json")).read_text(encoding="utf-8"))
    assert grading["expectations"][0]["passed"] is True, grading
