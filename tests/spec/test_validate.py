"""`validate` and `schema`: every bad input is a Problem naming the file and the JSON path,
and the CLI turns it into exit 2 with that message, never a traceback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import cli

from skillassay.errors import InputError
from skillassay.models import MODELS
from skillassay.run.preflight import validate_paths
from skillassay.spec.validate import json_schemas, kind_of

SPEC = repo_paths.FIXTURES / "spec"

SKILL_MD = "---\nname: {name}\ndescription: Does one thing well. Use when asked.\n---\nBody.\n"


def load(name: str) -> Any:
    return json.loads((SPEC / name).read_text(encoding="utf-8"))


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def make_skill(root: Path, name: str = "my-skill") -> Path:
    """A skill folder holding the input file the evals.json fixture names."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name), encoding="utf-8")
    (folder / "evals" / "files").mkdir(parents=True)
    (folder / "evals" / "files" / "sample1.pdf").write_bytes(b"%PDF-1.4\n")
    return folder


# ---- kinds -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "kind"), [
    ("evals.json", "evals"), ("eval_metadata.json", "eval_metadata"),
    ("grading.json", "grading"), ("metrics.json", "metrics"), ("timing.json", "timing"),
    ("history.json", "history"), ("benchmark.json", "benchmark"),
    ("comparison.json", "comparison"), ("comparison-3.json", "comparison"),
    ("analysis.json", "analysis"), ("feedback.json", "feedback"),
    ("benchmark_config.json", "config"), ("config.json", "config"), ("my-config.json", "config"),
    ("Grading.JSON", "grading"), ("notes.json", None), ("evals.yaml", None),
])
def test_kind_from_file_name(name: str, kind: str | None) -> None:
    assert kind_of(Path(name)) == kind


def test_every_spec_fixture_validates_by_its_name() -> None:
    paths = sorted(SPEC.glob("*.json"))
    assert len(paths) == 17
    assert validate_paths(paths, None, "local") == []  # plain expectations: with a judge, as run takes them


def test_unknown_kind_asks_for_kind_option(tmp_path: Path) -> None:
    path = write(tmp_path / "results.json", load("grading.json"))
    [problem] = validate_paths([path], None)
    assert "results.json" in str(problem) and "--kind" in problem.message
    assert "grading" in problem.message and "comparison" in problem.message
    assert validate_paths([path], "grading") == []


def test_kind_option_overrides_the_name(tmp_path: Path) -> None:
    path = write(tmp_path / "evals.json", load("grading.json"))
    assert validate_paths([path], None)  # an evals.json with grading content is wrong
    assert validate_paths([path], "grading") == []


def test_bad_kind_option_lists_the_kinds(tmp_path: Path) -> None:
    [problem] = validate_paths([SPEC / "grading.json"], "gradings")
    assert "gradings" in problem.message and "eval_metadata" in problem.message


# ---- malformed variants of every kind ----------------------------------------------------

Mutation = Callable[[Any], None]


def _set(path: tuple, value: Any) -> Mutation:
    def mutate(data: Any) -> None:
        for part in path[:-1]:
            data = data[part]
        data[path[-1]] = value
    return mutate


def _del(path: tuple) -> Mutation:
    def mutate(data: Any) -> None:
        for part in path[:-1]:
            data = data[part]
        del data[path[-1]]
    return mutate


