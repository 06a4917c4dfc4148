"""Secrets reach no file and no check, and matplotlib writes nothing into HOME (issue 15, "Leaks").

Every file skillassay writes goes through store/jsonio, where one redactor masks the values of
secret-looking environment variables, `-o env` secrets and known key formats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import repo_paths
from cli_runner import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from skillassay.report.ci_outputs import append_step_summary
from skillassay.store.jsonio import atomic_open, atomic_write_text, write_json
from skillassay.store.redact import _SHAPES, _compiled

REPO = repo_paths.REPO
ENV_SECRET = "zq7Hf93kLm02Xw8pQ"  # no known key shape: only the environment says it is secret
OPTION_SECRET = "tok9f8e7d6c5b4a3"  # given with -o env, never in our own environment
PROMPT_KEY = "sk-ant-api03-Zx81kQ0pLm2nVb7cXz9aQw"  # a known key shape pasted into a prompt


def make_skill(parent: Path, evals: list[dict]) -> Path:
    skill = parent / "greeter"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets. Use when asked to greet.\n"
                                    "---\nSay hello.\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "greeter", "evals": evals}),
                                                encoding="utf-8")
    return skill


def files_containing(root: Path, needles: list[str], skip: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and skip not in path.parents:
            text = path.read_bytes().decode("utf-8", errors="replace")
            found += [f"{path.relative_to(root)}: {n}" for n in needles if n in text]
    return found


def test_no_secret_reaches_any_file_the_run_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing agent whose error quotes the key, an answer that echoes an -o env token and a
    key in the prompt: before, they were written raw into grading.json evidence, benchmark.json,
    the static viewer page, iteration.json, eval_metadata.json and the snapshot's evals.json."""
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_SECRET)
    skill = make_skill(tmp_path / "skills", [
        {"id": 1, "prompt": f"Use the key {PROMPT_KEY} to greet", "expectations": [
            {"type": "contains", "value": "hello"}]}])
    ws = tmp_path / "ws"
    script = ('echo "hello, token $AGENT_TOKEN"; '
              'echo "AuthenticationError: invalid x-api-key (Bearer $MY_SERVICE_API_KEY)" >&2; exit 1')
    result = cli([
        "run", str(skill), "--executor", "command", "--trials", "1", "--workspace", str(ws),
        "-o", f"argv={json.dumps(['/bin/sh', '-c', script])}",
        "-o", f"env={json.dumps({'AGENT_TOKEN': OPTION_SECRET})}",
        "--sandbox", "none"])  # unconfined: the agent has the key to leak (a sandbox would withhold it)
    assert result.exit_code in (0, 1, 3), result.output
    it = ws / "iteration-1"
    assert cli(["view", str(it), "--static", str(ws / "page.html")]).exit_code == 0
    grading = json.loads(next(it.glob("eval-*/with_skill/run-1/grading.json")).read_text())
    evidence = grading["expectations"][0]["evidence"]
    assert "AuthenticationError" in evidence and "[REDACTED]" in evidence  # the reason stays, the key goes
    assert (ws / "page.html").stat().st_size > 1000
    assert files_containing(tmp_path, [ENV_SECRET, OPTION_SECRET, PROMPT_KEY], skip=skill) == []
    assert (it / "skill-snapshot" / "evals" / "evals.json").is_file()
    assert (it / "skill-snapshot" / "SKILL.md").read_text() == (skill / "SKILL.md").read_text()


