"""docs/plugins.md end to end: the example package is built from the page's own blocks,
installed as pip installs a distribution (its module and a dist-info with the entry points its
pyproject declares, in a site folder), and used by a real `skillassay` process: listed by
`executors` and `plugins`, its assertion validated, a benchmark run with its executor. The
`slow` twin lets pip itself install the package."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import repo_paths
from plugin_support import write_distribution

DOC = repo_paths.REPO / "docs" / "plugins.md"
EXAMPLE = repo_paths.REPO / "examples" / "acme-vpn"
FILE_BLOCK = re.compile(r"^```\w+ (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def doc_files() -> dict[str, str]:
    """The blocks of the page whose info string names a file: path -> text."""
    return {path: body for path, body in FILE_BLOCK.findall(DOC.read_text(encoding="utf-8"))}


def doc_eval() -> dict:
    """The page's evals.json example (the one JSON block)."""
    found = re.search(r"^```json\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))


def skillassay(site: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{repo_paths.SRC}", "COLUMNS": "200",
           "SKILLASSAY_PLUGINS": "skillassay,skillassay-grep"}
    return subprocess.run([sys.executable, "-m", "skillassay", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def installed_as_pip_would(tmp_path: Path) -> Path:
    files = doc_files()
    assert set(files) == {"skillassay-grep/pyproject.toml", "skillassay-grep/skillassay_grep.py"}
    project = tomllib.loads(files["skillassay-grep/pyproject.toml"])
    site = tmp_path / "site"
    write_distribution(site, project["project"]["name"], project["project"]["entry-points"],
                       {"skillassay_grep.py": files["skillassay-grep/skillassay_grep.py"]},
                       version=project["project"]["version"])
    return site


def check_the_walkthrough(site: Path, tmp_path: Path) -> None:
    listed = skillassay(site, "executors")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("│ grep "))
    assert "│ yes " in row, listed.stdout
    shown = skillassay(site, "plugins")
    assert shown.returncode == 0, shown.stderr
    for kind, name, entry in (("executors", "grep", "skillassay_grep:GrepExecutor"),
                              ("assertions", "max_words", "skillassay_grep:MaxWords")):
        assert re.search(rf"│ {kind} +│ {name} +│ skillassay-grep 0\.1\.0 +│ {entry} ", shown.stdout), shown.stdout

    skill = tmp_path / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text(encoding="utf-8"))
    evals["evals"] = [doc_eval(), evals["evals"][1]]
    evals_path.write_text(json.dumps(evals), encoding="utf-8")
    valid = skillassay(site, "validate", skill)
    assert valid.returncode == 0, valid.stderr

    ws = tmp_path / "ws"
    ran = skillassay(site, "run", skill, "--executor", "grep", "--trials", "3", "--workspace", ws)
    assert ran.returncode in (0, 1, 3), ran.stderr
    assert "Traceback" not in ran.stderr
    iteration = json.loads((ws / "iteration-1" / "iteration.json").read_text(encoding="utf-8"))
    assert "grep" in json.dumps(iteration)
    grading = json.loads(next((ws / "iteration-1").glob("eval-*server-port*/with_skill/run-1/grading.json"))
                         .read_text(encoding="utf-8"))
    assert [e["passed"] for e in grading["expectations"]] == [True, True], grading  # contains 4433, max_words 60
    baseline = json.loads(next((ws / "iteration-1").glob("eval-*server-port*/without_skill/run-1/grading.json"))
                          .read_text(encoding="utf-8"))
    assert baseline["expectations"][0]["passed"] is False  # "I don't know."


def test_the_example_plugin_installed_as_pip_would_works_end_to_end(tmp_path: Path) -> None:
    check_the_walkthrough(installed_as_pip_would(tmp_path), tmp_path)


@pytest.mark.slow
def test_the_example_plugin_installed_by_pip_works_end_to_end(tmp_path: Path) -> None:
    """pip builds the page's package (setuptools, in its own build environment) into a target
    folder: the dist-info is pip's, not this test's."""
    package = tmp_path / "skillassay-grep"
    for rel, text in doc_files().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                           str(package)], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 and "Could not find a version that satisfies" in done.stderr:
        pytest.skip(f"pip cannot fetch setuptools for the build here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    assert list(site.glob("skillassay_grep-0.1.0.dist-info/entry_points.txt"))
    check_the_walkthrough(site, tmp_path)
