"""run/turns.py: a multi-turn eval set given to an executor that cannot carry a conversation is
refused before any trial runs (exit 2, naming the executor and each such eval), never measured
on its first message alone. Every built-in executor carries one, so the executor here is a
third-party plugin installed as pip leaves one (tests/plugin_support.py)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import invoke
from plugin_support import on_path, write_distribution

ONESHOT = {"skillassay.executors": {"oneshot": "acme_oneshot:OneShot"}}
CODE = {"acme_oneshot.py": ("from skillassay.executors.echo import EchoExecutor\n\n"
                            "class OneShot(EchoExecutor):\n    name = 'oneshot'\n    supports_turns = False\n")}


def make_skill(root: Path, evals: list[dict]) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: talker\ndescription: Talks. Use when asked.\n---\nTalk.\n")
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "talker", "evals": evals}))
    return root


def test_an_executor_without_turns_is_refused_before_any_trial(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SKILLASSAY_PLUGINS", "skillassay,acme-oneshot")
    write_distribution(tmp_path / "site", "acme-oneshot", ONESHOT, CODE)
    evals = [{"id": 1, "prompt": "one message"},
             {"id": 2, "name": "chat", "turns": [{"prompt": "hello"}, {"prompt": "and then?"}]}]
    skill, ws = make_skill(tmp_path / "talker", evals), tmp_path / "ws"
    with on_path(tmp_path / "site"):
        refused = invoke("run", str(skill), "--executor", "oneshot", "--workspace", str(ws), "--trials", "1")
        single = invoke("run", str(make_skill(tmp_path / "single" / "talker", evals[:1])), "--executor", "oneshot",
                        "--workspace", str(tmp_path / "ws2"), "--trials", "1")
    assert refused.exit_code == 2, refused.output
    assert "'oneshot' executor cannot carry one" in refused.output and "eval 2 (chat)" in refused.output
    assert "$.evals[1].turns" in refused.output and "Traceback" not in refused.output
    assert not list(ws.glob("iteration-*/eval-*/*/run-*")), "no trial may have run"
    assert single.exit_code in (0, 1, 3), single.output  # a single-prompt eval set runs as before
