"""Secrets the redactor could not see (issue 40): a key printed base64-encoded, hex-encoded or
split across two lines; passwords in `-o env` values and URL userinfo; a secret the agent
wrote into outputs/, embedded in `view --static` built after the variable was unset. Each is
a real `skillassay run` with the command executor (a shell script as the agent)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import cli

import skillassay

SRC = Path(skillassay.__file__).resolve().parent.parent  # the code under test, in the child processes too
KEY = "Zx81kQ0pLm2nVb7cXz9aQwTy"  # no known key shape: only the environment says it is secret
KEY_VAR = "MY_SERVICE_API_KEY"


def make_skill(parent: Path) -> Path:
    skill = parent / "greeter"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets. Use when asked to greet.\n"
                                    "---\nSay hello.\n", encoding="utf-8")
    evals = [{"id": 1, "prompt": "Greet", "expectations": [{"type": "contains", "value": "hello"}]}]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "greeter", "evals": evals}),
                                                encoding="utf-8")
    return skill


def run_agent(tmp_path: Path, script: str, *options: str) -> Path:
    skill = make_skill(tmp_path / "skills")
    ws = tmp_path / "ws"
    result = cli(["run", str(skill), "--executor", "command", "--trials", "2", "--workspace", str(ws),
                                 "-o", f"argv={json.dumps(['/bin/sh', '-c', script])}",
                  # the agent must see the key to leak it: a sandbox would hide it (tests/sandbox/)
                  "--sandbox", "none", *options])
    assert result.exit_code in (0, 1, 3), result.output
    return ws / "iteration-1"


def files_containing(root: Path, needles: list[str], skip: tuple[str, ...] = ()) -> list[str]:
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not any(part in skip for part in rel.split("/")):
            text = path.read_bytes().decode("utf-8", errors="replace")
            found += [f"{rel}: {n!r}" for n in needles if n in text]
    return found


def encodings(value: str) -> list[str]:
    raw = value.encode()
    blob = base64.b64encode(b"x" + raw + b"yz").decode()  # inside a longer blob, one byte in
    return [base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(b"ab" + raw).decode()[4:-4],
            blob[4:-4], raw.hex(), KEY[:12], KEY[12:]]


def test_encoded_and_split_keys_reach_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the agent printing its key base64-encoded, hex or in two halves put it in
    answer.md, grading.json, benchmark.json and the transcripts."""
    monkeypatch.setenv(KEY_VAR, KEY)
    script = (f'echo "hello"; printf %s "${KEY_VAR}" | base64; printf "x%syz" "${KEY_VAR}" | base64; '
              f'printf "ab%s" "${KEY_VAR}" | base64 | tr "+/" "-_"; printf %s "${KEY_VAR}" | od -An -tx1 | tr -d " \\n"; '
              f'echo; echo "first half: $(printf %s "${KEY_VAR}" | cut -c1-12)"; printf %s "${KEY_VAR}" | cut -c13-')
    it = run_agent(tmp_path, script)
    answer = next(it.glob("eval-*/with_skill/run-1/outputs/answer.md")).read_text()
    assert answer.count("[REDACTED]") >= 5, answer
    leaks = files_containing(it, encodings(KEY), skip=("skill-snapshot",))
    assert leaks == []
    assert (it / "benchmark.json").is_file() and next(it.glob("eval-*/with_skill/run-1/grading.json")).is_file()


def test_passwords_in_env_options_and_urls_stay_out_of_iteration_json(tmp_path: Path) -> None:
    """Before: `-o env={"DB_URL": "postgres://admin:pw@..."}` and `-o base_url=http://user:pw@...`
    were written in iteration.json, and the env value in the transcripts."""
    db_url = "postgres://admin:Db0Pass9@db.internal:5432/app"
    it = run_agent(tmp_path, 'echo "hello $DB_URL $LOG_LEVEL"',
                   "-o", f"env={json.dumps({'DB_URL': db_url, 'LOG_LEVEL': 'verbose-debug'})}",
                   "-o", 'public_env=["LOG_LEVEL"]', "-o", "base_url=http://bob:Url7Secret@127.0.0.1:9/v1")
    record = (it / "iteration.json").read_text()
    for leak in ("Db0Pass9", "Url7Secret", "bob:", "admin:"):
        assert leak not in record
    assert "http://[REDACTED]@127.0.0.1:9/v1" in record
    assert files_containing(it, ["Db0Pass9", "Url7Secret", "db.internal:5432/app"]) == []
    answer = next(it.glob("eval-*/with_skill/run-1/outputs/answer.md")).read_text()
    assert answer.strip() == "hello [REDACTED] verbose-debug"  # the public one is shown
    remembered = json.loads(record)["redacted_secrets"]
    assert remembered["forms"] and all(db_url not in json.dumps(f) for f in remembered["forms"])