# (fixture, file name to write, mutation, JSON path expected in the message, message fragment)
MALFORMED = [
    # triggers.json, description_history.json (ours)
    ("triggers.json", "triggers.json", _del(("recall",)), "$.recall", "required"),
    ("triggers.json", "triggers.json", _set(("queries", 0, "outcome"), "maybe"), "$.queries[0].outcome", "ok"),
    ("description_history.json", "description_history.json", _set(("rounds", 0, "status"), "won"),
     "$.rounds[0].status", "accepted"),
    # evals.json
    ("evals.json", "evals.json", _del(("evals", 0, "id")), "$.evals[0].id", "required"),
    ("evals.json", "evals.json", _set(("evals", 0, "id"), "one"), "$.evals[0].id", "integer"),
    ("evals.json", "evals.json", _set(("evals", 0, "prompt"), ""), "$.evals[0].prompt", "1 char"),
    ("evals.json", "evals.json", _set(("evals",), []), "$.evals", "at least 1"),
    ("evals.json", "evals.json", _set(("evals", 0, "expectations", 1), 7),
     "$.evals[0].expectations", "item 1 must be a string or an assertion object"),
    ("evals.json", "evals.json", _set(("skill_name",), None), "$.skill_name", "string"),
    # eval_metadata.json
    ("eval_metadata.json", "eval_metadata.json", _del(("eval_id",)), "$.eval_id", "required"),
    ("eval_metadata.json", "eval_metadata.json", _set(("expectations",), "x"),
     "$.expectations", "list"),
    ("eval_metadata.json", "eval_metadata.json", _set(("eval_id",), 1.5), "$.eval_id",
     "fractional"),
    # grading.json
    ("grading.json", "grading.json", _del(("summary",)), "$.summary", "required"),
    ("grading.json", "grading.json", _set(("expectations", 0, "passed"), "maybe"),
     "$.expectations[0].passed", "boolean"),
    ("grading.json", "grading.json", _set(("summary", "pass_rate"), 1.5),
     "$.summary.pass_rate", "less than or equal to 1"),
    ("grading.json", "grading.json", _set(("execution_metrics", "tool_calls", "Read"), "five"),
     "$.execution_metrics.tool_calls.Read", "integer"),
    # metrics.json (no required fields)
    ("metrics.json", "metrics.json", _set(("total_tool_calls",), "many"),
     "$.total_tool_calls", "integer"),
    ("metrics.json", "metrics.json", _set(("files_created",), "out.pdf"),
     "$.files_created", "list"),
    ("metrics.json", "metrics.json", _set(("tool_calls",), [1]), "$.tool_calls", "dictionary"),
    # timing.json (no required fields)
    ("timing.json", "timing.json", _set(("duration_ms",), "fast"), "$.duration_ms", "integer"),
    ("timing.json", "timing.json", _set(("total_duration_seconds",), [1]),
     "$.total_duration_seconds", "number"),
    # history.json
    ("history.json", "history.json", _del(("current_best",)), "$.current_best", "required"),
    ("history.json", "history.json", _set(("iterations", 1, "grading_result"), "draw"),
     "$.iterations[1].grading_result", "'won'"),
    ("history.json", "history.json", _set(("iterations", 0, "expectation_pass_rate"), 2),
     "$.iterations[0].expectation_pass_rate", "less than or equal to 1"),
    ("history.json", "history.json", _set(("current_best",), "v9"), "$", "current_best 'v9'"),
    # benchmark.json, skill-creator shape
    ("benchmark_skill_creator.json", "benchmark.json", _del(("runs", 0, "result")),
     "$.runs[0].result", "required"),
    ("benchmark_skill_creator.json", "benchmark.json", _set(("runs", 0, "run_number"), "one"),
     "$.runs[0].run_number", "integer"),
    ("benchmark_skill_creator.json", "benchmark.json",
     _del(("run_summary", "with_skill", "tokens")), "$.run_summary.with_skill.tokens", "required"),
    ("benchmark_skill_creator.json", "benchmark.json", _set(("run_summary", "with_skill"), 3),
     "$.run_summary.with_skill", "JSON object"),
    # benchmark.json, benchmark-process shape
    ("benchmark_process.json", "benchmark.json", _del(("summary", "with_skill")),
     "$.summary.with_skill", "required"),
    ("benchmark_process.json", "benchmark.json", _set(("per_eval", 0, "trials"), "three"),
     "$.per_eval[0].trials", "integer"),
    ("benchmark_process.json", "benchmark.json", _set(("thresholds_met", "min_pass_rate"), "perhaps"),
     "$.thresholds_met.min_pass_rate", "boolean"),
    # comparison-N.json
    ("comparison.json", "comparison-2.json", _del(("reasoning",)), "$.reasoning", "required"),
    ("comparison.json", "comparison-2.json", _set(("winner",), "C"), "$.winner", "'TIE'"),
    ("comparison.json", "comparison-2.json", _set(("rubric", "A", "content", "accuracy"), 7),
     "$.rubric.A.content.accuracy", "less than or equal to 5"),
    ("comparison.json", "comparison-2.json", _set(("output_quality", "C"), {"score": 1}),
     "$.output_quality.C", "invalid key"),
    # analysis.json
    ("analysis.json", "analysis.json", _del(("comparison_summary",)), "$.comparison_summary",
     "required"),
    ("analysis.json", "analysis.json", _set(("winner_strengths",), "all of them"),
     "$.winner_strengths", "list"),
    ("analysis.json", "analysis.json", _set(("improvement_suggestions", 0, "priority"), "urgent"),
     "$.improvement_suggestions[0].priority", "'high'"),
    # feedback.json
    ("feedback.json", "feedback.json", _del(("reviews", 0, "timestamp")),
     "$.reviews[0].timestamp", "required"),
    ("feedback.json", "feedback.json", _set(("reviews",), {"a": 1}), "$.reviews", "list"),
    ("feedback.json", "feedback.json", _set(("reviews", 0, "run_id"), ""),
     "$.reviews[0].run_id", "1 char"),
    # the tool's own files (issue 34: validate refused comparison_previous.json)
    ("comparison_previous.json", "comparison_previous.json", _del(("per_eval",)), "$.per_eval", "required"),
    ("iteration.json", "iteration.json", _set(("trials_per_eval",), "three"), "$.trials_per_eval", "integer"),
    ("matrix.json", "matrix.json", _set(("agents", 0, "required"), "yes"), "$.agents[0].required", "boolean"),
    # benchmark config
    ("config.json", "benchmark_config.json", _set(("trials_per_eval",), "3x"),
     "$.trials_per_eval", "integer"),
    ("config.json", "benchmark_config.json", _set(("trials_per_eval",), 0),
     "$.trials_per_eval", "greater than or equal to 1"),
    ("config.json", "benchmark_config.json", _set(("baseline_type",), "none"),
     "$.baseline_type", "'no_skill'"),
    ("config.json", "benchmark_config.json", _set(("thresholds", "min_pass_rate"), 80),
     "$.thresholds.min_pass_rate", "less than or equal to 1"),
]


