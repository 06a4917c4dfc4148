"""The sandbox layer (skillassay.sandbox) with real bwrap and real subprocesses: a hostile
command-executor agent and an API agent loop's shell try every escape issue 33 names. Under
`none` each one works (so the test can fail); under `bwrap` each one fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_support import ALL_ESCAPED, KEY, KEY_VAR, NONE_ESCAPED, needs_bwrap, targets

from skillassay.errors import InputError
from skillassay.executors.agent_loop import ToolBox, ToolCall
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.command import CommandExecutor
from skillassay.sandbox import SandboxSpec, resolve, sandbox_spec
from skillassay.sandbox.bwrap import bwrap_argv, hidden_folders, tool_folders
from skillassay.spec.skill import Skill, load_skill

pytestmark = pytest.mark.sandbox


def make_skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "skills" / "my-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: my-skill\ndescription: Does things.\n---\nBody\n")
    return load_skill(folder)


@needs_bwrap
@pytest.mark.parametrize(("kind", "expected"), [("none", ALL_ESCAPED), ("bwrap", NONE_ESCAPED)])
def test_a_hostile_command_escapes_only_without_a_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           kind: str, expected: dict[str, bool]) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    skill = make_skill(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        script = tmp_path / "agent.sh"
        script.write_text("#!/bin/bash\n" + t.script() + "\n")
        script.chmod(0o755)
        settings = ExecutorSettings(options={"argv": [str(script)]}, sandbox=SandboxSpec(kind=kind))
        result = CommandExecutor(settings).run(TrialRequest(prompt="p", workdir=work, skill=skill, seed=1,
                                                            settings=settings))
        assert result.status == "ok", result.error
        assert result.final_text.strip() == "probed"
        assert t.escapes(work) == expected


@needs_bwrap
@pytest.mark.parametrize(("kind", "expected"), [("none", ALL_ESCAPED), ("bwrap", NONE_ESCAPED)])
def test_the_agent_loops_shell_tool_escapes_only_without_a_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   kind: str, expected: dict[str, bool]) -> None:
    """The API executors' run_shell tool: the loop already drops keys from its env; under a
    sandbox nothing else of the host is in reach either."""
    monkeypatch.setenv(KEY_VAR, KEY)
    skill = make_skill(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    with targets(tmp_path, skill.path / "SKILL.md") as t:
        box = ToolBox(work, skill, {}, sandbox=SandboxSpec(kind=kind))
        output, is_error = box.call(ToolCall(id="1", name="run_shell", arguments={"command": t.script()}))
        assert not is_error and "probed" in output
        seen = t.escapes(work)
        assert seen.pop("read_key") is False  # scrubbed_env, sandbox or not
        assert seen == {k: v for k, v in expected.items() if k != "read_key"}


@needs_bwrap
def test_a_confined_command_sees_no_other_process_and_no_credential_folder(tmp_path: Path) -> None:
    settings = ExecutorSettings(options={"argv": ["bash", "-c", "ls /proc | grep -c '^[0-9]'; echo; ls -A ~; echo; "
                                                  "ls -A /run"]},
                                sandbox=SandboxSpec(kind="bwrap"))
    work = tmp_path / "work"
    work.mkdir()
    result = CommandExecutor(settings).run(TrialRequest(prompt="p", workdir=work, skill=None, seed=1,
                                                        settings=settings))
    processes, home, run = (part.split() for part in result.final_text.split("\n\n"))
    assert int(processes[0]) <= 6  # bwrap's init, bash, its pipeline: not the host's
    # only toolchains on PATH stay in the home (pyenv, cargo...), never a login or a key
    assert set(home) <= {Path(f).name for f in tool_folders(os.environ["PATH"], hidden_folders(str(Path.home())))}
    assert not set(home) & {".codex", ".claude", ".ssh", ".config", ".aws", ".npmrc"}
    assert run == []  # no docker socket, nothing of the host's /run


def test_bwrap_argv_hides_homes_and_temp_and_binds_the_trial_on_top(tmp_path: Path) -> None:
    work, skill_copy = tmp_path / "work", tmp_path / "work" / ".claude" / "skills" / "s"
    argv = bwrap_argv(["agent", "--flag"], cwd=work, writable=[work], readonly=[skill_copy, tmp_path],
                      env={"PATH": "/usr/bin", "HOME": "/root"})
    text = " ".join(argv)
    assert argv[:3] == ["bwrap", "--ro-bind", "/"] and text.endswith("-- agent --flag")
    for hidden in ("/root", "/home", "/tmp", "/run"):
        assert f"--tmpfs {hidden} " in text
    # the folder holding the work dir first, the work dir writable over it, the skill read-only last
    assert text.index(f"--ro-bind {tmp_path} ") < text.index(f"--bind {work} ") < text.index(f"--ro-bind {skill_copy}")
    assert "--unshare-pid" in argv and "--die-with-parent" in argv and "--new-session" in argv


def test_tool_folders_under_a_home_are_shown_read_only_but_never_credential_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for sub in (".pyenv/shims", ".cargo/bin", ".config/bin", ".ssh"):
        (home / sub).mkdir(parents=True)
    path = f"{home}/.pyenv/shims:{home}/.cargo/bin:{home}/.config/bin:/usr/bin"
    assert tool_folders(path, hidden_folders(None) + [str(home)]) == [str(home / ".pyenv"), str(home / ".cargo")]


def test_auto_is_recorded_and_unknown_kinds_and_docker_without_image_are_input_errors() -> None:
    chosen = resolve(SandboxSpec()).spec
    assert chosen.kind in ("bwrap", "none") and chosen.chosen is not None and chosen.chosen.startswith("auto")
    with pytest.raises(InputError, match="unknown sandbox"):
        sandbox_spec("chroot", None)
    with pytest.raises(InputError, match="needs an image"):
        sandbox_spec(None, {"kind": "docker"}, "config sandbox")
    assert sandbox_spec("bwrap", {"kind": "docker", "image": "x"}).kind == "bwrap"


@needs_bwrap
def test_a_timed_out_confined_command_leaves_no_process_behind(tmp_path: Path) -> None:
    marker = f"skillassay-sandbox-hang-{tmp_path.name}"
    settings = ExecutorSettings(timeout_seconds=1.5, sandbox=SandboxSpec(kind="bwrap"),
                                options={"argv": ["bash", "-c", f"(exec -a {marker} sleep 600) & echo started; "
                                                  "sleep 600"]})
    work = tmp_path / "work"
    work.mkdir()
    result = CommandExecutor(settings).run(TrialRequest(prompt="p", workdir=work, skill=None, seed=1,
                                                        settings=settings))
    assert result.status == "timeout" and result.final_text == "started\n"
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, marker)]


def _cmdline_has(proc: Path, marker: str) -> bool:
    try:
        return marker in (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


@needs_bwrap
def test_a_confined_command_gets_what_o_env_names_but_no_secret_of_ours(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "parent-secret-0123456789")
    monkeypatch.setenv("SKILLASSAY_TEST_PLAIN", "plain-value")
    settings = ExecutorSettings(sandbox=SandboxSpec(kind="bwrap"), options={
        "argv": ["bash", "-c", 'echo "${MY_SERVICE_API_KEY:-none} $AGENT_KEY $SKILLASSAY_TEST_PLAIN"'],
        "env": {"AGENT_KEY": "given-on-purpose"}})
    work = tmp_path / "work"
    work.mkdir()
    result = CommandExecutor(settings).run(TrialRequest(prompt="p", workdir=work, skill=None, seed=1,
                                                        settings=settings))
    assert result.final_text.split() == ["none", "given-on-purpose", "plain-value"]


@needs_bwrap
def test_a_path_in_the_prompt_is_not_made_visible(tmp_path: Path) -> None:
    """Folders the command's template names stay visible; one an eval's prompt names does not."""
    secret = Path.home() / f".skillassay-prompt-secret-{tmp_path.name}"
    secret.write_text("from the home")
    try:
        settings = ExecutorSettings(sandbox=SandboxSpec(kind="bwrap"),
                                    options={"argv": ["bash", "-c", 'cat "$0" 2>/dev/null || echo hidden', "{prompt}"]})
        work = tmp_path / "work"
        work.mkdir()
        result = CommandExecutor(settings).run(TrialRequest(prompt=str(secret), workdir=work, skill=None, seed=1,
                                                            settings=settings))
        assert result.final_text.strip() == "hidden"
    finally:
        secret.unlink()
