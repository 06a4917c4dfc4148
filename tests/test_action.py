"""action.yml run as a GitHub runner runs it (tests/action_runner.py): the GITHUB_* environment
and event file, a local folder for the Actions cache and the artifacts, and a loopback stand-in
for GitHub's issue-comments API (tests/fake_github_api.py) that records what was posted.
skillassay is pip-installed from this checkout by the Action's own install step, into a
virtual environment of the test's own that sees the test's site-packages, as on a runner image
that has the dependencies and the build tools (`pip-args: --no-deps --no-build-isolation`: an
isolated build fetched setuptools again for every run, 15 s of each), and the benchmark uses
the echo executor (deterministic outcomes). Each test has its own environment, so the four
spread over the xdist workers instead of queueing on the one that held a shared one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from action_runner import Runner
from fake_github_api import FakeGitHub
from filelock import FileLock
from repo_paths import REPO as REPO_ROOT

pytestmark = pytest.mark.slow  # each Action run installs skillassay (~4 s) and benchmarks (~5 s)

REPO = "acme/skills"
TOKEN, READ_ONLY = "ghs_write_token_0123456789", "ghs_read_only_token_0123456789"
PR = 7


def build_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build backend pyproject.toml names (setuptools, wheel), installed once per test session
    for every xdist worker (a plain function, not a session fixture: conftest.py would put the
    tests sharing it on one worker)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, above each worker's own
    target = shared / "action-build-tools"
    with FileLock(str(target) + ".lock"):
        if not (target / "done").is_file():
            requires = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
            subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                            "--target", str(target), *requires], check=True)
            (target / "done").touch()
    return target


@dataclass(frozen=True)
class RunnerSetup:
    bin: Path  # the runner's Python, first on PATH
    action: Path  # the Action's checkout (GITHUB_ACTION_PATH)


@pytest.fixture
def runner_setup(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> RunnerSetup:
    """A runner's Python, a virtual environment in which the Action installs skillassay, with the
    test's site-packages and the build tools in reach (pip itself is the test's); and the
    Action's checkout, a copy of this repository's: setuptools builds in the source tree
    (build/, *.egg-info), and two tests building in one tree at once broke each other's install."""
    root = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python*/site-packages"))
    (site / "build-tools.pth").write_text(f"{build_tools(tmp_path_factory)}\n")
    action = tmp_path / "action"
    shutil.copytree(REPO_ROOT / "src", action / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("action.yml", "pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, action / name)
    return RunnerSetup(root / "bin", action)


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(REPO, {TOKEN: "write", READ_ONLY: "read"}) as fake:
        yield fake


@pytest.fixture
def checkout(tmp_path: Path, example_skill: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(example_skill, repo / "skills" / "acme-vpn")
    return repo


def _event(name: str, sha: str, *, fork: bool = False) -> dict[str, Any]:
    if name not in ("pull_request", "pull_request_target"):
        return {"ref": "refs/heads/main", "after": sha}
    head_repo = "someone/skills" if fork else REPO
    return {"action": "synchronize", "number": PR, "pull_request": {
        "number": PR, "head": {"sha": sha, "ref": "feature", "repo": {"full_name": head_repo}},
        "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}}}}


def run_action(home: Path, checkout: Path, runner_setup: RunnerSetup, github: FakeGitHub, event: str, sha: str,
               inputs: dict[str, str], *, fork: bool = False, token: str = TOKEN,
               run_id: int = 1) -> tuple[Runner, dict[str, str]]:
    shutil.rmtree(checkout / ".skillassay", ignore_errors=True)  # every job starts from a fresh checkout
    runner = Runner(action_dir=runner_setup.action, workspace=checkout, home=home, env={
        "PATH": f"{runner_setup.bin}:{os.environ['PATH']}", "PIP_NO_INPUT": "1"},
        github={"event_name": event, "event": _event(event, sha, fork=fork), "repository": REPO, "sha": sha,
                "token": token, "run_id": run_id, "server_url": "https://github.com", "api_url": github.url,
                "ref": "refs/heads/main"})
    base = {"skill": "skills/acme-vpn", "executor": "echo", "trials": "3", "pip-args": "--no-deps --no-build-isolation"}
    return runner, runner.run_action({**base, **inputs})


def _step(runner: Runner, name: str) -> Any:
    return next(s for s in runner.steps if s.name == name)


def _failed(runner: Runner) -> list[str]:
    return [f"{s.name}: {s.output[-3000:]}" for s in runner.steps if s.outcome == "failure"]


def test_push_caches_then_the_pull_request_is_compared_and_commented_once(
        tmp_path: Path, checkout: Path, runner_setup: RunnerSetup, github: FakeGitHub) -> None:
    home = tmp_path / "runner"
    main_sha, pr_sha, pr_sha2 = "a" * 40, "c" * 40, "d" * 40

    runner, out = run_action(home, checkout, runner_setup, github, "push", main_sha, {}, run_id=1)
    assert not _failed(runner), _failed(runner)
    assert out["verdict"] == "PASS" and out["exit-code"] == "0"
    assert float(out["pass-rate-with-skill"]) == 0.75 and float(out["pass-rate-baseline"]) == 0.0
    assert float(out["effect"]) == 0.75 and len(out["effect-interval"].split(",")) == 2
    assert _step(runner, "plan").outputs["comment"] == "false" and github.requests == []  # no pull request
    assert len(list((home / "cache").glob("skillassay-v1-acme-vpn-*.tar"))) == 1
    artifact = home / "artifacts" / "1" / "skillassay-acme-vpn"
    assert (artifact / ".skillassay/acme-vpn/iteration-1/benchmark.json").is_file()
    assert (artifact / ".skillassay/acme-vpn-reports/review.html").is_file()
    assert "skillassay: acme-vpn, iteration 1: PASS" in (home / "summary.md").read_text()

    # The pull request changes the skill: main's workspace is restored (same evals), the run is
    # iteration 2, compared with main's iteration 1, and one comment is posted.
    skill_md = checkout / "skills/acme-vpn/SKILL.md"
    original = skill_md.read_text()
    skill_md.write_text(original + "\nThe Acme VPN is run by NetOps.\n")
    runner, out = run_action(home, checkout, runner_setup, github, "pull_request", pr_sha, {}, run_id=2)
    assert not _failed(runner), _failed(runner)
    restore = runner.steps[2]
    assert restore.outputs["cache-hit"] == "false" and restore.outputs["cache-matched-key"].startswith(
        "skillassay-v1-acme-vpn-")
    assert out["iteration"].endswith("iteration-2")
    assert [c["user"]["type"] for c in github.on(PR)] == ["Bot"]
    first = github.on(PR)[0]
    assert first["body"].startswith("<!-- skillassay:pr-comment:acme-vpn -->")
    assert f"head commit `{pr_sha[:12]}`" in first["body"] and "**Against the base branch** (iteration 1" in first["body"]
    assert TOKEN not in json.dumps(github.requests)
    assert len(list((home / "cache").glob("*.tar"))) == 1  # a pull request does not save

    # A new commit on the pull request: the same comment, updated in place, stamped with it.
    github.add_comment(PR, "<!-- skillassay:pr-comment:acme-vpn --> quoted by a person",
                       {"login": "someone", "type": "User"})
    skill_md.write_text(skill_md.read_text() + "\nAsk NetOps first.\n")
    runner, out = run_action(home, checkout, runner_setup, github, "pull_request", pr_sha2, {}, run_id=3)
    assert not _failed(runner), _failed(runner)
    bots = [c for c in github.on(PR) if c["user"]["type"] == "Bot"]
    assert len(bots) == 1 and bots[0]["id"] == first["id"]
    assert f"head commit `{pr_sha2[:12]}`" in bots[0]["body"] and pr_sha[:12] not in bots[0]["body"]
    assert [m for m, _, _ in github.requests] == ["GET", "POST", "GET", "PATCH"]
    assert "quoted by a person" in next(c for c in github.on(PR) if c["user"]["type"] == "User")["body"]

    # main again, unchanged: its own iteration is restored and resumed, no trial runs again.
    skill_md.write_text(original)
    runner, out = run_action(home, checkout, runner_setup, github, "push", main_sha, {}, run_id=4)
    assert not _failed(runner), _failed(runner)
    assert out["iteration"].endswith("iteration-1")
    assert "0 trials run (0 errored), 48 reused" in _step(runner, "bench").output


def test_warn_only_reports_without_failing_the_job(tmp_path: Path, checkout: Path, runner_setup: RunnerSetup,
                                                    github: FakeGitHub) -> None:
    home = tmp_path / "runner"
    run_action(home, checkout, runner_setup, github, "push", "a" * 40, {}, run_id=1)
    skill_md = checkout / "skills/acme-vpn/SKILL.md"  # the pull request breaks two facts
    skill_md.write_text(skill_md.read_text().replace("port 4433", "port 5000").replace("netops@", "ops@"))
    runner, out = run_action(home, checkout, runner_setup, github, "pull_request", "c" * 40, {"warn-only": "true"}, run_id=2)
    assert out["exit-code"] == "3" and out["verdict"] == "INCONCLUSIVE"
    assert not _failed(runner), _failed(runner)
    gate = runner.steps[-1]
    assert gate.outcome == "success" and "::warning::" in gate.output
    body = github.on(PR)[0]["body"]
    assert "Reported only (`warn-only`)" in body and "**Regressed:** eval-1 (server-port) 3/3 → 0/3" in body

    runner, out = run_action(tmp_path / "runner2", checkout, runner_setup, github, "pull_request", "c" * 40, {}, run_id=3)
    assert runner.steps[-1].outcome == "failure" and "::error::" in runner.steps[-1].output, _failed(runner)


def test_forks(tmp_path: Path, checkout: Path, runner_setup: RunnerSetup, github: FakeGitHub) -> None:
    # pull_request_target runs with this repository's secrets: the fork's code is refused.
    runner, _ = run_action(tmp_path / "r1", checkout, runner_setup, github, "pull_request_target", "e" * 40, {}, fork=True)
    plan = _step(runner, "plan")
    assert plan.outcome == "failure" and "refusing to benchmark a fork's pull request" in plan.output
    assert all(s.outcome == "skipped" for s in runner.steps[2:])

    # pull_request from a fork (read-only token): benchmarked, the comment left in the artifact.
    runner, out = run_action(tmp_path / "r2", checkout, runner_setup, github, "pull_request", "e" * 40, {}, fork=True,
                             token=READ_ONLY)
    assert not _failed(runner), _failed(runner)
    assert _step(runner, "plan").outputs["comment"] == "false" and github.requests == []
    reports = tmp_path / "r2" / "artifacts" / "1" / "skillassay-acme-vpn" / ".skillassay" / "acme-vpn-reports"
    assert (reports / "pr-number").read_text().strip() == str(PR)
    assert (reports / "head-sha").read_text().strip() == "e" * 40

    # The trusted workflow_run half posts it, only when the pull request's head is that commit.
    github.pulls[PR] = "f" * 40  # the fork pushed again since
    comment_inputs = {"mode": "comment", "comment-file": str(reports / "pr-comment.md"), "pr-number": str(PR),
                      "head-sha": "e" * 40}
    runner, _ = run_action(tmp_path / "r3", checkout, runner_setup, github, "workflow_run", "b" * 40, comment_inputs)
    post = next(s for s in runner.steps if s.outcome != "skipped" and "head is not" in s.output)
    assert post.outcome == "failure" and github.on(PR) == []
    github.pulls[PR] = "e" * 40
    runner, _ = run_action(tmp_path / "r4", checkout, runner_setup, github, "workflow_run", "b" * 40, comment_inputs)
    assert not _failed(runner), _failed(runner)
    assert len(github.on(PR)) == 1 and f"head commit `{'e' * 12}`" in github.on(PR)[0]["body"]


def test_shards_then_merge_give_one_verdict_and_one_comment(tmp_path: Path, checkout: Path, runner_setup: RunnerSetup,
                                                            github: FakeGitHub) -> None:
    """The matrix of docs/ci.md: two shard jobs, then a merge job that downloads their artifacts."""
    home, sha = tmp_path / "runner", "c" * 40
    for i in (1, 2):
        runner, out = run_action(home, checkout, runner_setup, github, "pull_request", sha, {"shard": f"{i}/2"}, run_id=5)
        assert not _failed(runner), _failed(runner)
        assert out["verdict"] == "NO_VERDICT" and out["exit-code"] == "0" and github.requests == []
        assert _step(runner, "plan").outputs["save-cache"] == "false"
    downloaded = checkout / "shards"  # actions/download-artifact with pattern skillassay-acme-vpn-shard-*
    for artifact in sorted((home / "artifacts" / "5").glob("skillassay-acme-vpn-shard-*")):
        shutil.copytree(artifact, downloaded / artifact.name)
    assert sorted(p.name for p in downloaded.iterdir()) == ["skillassay-acme-vpn-shard-1-of-2",
                                                            "skillassay-acme-vpn-shard-2-of-2"]
    runner, out = run_action(home, checkout, runner_setup, github, "pull_request", sha,
                             {"mode": "merge", "merge-from": "shards"}, run_id=5)
    assert not _failed(runner), _failed(runner)
    assert "merged 2 shards (48 trials)" in _step(runner, "bench").output
    assert out["verdict"] == "PASS" and float(out["pass-rate-with-skill"]) == 0.75
    assert len(github.on(PR)) == 1 and f"head commit `{sha[:12]}`" in github.on(PR)[0]["body"]
