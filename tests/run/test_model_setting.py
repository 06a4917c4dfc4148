"""A model the executor does not run is refused, named where it was set (issue 34: validate and
run agree; a config error names the config file and key). The local executor took `model:
"/nonexistent.gguf"` in a config, ran the embedded model, and recorded the other name as the model
it ran in iteration.json and benchmark.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import repo_paths
from cli_runner import cli


def example(tmp_path: Path, **changes: object) -> tuple[Path, Path]:
    skill = tmp_path / "acme-vpn"
    shutil.copytree(repo_paths.EXAMPLE, skill)
    config = skill / "evals" / "benchmark_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), **changes}))
    return skill, config


def test_a_config_model_the_local_executor_does_not_run_is_refused_by_validate_and_run(tmp_path: Path) -> None:
    skill, config = example(tmp_path, model="/nonexistent.gguf")
    for args in (["validate", str(skill)], ["run", str(skill), "--workspace", str(tmp_path / "ws")]):
        result = cli(args)
        text = result.output.replace("\n", "")
        assert result.exit_code == 2 and f"{config}: $.model" in text and "model_path" in text, (args, result.output)
    assert not (tmp_path / "ws").exists()


def test_the_model_flag_is_named_when_it_set_the_model(tmp_path: Path) -> None:
    skill, _ = example(tmp_path)
    result = cli(["run", str(skill), "--model", "gpt-4o", "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 2 and "--model: gpt-4o" in result.output.replace("\n", ""), result.output


def test_the_embedded_model_by_name_and_another_executor_model_are_accepted(tmp_path: Path) -> None:
    skill, _ = example(tmp_path, model="SmolLM2-135M-Instruct")
    assert cli(["validate", str(skill)]).exit_code == 0
    skill2, _ = example(tmp_path / "b", executor="openai", model="gpt-4o-mini")
    assert cli(["validate", str(skill2)]).exit_code == 0
