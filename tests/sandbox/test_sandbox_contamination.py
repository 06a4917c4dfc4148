"""Issue 33 item 3: nothing leaks into the baseline. A baseline agent that loads a skill named as
the one under test voids the comparison: the run says INVALID (exit 3, never 0) and names the
trials. And agent CLIs' trials never run under a folder whose parents hold skills or
instructions: refused before the first trial without a sandbox, hidden by the mounts with one."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from cli_runner import cli
from fake_model_api import FakeModelAPI, Reply, ToolCall
from sandbox_support import needs_bwrap

from skillassay.executors.agent_sandbox import contaminating
from skillassay.executors.base import ExecutorSettings, TrialRequest
from skillassay.executors.claude_code import ClaudeCodeExecutor
from skillassay.sandbox import SandboxSpec

SKILL = "greeter"
# The command's agent answers, and says it loaded `greeter`, in both arms: in the baseline
# that can only come from outside (a skill in a parent folder, the user's own skills).
AGENT = ("import os, sys; open(os.environ['SKILLASSAY_LOADED_SKILLS_FILE'], 'a').write('greeter\\n'); "
         "print('hello there')")


def write_skill(tmp_path: Path) -> Path:
    folder = tmp_path / SKILL
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {SKILL}\ndescription: Greets. Use to greet.\n---\nSay hello.\n")
    (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": SKILL, "evals": [
        {"id": 1, "name": "greet", "prompt": "Greet me.", "expectations": [{"type": "contains", "value": "hello"}]}]}))
    return folder


def test_a_baseline_that_loads_the_skill_under_test_is_an_invalid_measurement(tmp_path: Path) -> None:
    skill = write_skill(tmp_path)
    result = cli([
        "run", str(skill), "--executor", "command", "--trials", "2", "--sandbox", "none",
        "-o", "argv=" + json.dumps([sys.executable, "-c", AGENT])], env={"COLUMNS": "200"})
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert "INVALID" in said and "baseline contaminated" in said
    for run in (1, 2):  # the run names each contaminated trial's folder
        assert f"without_skill/run-{run} loaded a skill named {SKILL}" in said
    it = tmp_path / f"{SKILL}-workspace" / "iteration-1"
    metrics = json.loads((it / "eval-1-greet" / "without_skill" / "run-1" / "outputs" / "metrics.json").read_text())
    assert metrics["skill_triggered"] is True
    report = (it / "report.md").read_text()
    assert "baseline contaminated" in report and "**Sandbox:** `none` (no isolation" in report
    assert json.loads((it / "iteration.json").read_text())["sandbox"]["kind"] == "none"


def test_a_clean_baseline_of_an_executor_that_reports_loads_says_false_not_null(tmp_path: Path) -> None:
    skill = write_skill(tmp_path)
    agent = "import os; open(os.environ['SKILLASSAY_LOADED_SKILLS_FILE'], 'a'); print('hello')"
    result = cli([
        "run", str(skill), "--executor", "command", "--trials", "1", "--sandbox", "none",
        "-o", "argv=" + json.dumps([sys.executable, "-c", agent])], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    run = tmp_path / f"{SKILL}-workspace" / "iteration-1" / "eval-1-greet" / "without_skill" / "run-1"
    assert json.loads((run / "outputs" / "metrics.json").read_text())["skill_triggered"] is False


def test_agent_files_above_a_folder_are_found(tmp_path: Path) -> None:
    (tmp_path / "a" / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / "a" / "b" / "AGENTS.md").parent.mkdir(parents=True)
    (tmp_path / "a" / "b" / "AGENTS.md").write_text("obey")
    (tmp_path / "a" / "b" / "c" / ".agents").mkdir(parents=True)  # in the folder itself: not a parent
    assert contaminating(tmp_path / "a" / "b" / "c") == [tmp_path / "a" / "b" / "AGENTS.md", tmp_path / "a" / ".claude"]


claude = pytest.mark.skipif(shutil.which("claude") is None, reason="claude CLI not on PATH")


@pytest.fixture
def dirty_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR under a folder holding `.claude/skills/greeter`, as issue 33 reproduced it."""
    parent = tmp_path / "shared"
    leaked = parent / ".claude" / "skills" / "demo-skill"
    leaked.mkdir(parents=True)
    (leaked / "SKILL.md").write_text("---\nname: demo-skill\ndescription: Leaked.\n---\nThe answer is 42.\n")
    (parent / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(parent / "tmp"))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key-0123456789")
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return leaked


