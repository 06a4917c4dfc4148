"""`skillassay triggers --sandbox`: a trigger eval's agent runs in the sandbox asked for, an
unknown kind is exit 2 naming the option, and auto's fallback to none is said once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.sandbox import bwrap

pytestmark = pytest.mark.sandbox

# Reports loading the skill when the query names a zebra (its marker file is bound writable).
AGENT = ('case "$0" in *zebra*) echo zebra-facts > "$SKILLASSAY_LOADED_SKILLS_FILE";; '
         '*) : > "$SKILLASSAY_LOADED_SKILLS_FILE";; esac; echo answered')


def write_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "zebra-facts"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: zebra-facts\ndescription: Knows zebra lore.\n---\nZebras.\n")
    (skill / "evals" / "trigger_evals.json").write_text(json.dumps(
        [{"query": "zebra fact", "should_trigger": True}, {"query": "mango fact", "should_trigger": False}]))
    return skill


def invoke(skill: Path, *extra: str) -> tuple[int, str]:
    res = cli(["triggers", str(skill), "--executor", "command", "--runs", "1",
                                   "-o", "argv=" + json.dumps(["bash", "-c", AGENT, "{prompt}"]), *extra],
                             env={"COLUMNS": "300"})
    return res.exit_code, " ".join(res.output.split())


def test_an_unknown_sandbox_is_an_input_error(tmp_path: Path) -> None:
    code, out = invoke(write_skill(tmp_path), "--sandbox", "chroot")
    assert code == 2 and "--sandbox" in out and "unknown sandbox" in out and "Traceback" not in out


@pytest.mark.skipif(bwrap.works() is not None, reason=f"bwrap cannot run here: {bwrap.works()}")
def test_trigger_runs_are_confined_and_auto_warns_once_when_it_cannot(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = invoke(write_skill(tmp_path / "a"), "--sandbox", "bwrap")
    assert code == 0, out
    assert "recall: 100%" in out and "no sandbox" not in out
    monkeypatch.setattr(bwrap, "works", lambda: "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
    code, out = invoke(write_skill(tmp_path / "b"))
    assert code == 0, out
    assert out.count("no sandbox: bwrap is not installed") == 1
