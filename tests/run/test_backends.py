"""Choosing where trials run (run/backends.py) without a cluster: bad choices are refused
before any trial with exit 2 naming the option or the config field; what travels to and from
a worker (a skill folder as tar bytes, the returned files) survives the trip intact."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_runner import cli

from skillassay.executors import TrialResult
from skillassay.models import Metrics, Timing
from skillassay.run.backends import Returned, SkillPack, key_env, pack_tree, unpack_skill, write_returned
from skillassay.spec.skill import load_skill


def test_unknown_backend_option_is_refused(example_skill: Path, tmp_path: Path) -> None:
    result = cli(["run", str(example_skill), "--executor", "echo", "--backend", "slurm",
                                 "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 2, result.output
    assert "--backend" in result.output and "unknown backend" in result.output
    assert not (tmp_path / "ws").exists() or not list((tmp_path / "ws").glob("iteration-*/eval-*/*/run-*"))


def test_ray_address_without_ray_backend_is_refused(example_skill: Path, tmp_path: Path) -> None:
    """`--ray-address` alone used to be ignored: the trials ran locally while the user believed
    they ran on the cluster they named."""
    result = cli(["run", str(example_skill), "--executor", "echo", "--ray-address", "10.0.0.9:6379",
                                 "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 2, result.output
    assert "--ray-address" in result.output and "--backend ray" in result.output
    assert not list((tmp_path / "ws").glob("iteration-*/eval-*/*/run-*"))


def test_config_backend_is_validated_and_local_runs(example_skill: Path, tmp_path: Path) -> None:
    cfg = example_skill / "evals" / "benchmark_config.json"
    data = json.loads(cfg.read_text())
    cfg.write_text(json.dumps({**data, "backend": "slurm"}))
    bad = cli(["run", str(example_skill), "--executor", "echo", "--workspace", str(tmp_path / "a")])
    assert bad.exit_code == 2 and "backend" in bad.output, bad.output
    cfg.write_text(json.dumps({**data, "backend": "local", "ray_address": None, "trials_per_eval": 1}))
    ok = cli(["run", str(example_skill), "--executor", "echo", "--workspace", str(tmp_path / "b")])
    assert ok.exit_code in (0, 1, 3), ok.output
    assert len(list((tmp_path / "b").glob("iteration-1/eval-*/*/run-*/grading.json"))) == 16


def test_skill_travels_as_tar_and_unpacks_once(example_skill: Path, tmp_path: Path) -> None:
    (example_skill / "scripts").mkdir()
    (example_skill / "scripts" / "tool.sh").write_text("echo hi\n")
    (example_skill / "__pycache__").mkdir()
    (example_skill / "__pycache__" / "x.pyc").write_bytes(b"\0")
    skill = load_skill(example_skill)
    data = pack_tree(skill.path)
    meta = SkillPack(skill.name, skill.description, skill.body, dict(skill.frontmatter), "d1")
    got = unpack_skill((meta, lambda: data), tmp_path / "cache")
    assert got is not None and got.name == skill.name and got.body == skill.body
    assert (got.path / "scripts" / "tool.sh").read_text() == "echo hi\n"
    assert (got.path / "SKILL.md").read_bytes() == (example_skill / "SKILL.md").read_bytes()
    assert not (got.path / "__pycache__").exists()
    def not_again() -> bytes:
        raise AssertionError("fetched again")
    again = unpack_skill((meta, not_again), tmp_path / "cache")  # a second trial on the node: no fetch, no copy
    assert again is not None and again.path == got.path
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["d1"]
    assert unpack_skill(None, tmp_path / "cache") is None


def test_returned_files_are_written_masked_and_replace_old_outputs(tmp_path: Path, monkeypatch) -> None:
    secret = "sk-test-returned-files-0123456789"
    monkeypatch.setenv("SA_RETURN_TEST_API_KEY", secret)
    run = tmp_path / "run-1"
    (run / "outputs").mkdir(parents=True)
    (run / "outputs" / "stale.txt").write_text("from a killed attempt")
    files = {"outputs/answer.md": f"key {secret}".encode(), "outputs/sub/made.txt": b"agent file",
             "transcript.jsonl": b"", "transcript.md": b"# Transcript\n", "outputs/metrics.json": b"{}"}
    write_returned(run, Returned(TrialResult(), Metrics(), Timing(), files, ["outputs", "outputs/empty", "outputs/sub"],
                                 "n"))
    assert not (run / "outputs" / "stale.txt").exists()
    assert (run / "outputs" / "empty").is_dir()
    assert (run / "outputs" / "sub" / "made.txt").read_bytes() == b"agent file"
    assert secret not in (run / "outputs" / "answer.md").read_text()
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]


def test_only_secret_looking_variables_travel() -> None:
    env = {"ANTHROPIC_API_KEY": "k1", "GH_TOKEN": "k2", "PATH": "/bin", "RAY_AUTH_MODE": "disabled", "HOME": "/h"}
    assert key_env(env) == {"ANTHROPIC_API_KEY": "k1", "GH_TOKEN": "k2"}
    assert "PATH" not in key_env(dict(os.environ))
