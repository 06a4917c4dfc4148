"""The test tree's own shape: pytest imports test files by basename (no packages under tests/),
so two test files with one name in different folders stop collection for the whole suite."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from repo_paths import REPO


def test_every_test_file_name_is_unique() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in (REPO / "tests").rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(REPO)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"


# Test files that check a behaviour across modules (a command end to end, the whole tree, a
# promise several modules keep together) rather than one module: named after the behaviour.
CROSS_CUTTING = {
    "tests/test_action.py", "tests/test_action_yml.py",  # action.yml, the GitHub Action
    "tests/test_test_layout.py",  # this tree
    "tests/test_dead_code.py",  # the whole package
    "tests/analyze/test_interval_coverage.py", "tests/analyze/test_thresholds_met.py",
    "tests/cli/test_aggregate_wording.py", "tests/cli/test_docs_install.py", "tests/cli/test_executors_startup.py",
    "tests/cli/test_fuzz.py", "tests/cli/test_fuzz_big.py", "tests/cli/test_fuzz_cases.py",
    "tests/cli/test_fuzz_exit70.py", "tests/cli/test_golden_workspace.py", "tests/cli/test_startup.py",
    "tests/cli/test_verdict.py", "tests/cli/test_workspace_argument.py", "tests/cli/test_workspace_doc.py",
    "tests/executors/test_api_executors.py", "tests/grade/test_ungraded.py", "tests/improve/test_prompt_fencing.py",
    "tests/report/test_cost_outputs.py", "tests/run/test_config_plugins.py", "tests/run/test_disk_full.py",
    "tests/run/test_iteration_design.py", "tests/run/test_model_setting.py", "tests/store/test_workspace_links.py",
    "tests/triggers/test_trigger_agents.py",
}


def _mirrored(test: Path) -> Path:
    """The folder a test folder mirrors: tests/benchmarks the benchmark scripts, the others src."""
    parts = test.relative_to(REPO / "tests").parts[:-1]
    if parts[:1] == ("benchmarks",):
        return REPO / "benchmarks"
    return REPO.joinpath("src", "skillassay", *parts)


def test_every_test_file_is_named_after_what_it_tests() -> None:
    """tests/<folder>/test_<name>[_<topic>].py, where <name> is a module or package of the folder
    it mirrors (or that folder's own package): a newcomer finds a module's tests by its name."""
    wrong = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        rel = path.relative_to(REPO).as_posix()
        if "fixtures" in path.parts or rel in CROSS_CUTTING:
            continue
        folder = _mirrored(path)
        names = {folder.name} | {p.stem for p in folder.glob("*.py")} | {p.parent.name for p in folder.glob("*/__init__.py")}
        stem = path.stem.removeprefix("test_")
        if not any(stem == n or stem.startswith(f"{n}_") for n in names):
            wrong.append(rel)
    assert not wrong, f"name each after the module it tests (or add it to CROSS_CUTTING): {wrong}"
