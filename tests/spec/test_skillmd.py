"""Each Agent Skills rule for SKILL.md has a passing and a failing case."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillassay.errors import Problem
from skillassay.spec.skillmd import check_skill_folder

GOOD_DESCRIPTION = "Extracts tables from PDF files. Use when the user mentions PDFs."


def skill(tmp_path: Path, frontmatter: str, folder: str = "pdf-tables", body: str = "Body.\n") -> Path:
    path = tmp_path / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return path


def check(tmp_path: Path, extra: str = "", *, name: str = "pdf-tables",
          description: str = GOOD_DESCRIPTION, folder: str | None = None) -> list[Problem]:
    front = f"name: {name}\ndescription: {description!r}\n{extra}"
    return check_skill_folder(skill(tmp_path, front, folder or name))


def only(problems: list[Problem], key: str) -> Problem:
    """The single problem, which must be about `key` and name SKILL.md."""
    assert len(problems) == 1, [str(p) for p in problems]
    [problem] = problems
    assert problem.location == key
    assert problem.file.endswith("SKILL.md") and "SKILL.md" in str(problem)
    return problem


def test_minimal_skill_is_valid(tmp_path: Path) -> None:
    assert check(tmp_path) == []


def test_all_optional_keys_valid(tmp_path: Path) -> None:
    extra = (
        "license: Apache-2.0\n"
        "compatibility: Requires python3 and network access\n"
        "metadata:\n  author: me\n  version: '1.0'\n"
        "allowed-tools: Bash(git:*) Read\n"
    )
    assert check(tmp_path, extra) == []


# ---- frontmatter present -----------------------------------------------------------------

def test_missing_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "pdf-tables"
    path.mkdir()
    (path / "SKILL.md").write_text("# Just markdown\n", encoding="utf-8")
    problem = only(check_skill_folder(path), "frontmatter")
    assert "---" in problem.message


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "pdf-tables"
    path.mkdir()
    (path / "SKILL.md").write_text("---\nname: pdf-tables\n", encoding="utf-8")
    assert "not closed" in only(check_skill_folder(path), "frontmatter").message


def test_frontmatter_not_a_mapping(tmp_path: Path) -> None:
    only(check_skill_folder(skill(tmp_path, "- a\n- b\n")), "frontmatter")


def test_frontmatter_bad_yaml(tmp_path: Path) -> None:
    problem = only(check_skill_folder(skill(tmp_path, "name: [unclosed\n")), "frontmatter")
    assert "invalid YAML" in problem.message


def test_missing_skill_md_and_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    [problem] = check_skill_folder(tmp_path / "empty")
    assert problem.file.endswith("SKILL.md") and "not found" in problem.message
    [problem] = check_skill_folder(tmp_path / "absent")
    assert "not found" in problem.message


def test_skill_md_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "pdf-tables"
    path.mkdir()
    (path / "SKILL.md").write_bytes("---\nname: pdf-tables\n---\n".encode("utf-16"))
    [problem] = check_skill_folder(path)
    assert "UTF-8" in problem.message


# ---- name --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a", "pdf", "pdf-tables-2", "x" * 64, "0-9"])
def test_name_valid(tmp_path: Path, name: str) -> None:
    assert check(tmp_path, name=name) == []


@pytest.mark.parametrize(("name", "fragment"), [
    ("x" * 65, "1-64 characters"),
    ("PDF-tables", "lowercase"),
    ("pdf_tables", "lowercase"),
    ("pdf tables", "lowercase"),
    ("-pdf", "start or end"),
    ("pdf-", "start or end"),
    ("pdf--tables", "'--'"),
])
def test_name_invalid(tmp_path: Path, name: str, fragment: str) -> None:
    folder = name.replace(" ", "_")  # folder equals the name so only the rule under test fails
    problems = check_skill_folder(skill(tmp_path, f"name: '{name}'\ndescription: d\n", folder))
    names = [p for p in problems if p.location == "name"]
    assert any(fragment in p.message for p in names), [str(p) for p in problems]
    assert all(p.location == "name" for p in problems)


def test_name_empty(tmp_path: Path) -> None:
    assert "1-64" in only(check(tmp_path, name="''", folder="pdf-tables"), "name").message


def test_name_must_equal_folder(tmp_path: Path) -> None:
    problem = only(check(tmp_path, name="pdf-tables", folder="pdf-tools"), "name")
    assert "'pdf-tools'" in problem.message and "folder" in problem.message


def test_name_folder_given_as_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = skill(tmp_path, f"name: pdf-tables\ndescription: {GOOD_DESCRIPTION}\n")
    monkeypatch.chdir(folder)
    assert check_skill_folder(Path(".")) == []


def test_name_not_a_string(tmp_path: Path) -> None:
    problem = only(check(tmp_path, name="123", folder="123"), "name")
    assert "got a number" in problem.message


def test_name_missing(tmp_path: Path) -> None:
    problem = only(check_skill_folder(skill(tmp_path, "description: d\n")), "name")
    assert "required" in problem.message


# ---- description -------------------------------------------------------------------------

def test_description_at_limit(tmp_path: Path) -> None:
    assert check(tmp_path, description="d" * 1024) == []


@pytest.mark.parametrize(("description", "fragment"), [
    ("d" * 1025, "at most 1024"),
    ("", "must not be empty"),
    ("   ", "must not be empty"),
])
def test_description_invalid(tmp_path: Path, description: str, fragment: str) -> None:
    assert fragment in only(check(tmp_path, description=description), "description").message


def test_description_missing_or_not_string(tmp_path: Path) -> None:
    assert "required" in only(
        check_skill_folder(skill(tmp_path, "name: pdf-tables\n")), "description").message
    problem = only(check_skill_folder(skill(tmp_path, "name: pdf-tables\ndescription: [a]\n")),
                   "description")
    assert "got a list" in problem.message


# ---- optional keys -----------------------------------------------------------------------

@pytest.mark.parametrize(("extra", "key", "fragment"), [
    ("license: 2\n", "license", "expected a string"),
    ("compatibility: 5\n", "compatibility", "expected a string"),
    (f"compatibility: {'c' * 501}\n", "compatibility", "1-500"),
    ("compatibility: ''\n", "compatibility", "1-500"),
    ("metadata: just text\n", "metadata", "mapping"),
    ("metadata:\n  version: 1.0\n", "metadata", "key 'version': expected a string value"),
    ("metadata:\n  1: one\n", "metadata", "expected a string key"),
    ("allowed-tools: 3\n", "allowed-tools", "string (space-separated) or a list"),
    ("allowed-tools: [Read, 3]\n", "allowed-tools", "item 1"),
])
def test_optional_key_invalid(tmp_path: Path, extra: str, key: str, fragment: str) -> None:
    assert fragment in only(check(tmp_path, extra), key).message


@pytest.mark.parametrize("extra", [
    "license: Proprietary. LICENSE.txt has complete terms\n",
    f"compatibility: {'c' * 500}\n",
    "metadata: {}\n",
    "allowed-tools: [Read, Write]\n",
    "allowed-tools: Read Write\n",
])
def test_optional_key_valid(tmp_path: Path, extra: str) -> None:
    assert check(tmp_path, extra) == []


def test_unknown_key_is_an_error(tmp_path: Path) -> None:
    problem = only(check(tmp_path, "version: '2'\n"), "version")
    assert "unknown frontmatter key" in problem.message and "allowed-tools" in problem.message


def test_every_problem_is_reported(tmp_path: Path) -> None:
    problems = check_skill_folder(skill(
        tmp_path, "name: Bad--\ndescription: ''\nfoo: 1\nlicense: 3\n", folder="elsewhere"))
    assert {p.location for p in problems} == {"name", "description", "foo", "license"}
    assert len([p for p in problems if p.location == "name"]) == 4


def test_validate_accepts_the_snapshot_a_run_wrote(tmp_path: Path) -> None:
    """The tool's own files validate (issue 34): an iteration's skill-snapshot/ holds the skill
    under another folder name, which the name-equals-folder rule refused."""
    import shutil

    import repo_paths
    from cli_runner import cli

    skill = tmp_path / "acme-vpn"
    shutil.copytree(repo_paths.EXAMPLE, skill)
    assert cli(["run", str(skill), "--executor", "echo", "--trials", "1"]).exit_code in (0, 3)  # a gate verdict
    snapshot = tmp_path / "acme-vpn-workspace" / "iteration-1" / "skill-snapshot"
    result = cli(["validate", str(snapshot), str(snapshot / "evals" / "evals.json")])
    assert result.exit_code == 0, result.output
    elsewhere = tmp_path / "skill-snapshot"  # the rule still holds outside an iteration
    shutil.copytree(snapshot, elsewhere)
    assert "must equal the skill folder's name" in cli(["validate", str(elsewhere)]).output
