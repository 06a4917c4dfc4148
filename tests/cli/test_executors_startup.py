"""`skillassay executors` is quick (issue 34: 18 s under load, 1.75 CPU-s): listing what is
installed and usable asks each executor class for its availability, which needs no provider SDK.
The anthropic and openai SDKs (about 1.5 CPU-s together) load only where a client is built."""

from __future__ import annotations

import os
import subprocess
import sys

import repo_paths

SRC = repo_paths.SRC
PROBE = """
import sys
from skillassay.cli.main import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in ("anthropic", "openai", "llama_cpp", "scipy", "numpy") if m in sys.modules)
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def test_executors_lists_without_importing_provider_sdks() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run([sys.executable, "-c", PROBE, "executors"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert "anthropic" in done.stdout and "openai" in done.stdout and "local" in done.stdout, done.stdout
    heavy = [line for line in done.stderr.splitlines() if line.startswith("HEAVY=")]
    assert heavy == ["HEAVY="], done.stderr


def test_the_sdk_is_still_there_when_a_client_is_built() -> None:
    from skillassay.executors.anthropic_api import is_transient as anthropic_transient
    from skillassay.executors.openai_api import is_transient as openai_transient

    assert not anthropic_transient(ValueError("x")) and not openai_transient(ValueError("x"))
    assert "anthropic" in sys.modules and "openai" in sys.modules