def test_a_url_password_is_not_printed_by_preflight(tmp_path: Path) -> None:
    """Before: an unreachable OPENAI_BASE_URL with credentials was printed on stderr whole."""
    skill = make_skill(tmp_path / "skills")
    env = {**os.environ, "PYTHONPATH": str(SRC), "OPENAI_BASE_URL": "http://carol:Pre9flight@127.0.0.1:9/v1",
           "OPENAI_API_KEY": "sk-test-not-a-real-key-000"}
    proc = subprocess.run([sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "openai", "--model", "gpt-test", "--trials", "1",
                           "--workspace", str(tmp_path / "ws")], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "127.0.0.1:9" in proc.stderr and "Pre9flight" not in proc.stderr and "carol" not in proc.stderr


def test_a_secret_in_outputs_is_masked_in_the_static_page_built_later(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a key the agent wrote into outputs/ was embedded in the shareable page unless the
    variable happened to be set when the page was built. Built here by a new process without
    it, the page masks the key, plain and base64, from iteration.json's hashes alone."""
    monkeypatch.setenv(KEY_VAR, KEY)
    script = (f'echo hello; echo "config: key=${KEY_VAR}" > "$SKILLASSAY_WORKDIR/notes.md"; '
              f'printf "x%syz" "${KEY_VAR}" | base64 > "$SKILLASSAY_WORKDIR/blob.txt"')
    it = run_agent(tmp_path, script)
    assert KEY in next(it.glob("eval-*/with_skill/run-1/outputs/notes.md")).read_text()  # the agent's own file
    env = {k: v for k, v in os.environ.items() if k != KEY_VAR}
    env["PYTHONPATH"] = str(SRC)
    def page(name: str, *extra: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "skillassay", "view", str(it), "--static", str(tmp_path / name),
                               *extra], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return (tmp_path / name).read_text()

    html = page("page.html")
    assert "config: key=[REDACTED]" in html
    assert [e for e in encodings(KEY)[:4] if e in html] == [] and KEY not in html
    assert "Review it before sharing" in html and "--no-outputs" in html
    bare = page("bare.html", "--no-outputs")
    assert "config: key=" not in bare and "written with --no-outputs" in bare


def test_view_static_warns_of_secrets_too_weak_to_remember(tmp_path: Path) -> None:
    """A short password from -o env is masked in what the run writes but not remembered (its
    hash could be guessed: store/secret_strength.py), so a page built later may show it where
    the agent wrote it into outputs/: `view --static` says so on stderr."""
    script = 'echo hello; echo "db: $DB_PASSWORD" > "$SKILLASSAY_WORKDIR/notes.md"'
    it = run_agent(tmp_path, script, "-o", 'env={"DB_PASSWORD": "hunter2pw"}')
    record = json.loads((it / "iteration.json").read_text())["redacted_secrets"]
    weak = record["too_weak_to_remember"]  # this one, and any an earlier test registered in this process
    assert weak >= 1
    assert "hunter2pw" not in (it / "iteration.json").read_text()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-m", "skillassay", "view", str(it), "--static", str(tmp_path / "p.html")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"{weak} secret value(s)" in proc.stderr and "--no-outputs" in proc.stderr
    bare = subprocess.run([sys.executable, "-m", "skillassay", "view", str(it), "--static", str(tmp_path / "b.html"),
                           "--no-outputs"], env=env, capture_output=True, text=True, timeout=300)
    assert bare.returncode == 0 and "secret value" not in bare.stderr
