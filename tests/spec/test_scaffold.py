"""`skillassay init`: well-formed starter files, refused by `validate` (and `run`) until their
placeholders are edited, that never replace existing ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.errors import InputError
from skillassay.run.preflight import validate_paths
from skillassay.spec.scaffold import init_skill

DESCRIPTION = "Extract text and tables from PDF files. Use when the user mentions PDFs."


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pdf-tools"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        f"---\nname: pdf-tools\ndescription: {DESCRIPTION}\n---\n# PDF tools\n", encoding="utf-8"
    )
    return folder


def test_init_writes_valid_evals_and_config(skill_dir: Path) -> None:
    written = init_skill(skill_dir)
    evals_path = skill_dir.resolve() / "evals" / "evals.json"
    config_path = skill_dir.resolve() / "evals" / "benchmark_config.json"
    assert written == [evals_path, config_path]
    assert validate_paths([config_path], None) == []
    # well-formed, but every placeholder is named until edited (test_preflight.py: run refuses too)
    # (with a judge: its plain-language expectations need one, which validate asks for too)
    problems = validate_paths([skill_dir], None, judge="local")
    assert problems and all("placeholder" in p.message for p in problems)
    assert validate_paths([evals_path], None, judge="local") == problems


def test_init_evals_content(skill_dir: Path) -> None:
    init_skill(skill_dir)
    data = json.loads((skill_dir / "evals" / "evals.json").read_text(encoding="utf-8"))
    assert data["skill_name"] == "pdf-tools"
    assert 2 <= len(data["evals"]) <= 3
    assert len({e["id"] for e in data["evals"]}) == len(data["evals"])
    for e in data["evals"]:
        assert e["prompt"].startswith("TODO")
        assert "Extract text and tables from PDF files" in e["prompt"]
        typed = [x for x in e["expectations"] if isinstance(x, dict)]
        plain = [x for x in e["expectations"] if isinstance(x, str)]
        assert len(typed) == 1 and typed[0]["type"] == "contains" and typed[0]["value"]
        assert len(plain) == 1


def test_init_config_content(skill_dir: Path) -> None:
    init_skill(skill_dir)
    data = json.loads((skill_dir / "evals" / "benchmark_config.json").read_text(encoding="utf-8"))
    assert data["skill_name"] == "pdf-tools"
    assert data["trials_per_eval"] == 3 and data["baseline_type"] == "no_skill"
    assert data["thresholds"] == {"min_pass_rate": 0.8, "max_avg_tokens": 100000,
                                  "max_avg_duration_seconds": 120, "min_improvement_ratio": 1.0}
    assert (skill_dir / "evals" / data["skill_path"]).resolve() == skill_dir.resolve()
    assert (skill_dir / "evals" / data["eval_set_path"]).is_file()


def test_init_refuses_to_overwrite(skill_dir: Path) -> None:
    evals = skill_dir / "evals" / "evals.json"
    evals.parent.mkdir()
    evals.write_text('{"hand": "written"}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        init_skill(skill_dir)
    assert "evals.json" in str(info.value) and "already exists" in str(info.value)
    assert evals.read_text(encoding="utf-8") == '{"hand": "written"}'
    assert not (skill_dir / "evals" / "benchmark_config.json").exists()  # nothing half-written


def test_init_refuses_when_only_config_exists(skill_dir: Path) -> None:
    config = skill_dir / "evals" / "benchmark_config.json"
    config.parent.mkdir()
    config.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError) as info:
        init_skill(skill_dir)
    assert "benchmark_config.json" in str(info.value)
    assert not (skill_dir / "evals" / "evals.json").exists()


def test_init_needs_a_skill(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        init_skill(tmp_path)
    assert "SKILL.md" in str(info.value)


def test_cli_init_then_refuse(skill_dir: Path) -> None:
    result = cli(["init", str(skill_dir)])
    assert result.exit_code == 0, result.output
    # cli.py prints paths without soft_wrap, so rich may break them at 80 columns.
    printed = "".join(result.stdout.split())
    assert "evals/evals.json" in printed and "evals/benchmark_config.json" in printed
    assert cli(["validate", str(skill_dir)]).exit_code == 2  # placeholders left
    again = cli(["init", str(skill_dir)])
    assert again.exit_code == 2 and "already exists" in again.stderr


def test_cli_init_without_skill_md_exit_2(tmp_path: Path) -> None:
    result = cli(["init", str(tmp_path)])
    assert result.exit_code == 2 and "SKILL.md" in result.stderr