@pytest.mark.parametrize(("fixture", "file_name", "mutate", "where", "fragment"), MALFORMED,
                         ids=[f"{m[1]}:{m[3]}" for m in MALFORMED])
def test_malformed_file_names_file_and_json_path(
    tmp_path: Path, fixture: str, file_name: str, mutate: Mutation, where: str, fragment: str
) -> None:
    data = load(fixture)
    mutate(data)
    path = write(tmp_path / file_name, data)
    problems = validate_paths([path], None)
    assert problems, f"{file_name} with a bad {where} was accepted"
    texts = [str(p) for p in problems]
    assert all(str(path) in t for t in texts)
    matching = [p for p in problems if p.location == where]
    assert matching, f"no problem at {where}: {texts}"
    assert any(fragment in p.message for p in matching), texts


def test_every_kind_has_malformed_variants() -> None:
    kinds = {kind_of(Path(name)) for _, name, *_ in MALFORMED}
    assert kinds == set(MODELS)


# ---- typed assertion error quality (union noise) ------------------------------------------

def test_typed_assertion_without_type_names_the_expectation(tmp_path: Path) -> None:
    data = load("evals.json")
    data["evals"][0]["expectations"].append({"value": "4433"})
    path = write(tmp_path / "evals.json", data)
    [problem] = validate_paths([path], None)
    assert problem.location == "$.evals[0].expectations[2].type"
    assert "$.evals[0].expectations[2]" in str(problem) and "evals.json" in str(problem)
    assert "required" in problem.message.lower()
    assert "string" not in problem.message  # the str branch of str | Assertion is noise here


def test_typed_assertion_with_empty_type(tmp_path: Path) -> None:
    data = load("evals.json")
    data["evals"][0]["expectations"][0] = {"type": "", "value": "x"}
    path = write(tmp_path / "evals.json", data)
    [problem] = validate_paths([path], None)
    assert problem.location == "$.evals[0].expectations[0].type"


def test_scalar_for_a_union_merges_the_branch_messages(tmp_path: Path) -> None:
    data = load("benchmark_skill_creator.json")
    data["runs"][0]["eval_id"] = 1.5  # int | str
    path = write(tmp_path / "benchmark.json", data)
    [problem] = validate_paths([path], None)
    assert problem.location == "$.runs[0].eval_id"  # no ".int" union tag in the path
    assert "integer" in problem.message and "string" in problem.message


def test_duplicate_eval_ids(tmp_path: Path) -> None:
    data = load("evals.json")
    data["evals"].append(dict(data["evals"][0]))
    [problem] = validate_paths([write(tmp_path / "evals.json", data)], None)
    assert "duplicate eval id 1" in problem.message
    assert not problem.message.startswith("Value error")


# ---- unreadable files and folders ---------------------------------------------------------

