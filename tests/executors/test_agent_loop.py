"""The shared agent loop's tools, run for real against temporary directories and processes:
path confinement (the model must not touch anything outside its work dir or the skill),
shell process-group handling, and the progressive-disclosure presentation of the skill."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillassay.executors.agent_loop import (
    ToolBox,
    ToolCall,
    ToolError,
    confine,
    cost_usd,
    parse_arguments,
    system_prompt,
    truncate,
)
from skillassay.executors.base import Usage
from skillassay.spec.skill import load_skill


def pid_alive(pid: int) -> bool:
    """Alive = exists and is not a zombie (an unreaped zombie has already died)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "skill"
    (folder / "reference").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: csv-report\ndescription: Summarise CSV files into a report.\n---\n"
        "# CSV report\nRead reference/format.md first.\n", encoding="utf-8")
    (folder / "reference" / "format.md").write_text("Use a markdown table.\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside the skill\n", encoding="utf-8")
    return load_skill(folder)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    wd = tmp_path / "work"
    wd.mkdir()
    (wd / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("not yours\n", encoding="utf-8")
    return wd


def call(box: ToolBox, tool: str, **args) -> tuple[str, bool]:
    return box.call(ToolCall(id="t1", name=tool, arguments=args))


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.txt", "sub/../../outside.txt",
                                 "~/x", "", "a/../../b"])
def test_confine_rejects_absolute_and_parent_paths(workdir: Path, bad: str) -> None:
    with pytest.raises(ToolError):
        confine(workdir, bad)


def test_confine_rejects_symlink_escaping_root(workdir: Path) -> None:
    (workdir / "link_file").symlink_to(workdir.parent / "outside.txt")
    (workdir / "link_dir").symlink_to(workdir.parent)
    for rel in ("link_file", "link_dir/outside.txt", "link_dir"):
        with pytest.raises(ToolError, match="symlink"):
            confine(workdir, rel)


def test_confine_allows_paths_and_symlinks_inside_root(workdir: Path) -> None:
    (workdir / "inner").mkdir()
    (workdir / "inner_link").symlink_to(workdir / "inner")
    assert confine(workdir, "data.csv") == (workdir / "data.csv").resolve()
    assert confine(workdir, "./inner_link/new.txt") == (workdir / "inner" / "new.txt").resolve()
    assert confine(workdir, ".") == workdir.resolve()


def test_file_tools_work_inside_and_refuse_outside(workdir: Path) -> None:
    box = ToolBox(workdir, None, {})
    assert call(box, "read_file", path="data.csv") == ("a,b\n1,2\n", False)
    out, err = call(box, "write_file", path="out/report.md", content="# hi\n")
    assert not err and (workdir / "out" / "report.md").read_text() == "# hi\n"
    listing, err = call(box, "list_files")
    assert not err and listing.splitlines() == ["data.csv", "out/report.md"]

    (workdir / "escape").symlink_to(workdir.parent)
    out, err = call(box, "write_file", path="escape/pwned.txt", content="x")
    assert err and not (workdir.parent / "pwned.txt").exists()
    out, err = call(box, "read_file", path="../outside.txt")
    assert err and "not yours" not in out
    out, err = call(box, "list_files", path="/")
    assert err


def test_model_mistakes_become_error_results_not_exceptions(workdir: Path) -> None:
    box = ToolBox(workdir, None, {})
    assert box.call(ToolCall("t", "delete_everything", {}))[1] is True
    assert box.call(ToolCall("t", "read_file", "not json"))[1] is True
    assert call(box, "read_file")[1] is True  # missing argument
    assert call(box, "read_file", path="missing.txt")[1] is True
    (workdir / "bin.dat").write_bytes(b"\xff\xfe\x00")
    assert call(box, "read_file", path="bin.dat")[1] is True


def test_skill_tools_exist_only_with_a_skill(workdir: Path, skill) -> None:
    baseline = ToolBox(workdir, None, {})
    assert {t.name for t in baseline.specs} == {"list_files", "read_file", "write_file",
                                                "run_shell"}
    assert call(baseline, "load_skill")[1] is True
    with_skill = ToolBox(workdir, skill, {})
    assert {"load_skill", "read_skill_file"} <= {t.name for t in with_skill.specs}


def test_load_skill_returns_body_and_bundled_files(workdir: Path, skill) -> None:
    box = ToolBox(workdir, skill, {})
    body, err = call(box, "load_skill", name="csv-report")
    assert not err and "Read reference/format.md first." in body
    assert "reference/format.md" in body and "---" not in body.split("\n")[0]
    assert call(box, "read_skill_file", path="reference/format.md") == (
        "Use a markdown table.\n", False)


