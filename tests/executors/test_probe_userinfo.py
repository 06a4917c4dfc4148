"""Preflight's probe (executors/probe.py) with credentials in the base URL
(`http://user:pw@127.0.0.1:PORT`): urllib took `user:pw@127.0.0.1` for the host name, so the
probe failed DNS and `run` refused claude-code, though the CLI itself reaches such an endpoint.
The probe must reach the server, send the userinfo as HTTP Basic authorization (as HTTP
clients do with it), and never show the credentials."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field

import pytest
from fake_model_api import FakeModelAPI
from loopback_server import LoopbackServer

from skillassay.executors.probe import probe_anthropic, probe_models_url, probe_openai

USER, PASSWORD = "skill-user", "pa:ss@w0rd/Zq9"  # a password with characters a URL must escape
QUOTED = "pa%3Ass%40w0rd%2FZq9"


@dataclass
class RecordingModels(LoopbackServer):
    """Answers GET of the model list and records each request's path and headers."""

    status: int = 200
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    methods = ("GET",)

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        self.seen.append((path, headers))
        return self.status, {"content-type": "application/json"}, json.dumps({"data": []}).encode()

    def url(self, userinfo: str) -> str:
        return f"http://{userinfo}@127.0.0.1:{self.port}"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_the_anthropic_probe_reaches_a_userinfo_url_and_sends_it_as_basic_auth():
    with RecordingModels() as server:
        problem = probe_anthropic(server.url(f"{USER}:{QUOTED}"), {"ANTHROPIC_API_KEY": "sk-ant-key"})
    assert problem is None
    [(path, headers)] = server.seen
    assert path == "/v1/models"
    assert headers["authorization"] == _basic(USER, PASSWORD)  # percent-escapes decoded, as curl does
    assert headers["x-api-key"] == "sk-ant-key"
    assert headers["host"] == f"127.0.0.1:{server.port}"


def test_a_user_without_a_password_is_basic_auth_with_an_empty_password():
    with RecordingModels() as server:
        assert probe_models_url(server.url(USER) + "/v1/models", {}) is None
    assert server.seen[0][1]["authorization"] == _basic(USER, "")


def test_the_openai_probe_keeps_its_bearer_key_and_drops_nothing_else():
    with RecordingModels() as server:
        problem = probe_openai(server.url(f"{USER}:{QUOTED}") + "/v1", "sk-openai-key")
    assert problem is None
    [(path, headers)] = server.seen
    assert path == "/v1/models"
    assert headers["authorization"] == "Bearer sk-openai-key"  # the key the CLI sends wins


def test_a_refusal_through_a_userinfo_url_never_shows_the_credentials():
    with RecordingModels(status=401) as server:
        problem = probe_anthropic(server.url(f"{USER}:{QUOTED}"), {"ANTHROPIC_API_KEY": "sk-ant-key"})
    assert problem is not None and "refused the key (HTTP 401)" in problem
    assert USER not in problem and QUOTED not in problem and PASSWORD not in problem
    assert f"127.0.0.1:{server.port}/v1/models" in problem


def test_a_dead_userinfo_endpoint_is_not_answering_and_never_shows_the_credentials():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    problem = probe_anthropic(f"http://{USER}:{QUOTED}@127.0.0.1:{port}", {"ANTHROPIC_API_KEY": "k"})
    assert problem is not None and "is not answering" in problem
    assert "Name or service not known" not in problem  # the host is 127.0.0.1, not user:pw@127.0.0.1
    assert USER not in problem and QUOTED not in problem


@pytest.mark.agent_cli
def test_run_with_claude_code_reaches_a_userinfo_base_url(example_skill, tmp_path):
    """The audit's command: a wrong key at a userinfo base URL is refused for the key (the
    server was reached), not for a host name that does not exist."""
    if shutil.which("claude") is None:
        pytest.skip("claude not on PATH")
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")}
    with FakeModelAPI([], api_key="sk-right-key-0123456789abcdef") as api:
        url = api.base_url.replace("http://", f"http://{USER}:{QUOTED}@")
        proc = subprocess.run([sys.executable, "-m", "skillassay", "run", str(example_skill), "--executor",
                               "claude-code", "--model", "m", "--workspace", str(tmp_path / "ws")],
                              capture_output=True, text=True, timeout=120,
                              env={**env, "ANTHROPIC_API_KEY": "sk-wrong-key-0123456789abcdef",
                                   "ANTHROPIC_BASE_URL": url})
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 2, out
    assert "refused the key (HTTP 401)" in out, out
    assert QUOTED not in out and PASSWORD not in out and "Traceback" not in out
    assert api.model_requests() == []