@pytest.mark.parametrize(("content", "fragment"), [
    (b"", "empty"),
    (b"   \n", "empty"),
    (b"not json at all", "invalid JSON"),
    (b'{"skill_name": "x",', "invalid JSON"),
    ('{"skill_name": "x"}'.encode("utf-16"), "not UTF-8"),
    ('{"skill_name": "caf\u00e9"}'.encode("latin-1"), "not UTF-8"),
    (b"[1, 2]", "expected a JSON object, got an array"),
    (b"null", "expected a JSON object, got null"),
    (b"[" * 100_000, "nested too deeply"),
])
def test_unreadable_json_is_a_problem(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "evals.json"
    path.write_bytes(content)
    problems = validate_paths([path], None)
    assert problems and all(str(path) in str(p) for p in problems)
    assert any(fragment in p.message for p in problems)


def test_missing_file_and_folder_without_skill(tmp_path: Path) -> None:
    missing, empty_dir = tmp_path / "nope.json", tmp_path / "not-a-skill"
    empty_dir.mkdir()
    problems = validate_paths([missing, empty_dir], None)
    assert [p.file for p in problems] == [str(missing), str(empty_dir)]
    assert "not found" in problems[0].message and "SKILL.md" in problems[1].message


def test_skill_folder_checks_skill_md_and_its_evals(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    assert validate_paths([skill], None) == []
    data = load("evals.json")
    data["skill_name"] = "my-skill"
    write(skill / "evals" / "evals.json", data)
    assert validate_paths([skill], None, "local") == []  # plain expectations: with a judge, as run takes them
    del data["evals"][0]["prompt"]
    write(skill / "evals" / "evals.json", data)
    [problem] = validate_paths([skill], None, "local")
    assert problem.file == str(skill / "evals" / "evals.json")
    assert problem.location == "$.evals[0].prompt"


def test_skill_folder_evals_must_name_the_skill(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    write(skill / "evals" / "evals.json", load("evals.json"))  # skill_name: example-skill
    [problem] = validate_paths([skill], None, "local")
    assert problem.location == "$.skill_name" and "my-skill" in problem.message


def test_skill_folder_with_bad_skill_md(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    (skill / "SKILL.md").write_text("---\nname: other\n---\n", encoding="utf-8")
    problems = validate_paths([skill], None)
    assert {p.location for p in problems} == {"name", "description"}
    assert validate_paths([skill / "SKILL.md"], None) == problems


def test_problems_from_every_path_are_collected(tmp_path: Path) -> None:
    bad = write(tmp_path / "grading.json", {"expectations": []})
    problems = validate_paths([SPEC / "evals.json", bad, tmp_path / "gone.json"], None, "local")
    assert {p.file for p in problems} == {str(bad), str(tmp_path / "gone.json")}


# ---- schema ------------------------------------------------------------------------------

def test_json_schemas() -> None:
    everything = json.loads(json_schemas(None))
    assert set(everything) == set(MODELS)
    one = json.loads(json_schemas("evals"))
    assert "skill_name" in one["properties"] and one == everything["evals"]
    with pytest.raises(InputError) as info:
        json_schemas("nope")
    assert "nope" in str(info.value) and "grading" in str(info.value)


# ---- CLI ---------------------------------------------------------------------------------

def test_cli_validate_valid_files_exit_0() -> None:
    result = cli(["validate", str(SPEC / "grading.json"), str(SPEC / "evals.json"), "--judge", "local"])
    assert result.exit_code == 0, result.output
    assert "2 valid" in result.stdout


def test_cli_validate_invalid_file_exit_2(tmp_path: Path) -> None:
    data = load("evals.json")
    data["evals"][0]["id"] = "one"
    path = write(tmp_path / "evals.json", data)
    result = cli(["validate", str(path)])
    assert result.exit_code == 2
    assert "evals.json" in result.stderr and "$.evals[0].id" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(("content", "fragment"), [
    (b"not json", "invalid JSON"),
    (b"", "empty"),
    ('{"a": 1}'.encode("utf-16"), "not UTF-8"),
])
def test_cli_validate_unreadable_exit_2(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "grading.json"
    path.write_bytes(content)
    result = cli(["validate", str(path)])
    assert result.exit_code == 2
    assert "grading.json" in result.stderr and fragment in result.stderr
    assert "Traceback" not in result.output


def test_cli_validate_directory_without_skill_exit_2(tmp_path: Path) -> None:
    result = cli(["validate", str(tmp_path)])
    assert result.exit_code == 2
    assert str(tmp_path) in result.stderr and "SKILL.md" in result.stderr


def test_cli_validate_skill_folder(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    assert cli(["validate", str(skill)]).exit_code == 0
    (skill / "SKILL.md").write_text("---\nname: my-skill\ndescription: d\nfoo: 1\n---\n")
    result = cli(["validate", str(skill)])
    assert result.exit_code == 2 and "SKILL.md: foo: unknown frontmatter key" in result.stderr


def test_cli_validate_kind_option(tmp_path: Path) -> None:
    path = tmp_path / "run1.json"
    shutil.copy(SPEC / "timing.json", path)
    assert cli(["validate", str(path)]).exit_code == 2
    assert cli(["validate", "--kind", "timing", str(path)]).exit_code == 0
    result = cli(["validate", "--kind", "timings", str(path)])
    assert result.exit_code == 2 and "timings" in result.stderr


def test_cli_schema_all_and_one() -> None:
    result = cli(["schema"])
    assert result.exit_code == 0
    assert set(json.loads(result.stdout)) == set(MODELS)
    result = cli(["schema", "benchmark"])
    assert result.exit_code == 0
    assert "run_summary" in json.loads(result.stdout)["properties"]
    result = cli(["schema", "nope"])
    assert result.exit_code == 2 and "nope" in result.stderr
