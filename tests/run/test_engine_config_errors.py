"""A config's sandbox that `run` refuses is named by the config file and its key (issue 34: "an
error in the config names the config file and key"): it said `config sandbox: docker: ...`,
naming no file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import cli


def skill_with_config(tmp_path: Path, **changes: Any) -> tuple[Path, Path]:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(repo_paths.EXAMPLE, skill)
    config = skill / "evals" / "benchmark_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), **changes}))
    return skill, config


@pytest.mark.parametrize("sandbox, key, words", [
    ("docker", "$.sandbox", "needs an image"),
    ({"kind": "docker"}, "$.sandbox", "needs an image"),
    ({"kind": "docker", "image": "x:1", "mounts": ["usr"]}, "$.sandbox.mounts", "absolute paths"),
])
def test_a_config_sandbox_error_names_the_file_and_key(tmp_path: Path, sandbox: Any, key: str, words: str) -> None:
    skill, config = skill_with_config(tmp_path, sandbox=sandbox)
    result = cli(["run", str(skill), "--executor", "echo", "--workspace", str(tmp_path / "ws")])
    text = result.output.replace("\n", "")
    assert result.exit_code == 2 and f"{config}: {key}" in text and words in text, result.output
    assert "config sandbox" not in text and not (tmp_path / "ws").exists()


def test_the_command_line_is_named_when_it_asked(tmp_path: Path) -> None:
    skill, _ = skill_with_config(tmp_path)
    result = cli(["run", str(skill), "--executor", "echo", "--sandbox", "docker", "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 2 and "--sandbox: docker: needs an image" in result.output.replace("\n", ""), result.output
