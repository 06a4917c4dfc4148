"""Preflight's endpoint probe (executors/probe.py) for the agent CLIs: a key the endpoint
refuses, or an endpoint that does not answer, is refused by `run` with exit 2 in seconds,
before any trial. The REAL `claude`/`codex` binaries must be on PATH (ready() looks for them);
the hosted API is the loopback fake, answering 401 to any other key than its own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_model_api import FakeModelAPI

from skillassay.executors import ExecutorSettings, load_executor_class

pytestmark = pytest.mark.agent_cli
RIGHT, WRONG = "sk-right-key-0123456789abcdef", "sk-wrong-key-0123456789abcdef"
CLIS = {"claude-code": ("claude", "ANTHROPIC_API_KEY", ""), "codex": ("codex", "OPENAI_API_KEY", "/v1")}


def _env(key_var: str, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                        "CODEX_API_KEY")}
    return {**env, key_var: key}


def _run(skill: Path, ws: Path, executor: str, base_url: str, env: dict[str, str]) -> tuple[int, str, float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "skillassay", "run", str(skill), "--executor", executor,
                           "--model", "m", "-o", f"base_url={base_url}", "--workspace", str(ws)],
                          capture_output=True, text=True, env=env, timeout=120)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split()), time.monotonic() - start


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("executor", sorted(CLIS))
def test_a_refused_key_exits_2_in_seconds_before_any_trial(executor, example_skill, tmp_path):
    binary, key_var, suffix = CLIS[executor]
    if shutil.which(binary) is None:
        pytest.skip(f"{binary} not on PATH")
    with FakeModelAPI([], api_key=RIGHT) as api:
        code, out, seconds = _run(example_skill, tmp_path / "ws", executor, api.base_url + suffix,
                                  _env(key_var, WRONG))
    assert code == 2, out
    assert "refused the key (HTTP 401)" in out and api.base_url in out, out
    assert "Traceback" not in out
    assert seconds < 20, seconds
    assert not list((tmp_path / "ws").glob("iteration-*/eval-*/*/run-*")), "no trial may run"
    assert api.model_requests() == []  # one GET of the model list, no completion


@pytest.mark.parametrize("executor", sorted(CLIS))
def test_an_endpoint_that_does_not_answer_exits_2_in_seconds(executor, example_skill, tmp_path):
    binary, key_var, suffix = CLIS[executor]
    if shutil.which(binary) is None:
        pytest.skip(f"{binary} not on PATH")
    url = f"http://127.0.0.1:{_closed_port()}{suffix}"
    code, out, seconds = _run(example_skill, tmp_path / "ws", executor, url, _env(key_var, RIGHT))
    assert code == 2, out
    assert "is not answering" in out and url in out, out
    assert seconds < 20, seconds
    assert not list((tmp_path / "ws").glob("iteration-*/eval-*/*/run-*"))


@pytest.mark.parametrize("executor", sorted(CLIS))
def test_the_right_key_passes_the_probe(executor, monkeypatch):
    binary, key_var, suffix = CLIS[executor]
    if shutil.which(binary) is None:
        pytest.skip(f"{binary} not on PATH")
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(key_var, RIGHT)
    with FakeModelAPI([], api_key=RIGHT) as api:
        ready = load_executor_class(executor)(ExecutorSettings(options={"base_url": api.base_url + suffix})).ready()
    assert ready is None
    assert [r["path"].split("?")[0] for r in api.requests] == ["/v1/models"]


@pytest.mark.parametrize(("executor", "key_var", "suffix"), [("openai", "OPENAI_API_KEY", "/v1"),
                                                            ("anthropic", "ANTHROPIC_API_KEY", "")])
def test_the_api_executors_name_an_endpoint_that_does_not_answer(executor, key_var, suffix, monkeypatch):
    monkeypatch.setenv(key_var, RIGHT)
    url = f"http://127.0.0.1:{_closed_port()}{suffix}"
    start = time.monotonic()
    missing = load_executor_class(executor)(ExecutorSettings(model="m", options={"base_url": url})).ready()
    assert missing is not None and "is not answering" in missing and url in missing
    assert time.monotonic() - start < 15
