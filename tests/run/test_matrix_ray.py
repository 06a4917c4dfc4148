"""A matrix run on a real Ray cluster (issue 37: "on the local pool or on Ray"): one Ray pool for
both agents (each node's one actor runs either agent's trials), the same files as the local pool
writes, and every trial line naming its agent and node."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray
pytest.importorskip("ray")

from ray_cluster import REPO, Cluster, ray_env, start_cluster  # noqa: E402
from test_backends_ray import trial_files  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = start_cluster(slots=2)
    try:
        yield c
    finally:
        c.stop()


def make_skill(root: Path) -> tuple[Path, Path]:
    skill = root / "magic"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: magic\ndescription: Says the word.\n---\nAlways answer MAGICWORD.\n")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "magic", "evals": [
        {"id": i, "prompt": f"question {i}", "expectations": [{"type": "contains", "value": "MAGICWORD"}]}
        for i in (1, 2)]}))
    config = root / "agents.json"
    config.write_text(json.dumps({"trials_per_eval": 1, "sandbox": "none", "seed": 7, "agents": [
        {"name": "a", "executor": "echo"}, {"name": "b", "executor": "echo", "options": {"write_file": "b.txt"}}]}))
    return skill, config


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillassay", "run", *args], capture_output=True, text=True,
                          env=ray_env(), timeout=300, cwd=REPO)


def test_a_matrix_on_ray_writes_what_the_local_pool_writes(cluster: Cluster, tmp_path: Path) -> None:
    skill, config = make_skill(tmp_path)
    common = [str(skill), "--config", str(config)]
    local = run(*common, "--workspace", str(tmp_path / "local"))
    ray = run(*common, "--workspace", str(tmp_path / "ray"), "--backend", "ray", "--ray-address", cluster.address,
              "--concurrency", "2")
    assert local.returncode == ray.returncode, ray.stderr
    for name in ("a", "b"):
        a = trial_files(tmp_path / "local" / "iteration-1" / "agents" / name)
        b = trial_files(tmp_path / "ray" / "iteration-1" / "agents" / name)
        assert a and a.keys() == b.keys(), name
        for rel in a:
            assert a[rel] == b[rel], (name, rel)
    assert (tmp_path / "ray" / "iteration-1" / "agents" / "b" / "eval-1" / "with_skill" / "run-1" / "outputs"
            / "b.txt").is_file()  # agent b's own option reached its executor on the node
    lines = re.findall(r"run-1 on ([ab]) \(\S+/[0-9a-f]{8}\): ", ray.stderr)
    assert sorted(lines) == ["a"] * 4 + ["b"] * 4, ray.stderr
    assert (tmp_path / "ray" / "iteration-1" / "matrix.json").is_file()
