"""A plain install has no compiled package and no API SDK: what needs one says which extra adds
it (exit 2), instead of a traceback. The SDKs are installed here, so each test hides one from a
real `skillassay` process, as a plain install would lack it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import repo_paths

# Runs the CLI with the named top-level modules made unimportable, as if never installed.
HIDE = """
import sys, importlib.abc
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
HIDDEN = set(sys.argv[1].split(","))
sys.meta_path.insert(0, Hide())
import importlib.util
_find_spec = importlib.util.find_spec
def find_spec(name, package=None):  # what find_spec says of a package that is not installed
    return None if name.split(".")[0] in HIDDEN else _find_spec(name, package)
importlib.util.find_spec = find_spec
sys.argv = ["skillassay", *sys.argv[2:]]
from skillassay.cli.main import script
script()
"""


def skillassay_without(hidden: str, *args: str | Path, env: dict[str, str] | None = None,
                       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(repo_paths.SRC), **(env or {})}
    return subprocess.run([sys.executable, "-c", HIDE, hidden, *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize(("executor", "module", "extra"), [
    ("openai", "openai", "openai"), ("anthropic", "anthropic", "anthropic"), ("local", "llama_cpp", "local")])
def test_an_executor_without_its_extra_is_refused_naming_the_extra(example_skill: Path, tmp_path: Path,
                                                                    executor: str, module: str, extra: str) -> None:
    done = skillassay_without(module, "run", example_skill, "--executor", executor, "--workspace", tmp_path / "ws",
                              "--trials", "1", "--model", "m", env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"`{extra}` extra" in done.stderr and f".[{extra}]" in done.stderr, done.stderr
    assert not (tmp_path / "ws").exists()  # refused before anything was written


def test_executors_lists_the_extra_each_executor_needs() -> None:
    done = skillassay_without("openai,anthropic,llama_cpp", "executors")
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") >= 4}
    for name in ("openai", "anthropic", "local"):
        assert f"skillassay[{name}]" in rows[name] and "│ no " in rows[name], rows[name]
    assert "│ yes " in rows["echo"] and "failed to load" not in done.stdout


def test_a_judge_without_its_sdk_is_refused_naming_the_extra(example_skill: Path, tmp_path: Path) -> None:
    done = skillassay_without("openai", "run", example_skill, "--executor", "echo", "--judge", "openai",
                              "--workspace", tmp_path / "ws", "--trials", "1")
    assert done.returncode == 2, done.stderr
    assert "`openai` extra" in done.stderr and "Traceback" not in done.stderr, done.stderr