def test_command_and_python_checks_get_no_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_SECRET)
    monkeypatch.setenv("DB_PASSWORD", "hunter2hunter2")
    skill = make_skill(tmp_path / "skills", [{"id": 1, "prompt": "Say hello", "expectations": [
        {"type": "command", "command": 'test -z "$MY_SERVICE_API_KEY" && test -z "$DB_PASSWORD" && test -n "$PATH"'},
        {"type": "python", "function": "envcheck:check"}]}])
    (skill / "evals" / "envcheck.py").write_text(
        "import os\n\ndef check(run):\n    leaked = sorted(k for k in ('MY_SERVICE_API_KEY', 'DB_PASSWORD') if k in os.environ)\n"
        "    return (not leaked and 'PATH' in os.environ, f'leaked: {leaked}')\n", encoding="utf-8")
    ws = tmp_path / "ws"
    result = cli(["run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws)])
    assert result.exit_code in (0, 1, 3), result.output
    for arm in ("with_skill", "without_skill"):
        grading = json.loads(next((ws / "iteration-1").glob(f"eval-*/{arm}/run-1/grading.json")).read_text())
        verdicts = [(e["passed"], e["evidence"]) for e in grading["expectations"]]
        assert all(passed for passed, _ in verdicts), verdicts


def test_every_writer_masks_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_TOKEN", 'ab"cd\\ef-0123456789')  # quotes and backslashes: escaped in JSON
    write_json(tmp_path / "a.json", {"nested": [{"error": 'Bearer ab"cd\\ef-0123456789 failed'}],
                                     "aws": "AKIAABCDEFGHIJKLMNOP"})
    atomic_write_text(tmp_path / "b.md", "key ghp_abcdefghijklmnopqrstuvwxyz0123 in text")
    with atomic_open(tmp_path / "c.json") as fh:  # benchmark.json's runs[]: bytes in arbitrary blocks
        fh.write("[")
        fh.flush()
        fh.buffer.write(b'"token sk-abcdefgh')  # type: ignore[attr-defined]
        fh.buffer.write(b'ijklmnopqrst end"\n')  # type: ignore[attr-defined]
        fh.buffer.write(b'"tail sk-zyxwvutsrqponmlkji"')  # type: ignore[attr-defined]
        fh.write("]\n")
    a = (tmp_path / "a.json").read_text()
    assert json.loads(a) == {"nested": [{"error": "Bearer [REDACTED] failed"}], "aws": "[REDACTED]"}
    assert (tmp_path / "b.md").read_text() == "key [REDACTED] in text"
    assert (tmp_path / "c.json").read_text() == '["token [REDACTED] end"\n"tail [REDACTED]"]\n'


def test_matplotlib_writes_nothing_into_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in {"MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"}}
    env.update(HOME=str(home), PYTHONPATH=str(REPO / "src"))
    code = ("from skillassay.report.charts import per_eval_chart\n"
            "svg = per_eval_chart([{'eval_id': 1, 'eval_name': 'x', 'skill': 0.5, 'skill_ci': None, 'base': 0.2,"
            " 'base_ci': None, 'skill_trials': 3, 'base_trials': 3, 'trials': 3}])\n"
            "assert svg and b'<svg' in svg\n"
            "import matplotlib; print(matplotlib.get_cachedir())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert not (home / ".cache" / "matplotlib").exists()
    assert not (home / ".config" / "matplotlib").exists()
    assert not (home / ".matplotlib").exists()
    assert Path(out.stdout.strip()) == home / ".cache" / "skillassay" / "matplotlib"


OLD_KEY_SHAPES = re.compile(r"\b(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,})")
KEY_SHAPES = re.compile(r"\b(" + "|".join(_SHAPES) + ")")  # the slow form of what the redactor searches


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="sk-antAKIAghpou_rs xé0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", max_size=120))
def test_fast_key_shapes_mask_what_the_word_boundary_regex_masks(text: str) -> None:
    """The literal-led search (400 MB/s) masks exactly what `\\b(...)` (25 MB/s) would, and at
    least every key the old regex masked."""
    redactor = _compiled(frozenset())
    masked = redactor.text(text)
    assert masked == KEY_SHAPES.sub("[REDACTED]", text)
    assert not OLD_KEY_SHAPES.search(masked)
    ascii_text = text.replace("é", "e")
    assert redactor.bytes(ascii_text.encode()) == KEY_SHAPES.sub("[REDACTED]", ascii_text).encode()


def test_the_job_summary_is_masked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$GITHUB_STEP_SUMMARY is appended to, not written through jsonio: it masks on its own."""
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    append_step_summary(f"| eval {ENV_SECRET} | {PROMPT_KEY} |\n", {"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text() == "# earlier step\n| eval [REDACTED] | [REDACTED] |\n"