@pytest.mark.agent_cli
@claude
def test_unconfined_claude_under_a_contaminated_temp_folder_is_refused_before_any_trial(dirty_tmpdir: Path) -> None:
    executor = ClaudeCodeExecutor(ExecutorSettings(sandbox=SandboxSpec(kind="none")))
    why = executor.ready()
    assert why is not None and str(dirty_tmpdir.parents[1]) in why and "both arms" in why


@pytest.mark.sandbox
@pytest.mark.agent_cli
@claude
@needs_bwrap
def test_confined_claude_never_sees_the_skill_above_its_temp_folder(tmp_path: Path, dirty_tmpdir: Path) -> None:
    """The baseline arm reads the leaked SKILL.md by absolute path: under bwrap it is not there,
    so the baseline loaded nothing (false, not null)."""
    leaked_md = str(dirty_tmpdir / "SKILL.md")
    settings = ExecutorSettings(model="claude-sonnet-4-5", timeout_seconds=90, sandbox=SandboxSpec(kind="bwrap"),
                                skill_under_test="demo-skill")
    work = tmp_path / "work"
    work.mkdir()
    script = [Reply(tool_calls=[ToolCall("Read", {"file_path": leaked_md})]), Reply(text="no skill")]
    with FakeModelAPI(script) as api:
        settings.options["base_url"] = api.base_url
        assert ClaudeCodeExecutor(settings).ready() is None
        result = ClaudeCodeExecutor(settings).run(TrialRequest(prompt="Answer.", workdir=work, skill=None, seed=1,
                                                               settings=settings))
    assert result.status == "ok", result.error
    first = json.dumps(api.model_requests()[0]["body"])
    assert "Leaked." not in first and "The answer is 42" not in json.dumps(api.model_requests()[1]["body"])
    assert result.skill_triggered is False


def test_auto_records_its_choice_and_warns_once_when_it_falls_back_to_none(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Where bwrap works, auto confines and says so in iteration.json; where it does not (here:
    made to fail), the run goes on unconfined with one warning naming the risk and the fix."""
    from skillassay.sandbox import bwrap

    runs = []
    for why in (bwrap.works(), "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"):
        monkeypatch.setattr(bwrap, "works", lambda why=why: why)
        skill = write_skill(tmp_path / ("works" if why is None else "fails"))
        result = cli(["run", str(skill), "--executor", "command", "--trials", "1",
                                          "-o", "argv=" + json.dumps(["bash", "-c", "echo hello"])],
                                    env={"COLUMNS": "300"})
        assert result.exit_code == 0, result.output
        it = skill.parent / f"{SKILL}-workspace" / "iteration-1"
        runs.append((json.loads((it / "iteration.json").read_text())["sandbox"], " ".join(result.output.split()),
                     (it / "report.md").read_text()))
    (confined, said, report), (unconfined, warned, report_none) = runs
    if bwrap.works() is None:
        assert confined == {"kind": "bwrap", "chosen": "auto: bwrap works here"} and "no sandbox" not in said
        assert "**Sandbox:** `bwrap`; auto: bwrap works here" in report
    assert unconfined == {"kind": "none", "chosen": "auto: bwrap is not installed (Debian/Ubuntu: apt-get install "
                                                    "bubblewrap)"}
    assert warned.count("no sandbox: bwrap is not installed") == 1 and "--sandbox docker" in warned
    assert "**Sandbox:** `none` (no isolation" in report_none
