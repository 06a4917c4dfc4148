"""The docker sandbox with a real dockerd (started here when none runs) and an image imported
offline: one container per trial, a hostile command and the REAL `claude` CLI against the
loopback fake API fail every escape of issue 33; preflight names what is missing (exit 2);
the image's digest and the limits are recorded in iteration.json and shown in the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runner import cli
from docker_support import IMAGE, MOUNTS, docker_env  # noqa: F401 - the session fixture
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import KEY, KEY_VAR, NONE_ESCAPED, targets
from test_sandbox import make_skill
from test_sandbox_contamination import write_skill

from skillassay.errors import InputError
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.executors.command import CommandExecutor
from skillassay.sandbox import PLACEHOLDER_KEY, SandboxSpec, resolve

pytestmark = pytest.mark.sandbox

SPEC = SandboxSpec(kind="docker", image=IMAGE, mounts=MOUNTS, cpus=1.0, memory="1g")


@pytest.fixture
def docker(docker_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    if "DOCKER_HOST" in docker_env:
        monkeypatch.setenv("DOCKER_HOST", docker_env["DOCKER_HOST"])


def test_a_hostile_command_escapes_nothing_from_its_container(tmp_path: Path, docker: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    skill = make_skill(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        script = tmp_path / "agent.sh"
        script.write_text("#!/bin/bash\n" + t.script() + "\n")
        script.chmod(0o755)
        settings = ExecutorSettings(options={"argv": [str(script)]}, sandbox=SPEC)
        result = CommandExecutor(settings).run(TrialRequest(prompt="p", workdir=work, skill=skill, seed=1,
                                                            settings=settings))
        assert result.status == "ok", result.error
        assert result.final_text.strip() == "probed"
        assert t.escapes(work) == NONE_ESCAPED


@pytest.mark.agent_cli
@pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")
def test_real_claude_in_a_container_reaches_the_api_only_through_the_proxy(tmp_path: Path, docker: None,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    skill = make_skill(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        script = [Reply(tool_calls=[ToolCall("Bash", {"command": t.script(), "description": "probe"})],
                        input_tokens=111, output_tokens=22), Reply(text="done", input_tokens=133, output_tokens=44)]
        with FakeModelAPI(script) as api:
            settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=120, sandbox=SPEC,
                                        options={"base_url": api.base_url})
            result = ClaudeCodeExecutor(settings).run(TrialRequest(prompt="Do it.", workdir=work, skill=None,
                                                                   seed=1, settings=settings))
        assert result.status == "ok", result.error
        assert t.escapes(work) == NONE_ESCAPED
    assert (work / "key.txt").read_text() == PLACEHOLDER_KEY
    assert result.usage.raw["proxy"]["output_tokens"] == 66


def test_preflight_names_a_missing_image_and_a_program_the_image_cannot_run(docker: None) -> None:
    with pytest.raises(InputError, match="image 'skillassay-no-such-image:0' not found"):
        resolve(SandboxSpec(kind="docker", image="skillassay-no-such-image:0"))
    with pytest.raises(InputError, match="no-such-agent"):
        resolve(SPEC, ["no-such-agent", "--version"])
    done = resolve(SPEC, ["bash", "--version"]).spec
    assert done.digest is not None and done.digest.startswith("sha256:")


def test_a_run_records_the_image_digest_and_limits(tmp_path: Path, docker: None) -> None:
    skill = write_skill(tmp_path)
    (skill / "evals" / "benchmark_config.json").write_text(json.dumps({"sandbox": {
        "kind": "docker", "image": IMAGE, "cpus": 1.0, "memory": "1g", "network": "none", "mounts": list(MOUNTS)}}))
    result = cli(["run", str(skill), "--executor", "command", "--trials", "1",
                                      "-o", 'argv=["bash", "-c", "echo hello from $(hostname)"]'],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    it = skill.parent / f"{skill.name}-workspace" / "iteration-1"
    record = json.loads((it / "iteration.json").read_text())["sandbox"]
    assert record["kind"] == "docker" and record["image"] == IMAGE and record["digest"].startswith("sha256:")
    assert (record["cpus"], record["memory"], record["network"], record["mounts"]) == (1.0, "1g", "none", ["/usr"])
    assert f"image {IMAGE}" in (it / "report.md").read_text()
    # a container's resources change scores: they are part of the settings fingerprint
    assert json.loads((it / "iteration.json").read_text())["executor"]["sandbox"]["cpus"] == 1.0
