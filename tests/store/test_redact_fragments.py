"""Fragments of a known secret (issue 40, "Secrets the redactor cannot see"): a 108-character
key printed as wrapped base64 (76 columns like GNU base64, 64 like `openssl base64`) or cut
into pieces on one line, with a blank line between, or joined by `" + "`. Each is a real
`skillassay run` with the command executor; the agent is a Python script printing those forms,
graded by a regex that quotes them into grading.json and benchmark.json."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import cli

import skillassay

SRC = Path(skillassay.__file__).resolve().parent.parent  # the code under test, in the child processes too
KEY_VAR = "ANTHROPIC_API_KEY"
F = 16  # the shortest piece the redactor promises to find (secret_forms.FRAGMENT)
# A made-up key of a real key's length and shape, derived here so no file holds it.
KEY = "sk-ant-api03-" + base64.urlsafe_b64encode(hashlib.sha256(b"issue 40").digest() * 3).decode()[:95]

AGENT = r'''
import base64, os, sys
k = os.environ["ANTHROPIC_API_KEY"]
b = base64.b64encode((k + "\n").encode()).decode()  # `echo "$K" | base64`
lines = ["encoded:"]
for width in (76, 64):  # GNU base64; openssl base64
    lines += [b[i:i + width] for i in range(0, len(b), width)]
lines += [k[:54] + " " + k[54:], k[:54] + "," + k[54:], k[:54] + "\n\n" + k[54:],
          '"' + k[:54] + '" + "' + k[54:] + '"', " ".join((k[:36], k[36:72], k[72:])),
          ",".join((k[:36], k[36:72], k[72:]))]
text = "\n".join(lines) + "\n"
print(text)
if len(sys.argv) > 1:  # also into a file of its own in outputs/, kept as the agent wrote it
    with open(os.path.join(os.environ["SKILLASSAY_WORKDIR"], "notes.md"), "w") as fh:
        fh.write(text)
'''


def windows(value: str, width: int = F) -> set[str]:
    """Every run of `width` characters of the key and of its base64 (what a reader could put together)."""
    b64 = base64.b64encode(value.encode()).decode()
    return {s[i:i + width] for s in (value, b64) for i in range(len(s) - width + 1)}


def leaks(path: Path, needles: set[str]) -> list[str]:
    width = len(next(iter(needles)))
    text = path.read_bytes().decode("utf-8", errors="replace")
    return sorted({text[i:i + width] for i in range(len(text) - width + 1)} & needles)


def run_agent(tmp_path: Path, *agent_args: str) -> Path:
    skill = tmp_path / "skills" / "greeter"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets. Use when asked to greet.\n"
                                    "---\nSay hello.\n", encoding="utf-8")
    evals = [{"id": 1, "prompt": "Greet", "expectations": [{"type": "regex", "pattern": r"encoded:[\s\S]+"}]}]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "greeter", "evals": evals}), encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    ws = tmp_path / "ws"
    argv = [sys.executable, str(tmp_path / "agent.py"), *agent_args]
    result = cli(["run", str(skill), "--executor", "command", "--trials", "1", "--workspace", str(ws),
                  "-o", f"argv={json.dumps(argv)}", "--sandbox", "none"])  # unconfined: the agent sees the key
    assert result.exit_code in (0, 1, 3), result.output
    return ws / "iteration-1"


def test_wrapped_base64_and_pieces_of_a_key_reach_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: wrapped base64 was not masked at all, and of a key cut in pieces only the first
    (it has a key's shape) was: the rest reached grading.json and benchmark.json."""
    monkeypatch.setenv(KEY_VAR, KEY)
    it = run_agent(tmp_path)
    grading = next(it.glob("eval-*/with_skill/run-1/grading.json"))
    assert "encoded:" in grading.read_text() and "[REDACTED]" in grading.read_text()
    needles = windows(KEY)
    for path in (grading, it / "benchmark.json"):
        assert leaks(path, needles) == [], path.name
    others = [p for p in it.rglob("*") if p.is_file() and "skill-snapshot" not in p.parts]
    assert [p.name for p in others if leaks(p, needles)] == []


def test_pieces_in_outputs_are_masked_by_a_static_page_built_without_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the page, built by a new process with the variable unset, masked none of the
    pieces the agent wrote into outputs/: iteration.json's hashes knew the whole forms only."""
    monkeypatch.setenv(KEY_VAR, KEY)
    it = run_agent(tmp_path, "--notes")
    notes = next(it.glob("eval-*/with_skill/run-1/outputs/notes.md"))
    assert leaks(notes, windows(KEY))  # the agent's own file, kept as written
    assert KEY[60:] not in (it / "iteration.json").read_text()
    env = {k: v for k, v in os.environ.items() if k != KEY_VAR}
    env["PYTHONPATH"] = str(SRC)
    page = tmp_path / "page.html"
    proc = subprocess.run([sys.executable, "-m", "skillassay", "view", str(it), "--static", str(page)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert "encoded:" in html and html.count("[REDACTED]") >= 10
    # From hashes alone a piece is found when it holds a whole 16-byte block of the key: from
    # 2F-1 characters (docs/security.md). Every piece here is found but the 64-column base64's
    # last line, 16 characters of the key's base64 (12 bytes) and "Cg==".
    assert leaks(page, windows(KEY, 2 * F - 1)) == []
    assert leaks(page, windows(KEY)) == [base64.b64encode(KEY.encode()).decode()[128:144]]
