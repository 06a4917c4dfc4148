"""The `command` executor with real subprocesses (python scripts standing in for an agent CLI):
argv templating, answer from stdout or a file, the baseline's empty skill_dir, and a timeout
that kills the whole process tree while keeping partial output."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from cli_runner import cli
from test_agent_loop import pid_alive

from skillassay.errors import InputError
from skillassay.executors import load_executor_class
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.command import CommandExecutor, fill_argv
from skillassay.sandbox import SandboxSpec
from skillassay.spec.skill import load_skill

PY = sys.executable


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "my-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: my-skill\ndescription: Does things.\n---\nBody\n")
    return load_skill(folder)


def request(tmp_path: Path, settings: ExecutorSettings, skill=None, prompt: str = "hello",
            seed: int = 7) -> TrialRequest:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return TrialRequest(prompt=prompt, workdir=workdir, skill=skill, seed=seed, settings=settings)


def run(argv: list[str], req_kwargs: dict, tmp_path: Path, **settings_kwargs):
    settings = ExecutorSettings(model="m-1", options={"argv": argv,
                                                      **settings_kwargs.pop("options", {})},
                                **settings_kwargs)
    return CommandExecutor(settings).run(request(tmp_path, settings, **req_kwargs))


ECHO_ARGS = ("import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), "
             "'env_skill': os.environ['SKILLASSAY_SKILL_DIR']}))")


def test_registered_as_entry_point() -> None:
    assert load_executor_class("command") is CommandExecutor


def test_stdout_is_the_answer_and_placeholders_are_filled(tmp_path: Path, skill) -> None:
    result = run([PY, "-c", ECHO_ARGS, "{prompt}", "--dir={workdir}", "{skill_dir}", "{model}",
                  "{seed}"], {"skill": skill, "prompt": "say {workdir} literally"}, tmp_path)
    assert result.status == "ok", result.error
    seen = json.loads(result.final_text)
    work = str(tmp_path / "work")
    assert seen["argv"] == ["say {workdir} literally", f"--dir={work}", str(skill.path), "m-1",
                            "7"]
    assert Path(seen["cwd"]).resolve() == (tmp_path / "work").resolve()
    assert seen["env_skill"] == str(skill.path)
    assert result.skill_triggered is None and result.agent_duration_ms is not None
    assert result.transcript[0] == {"type": "command", "argv": [PY, "-c", ECHO_ARGS,
                                                                *seen["argv"]]}


def test_skill_dir_is_empty_without_skill(tmp_path: Path) -> None:
    result = run([PY, "-c", ECHO_ARGS, "{skill_dir}"], {}, tmp_path)
    seen = json.loads(result.final_text)
    assert result.status == "ok" and seen["argv"] == [""] and seen["env_skill"] == ""


def test_answer_file_replaces_stdout(tmp_path: Path) -> None:
    script = "open('out/answer.txt', 'w').write('the answer'); print('chatter')"
    code = f"import os; os.makedirs('out'); {script}"
    result = run([PY, "-c", code], {}, tmp_path, options={"answer_file": "out/answer.txt"})
    assert result.status == "ok" and result.final_text == "the answer"
    assert any(e == {"type": "stdout", "text": "chatter\n"} for e in result.transcript)


def test_missing_answer_file_is_an_error(tmp_path: Path) -> None:
    result = run([PY, "-c", "print('no file')"], {}, tmp_path, options={"answer_file": "a.txt"})
    assert result.status == "error" and "a.txt" in result.error


def test_answer_file_outside_workdir_is_refused(tmp_path: Path) -> None:
    (tmp_path / "leak.txt").write_text("secret")
    result = run([PY, "-c", "pass"], {}, tmp_path, options={"answer_file": "../leak.txt"})
    assert result.status == "error" and result.final_text != "secret"


def test_nonzero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    result = run([PY, "-c", "import sys; print('partial'); sys.exit('boom')"], {}, tmp_path)
    assert result.status == "error" and "boom" in result.error and "exit code 1" in result.error
    assert result.final_text == "partial\n"


def test_missing_binary_is_an_error_not_a_crash(tmp_path: Path) -> None:
    result = run(["/nonexistent/agent-cli", "{prompt}"], {}, tmp_path)
    assert result.status == "error" and "could not start" in result.error


def test_timeout_kills_child_tree_and_keeps_partial_output(tmp_path: Path) -> None:
    # The agent spawns a grandchild (as real agents spawn tools) and then hangs.
    code = ("import subprocess, sys, time; "
            "p = subprocess.Popen(['sleep', '60']); open('gc.pid', 'w').write(str(p.pid)); "
            "print('working...', flush=True); time.sleep(60)")
    started = time.monotonic()
    # unconfined: the pid it writes is a host pid (tests/test_sandbox.py kills a confined tree)
    result = run([PY, "-c", code], {}, tmp_path, timeout_seconds=1.5, sandbox=SandboxSpec(kind="none"))
    assert time.monotonic() - started < 15
    assert result.status == "timeout" and "timed out" in result.error
    assert result.final_text == "working...\n"
    grandchild = int((tmp_path / "work" / "gc.pid").read_text())
    deadline = time.monotonic() + 5
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def test_argv_option_is_required() -> None:
    with pytest.raises(InputError):
        CommandExecutor(ExecutorSettings(options={}))
    with pytest.raises(InputError):
        CommandExecutor(ExecutorSettings(options={"argv": "agent {prompt}"}))


def test_fill_argv_leaves_other_braces_alone() -> None:
    assert fill_argv(['{"a": 1}', "{unknown}", "{seed}{seed}"], {
        "prompt": "", "workdir": "", "skill_dir": "", "model": "", "seed": "3"}) == [
        '{"a": 1}', "{unknown}", "33"]


def test_executors_command_lists_usability(monkeypatch) -> None:


    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = cli(["executors"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines()
            if line.count("│") >= 3}
    assert {"openai", "anthropic", "command"} <= set(rows)
    assert "no" in rows["anthropic"] and "ANTHROPIC_API_KEY not set" in rows["anthropic"]
    assert "yes" in rows["command"]


REPORT_TRIGGERED = ("import os, sys, pathlib; p = os.environ['SKILLASSAY_LOADED_SKILLS_FILE']; "
                    "sys.argv[1] != '-' and pathlib.Path(p).write_text(sys.argv[1].replace(',', '\\n')); "
                    "print('ok')")


@pytest.mark.parametrize(("written", "expected"),
                         [("other,SKILLNAME", True), ("", False), ("other-skill", False), ("-", None)])
def test_the_command_reports_whether_it_loaded_the_skill(tmp_path: Path, skill, written, expected) -> None:
    """Skill names in the file named by SKILLASSAY_LOADED_SKILLS_FILE; a file without this
    skill's name (even empty) is "not loaded"; no file at all is unknown."""
    written = written.replace("SKILLNAME", skill.name)
    result = run([PY, "-c", REPORT_TRIGGERED, written], {"skill": skill}, tmp_path)
    assert result.status == "ok", result.error
    assert result.skill_triggered is expected
    assert not any(e.get("type") == "skill_triggered" for e in result.transcript)
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == []  # not an output of the agent


def test_the_baseline_arm_has_no_skill_to_load_whatever_the_command_says(tmp_path: Path) -> None:
    result = run([PY, "-c", REPORT_TRIGGERED, "true"], {}, tmp_path)
    assert result.status == "ok" and result.skill_triggered is None


def test_the_command_is_given_the_skill_without_its_eval_set(tmp_path: Path, skill) -> None:
    """evals/ holds the expected answers: the command's agent gets a copy without it, as CLI
    agents do; the rest of the skill is there."""
    (skill.path / "evals").mkdir()
    (skill.path / "evals" / "evals.json").write_text('{"expected_output": "ANSWER-KEY"}')
    script = ("import os, pathlib, sys; d = pathlib.Path(sys.argv[1]); "
              "print(sorted(p.name for p in d.iterdir()))")
    result = run([PY, "-c", script, "{skill_dir}"], {"skill": skill}, tmp_path)
    assert result.status == "ok", result.error
    assert result.final_text.strip() == "['SKILL.md']"
    assert (skill.path / "evals" / "evals.json").is_file()  # the snapshot itself is untouched