def test_read_skill_file_is_confined_to_the_skill_folder(workdir: Path, skill) -> None:
    box = ToolBox(workdir, skill, {})
    out, err = call(box, "read_skill_file", path="../secret.txt")
    assert err and "outside the skill" not in out
    (skill.path / "sneaky").symlink_to(skill.path.parent / "secret.txt")
    out, err = call(box, "read_skill_file", path="sneaky")
    assert err and "outside the skill" not in out


def test_system_prompt_lists_name_and_description_but_not_body(skill) -> None:
    prompt = system_prompt(skill)
    assert "csv-report" in prompt and "Summarise CSV files into a report." in prompt
    assert "Read reference/format.md first." not in prompt
    baseline = system_prompt(None)
    assert "csv-report" not in baseline and "load_skill" not in baseline


def test_run_shell_runs_in_workdir_and_reports_exit_code(workdir: Path) -> None:
    box = ToolBox(workdir, None, {})
    out, err = call(box, "run_shell", command="pwd; ls; echo oops >&2; exit 3")
    assert not err
    assert out.startswith("exit code: 3\n")
    assert str(workdir.resolve()) in out and "data.csv" in out and "oops" in out


def test_run_shell_gets_no_secret_the_code_checks_would_not_get(workdir: Path, monkeypatch) -> None:
    """The model's shell and evals.json's code checks are both untrusted code: one rule for what
    they may see (store.redact.looks_secret). The shell's own list missed *AUTH* names."""
    monkeypatch.setenv("SERVICE_AUTH", "hunter2-hunter2-hunter2")
    monkeypatch.setenv("MY_API_KEY", "sk-abcdefabcdef0123")
    monkeypatch.setenv("PLAIN_SETTING", "visible-value")
    box = ToolBox(workdir, None, {})
    out, _ = call(box, "run_shell", command="env")
    assert "visible-value" in out
    assert "hunter2" not in out and "sk-abcdef" not in out


def test_run_shell_timeout_kills_the_whole_process_group(workdir: Path) -> None:
    box = ToolBox(workdir, None, {"shell_timeout": 1})
    started = time.monotonic()
    out, err = call(box, "run_shell",
                    command="sleep 60 & echo $! > grandchild.pid; echo started; wait")
    assert time.monotonic() - started < 15
    assert err and "timed out" in out and "started" in out
    grandchild = int((workdir / "grandchild.pid").read_text())
    deadline = time.monotonic() + 5
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def test_run_shell_output_is_truncated(workdir: Path) -> None:
    box = ToolBox(workdir, None, {"output_limit": 1000})
    out, err = call(box, "run_shell", command="python3 -c \"print('x' * 50000)\"")
    assert not err and len(out) < 1200 and "truncated" in out


def test_run_shell_does_not_expose_api_keys(workdir: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
    monkeypatch.setenv("SOME_AUTH_TOKEN", "tok-must-not-leak")
    out, _ = call(ToolBox(workdir, None, {}), "run_shell", command="env")
    assert "must-not-leak" not in out and "PATH=" in out


def test_truncate_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    short = truncate(text, 100)
    assert short.startswith("HEAD") and short.endswith("TAIL") and len(short) < 200
    assert truncate("small", 100) == "small"


def test_parse_arguments_keeps_non_json_text() -> None:
    assert parse_arguments('{"path": "a"}') == {"path": "a"}
    assert parse_arguments("") == {}
    assert parse_arguments("path=a") == "path=a"
    assert parse_arguments("[1]") == "[1]"


def test_cost_from_user_prices() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cached_input_tokens=200_000)
    prices = {"input": 3.0, "output": 15.0, "cached_input": 0.3}
    assert cost_usd(usage, prices) == pytest.approx(0.8 * 3 + 0.2 * 0.3 + 0.5 * 15)
    assert cost_usd(usage, None) is None
    assert cost_usd(Usage(), prices) is None


def test_listing_is_capped(workdir: Path) -> None:
    for i in range(600):
        (workdir / f"f{i:04d}.txt").touch()
    out, err = call(ToolBox(workdir, None, {"output_limit": 100_000}), "list_files")
    assert not err and "stopped at 500 files" in out
    assert os.path.basename(out.splitlines()[0]) == "data.csv"


def test_the_agent_never_sees_the_skills_eval_set(workdir: Path, skill) -> None:
    """evals/ in a skill folder holds the prompts and expected answers the runs are graded on:
    listed or readable, it would let the with-skill arm read its own answer key."""
    (skill.path / "evals").mkdir()
    (skill.path / "evals" / "evals.json").write_text('{"expected_output": "ANSWER-KEY"}')
    (skill.path / "key").symlink_to(skill.path / "evals" / "evals.json")
    box = ToolBox(workdir, skill, {})
    body, err = call(box, "load_skill", name="csv-report")
    assert not err and "evals" not in body and "reference/format.md" in body
    for path in ("evals/evals.json", "key", "./evals/evals.json"):
        out, err = call(box, "read_skill_file", path=path)
        assert err and "ANSWER-KEY" not in out, path
