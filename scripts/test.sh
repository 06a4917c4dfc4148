#!/usr/bin/env bash
# The test command: installs what the tests need (idempotent; quick when already there),
# then runs the linters and every test tier. CI runs exactly this.
#   bash scripts/test.sh            every tier, on every core (pytest --all -n auto)
#   bash scripts/test.sh -x -k foo  extra arguments go to pytest
# For the fast tier alone while developing: `pytest` (see "Run the tests" in the README).
set -euo pipefail
cd "$(dirname "$0")/.."

# The agent CLIs the tests drive, at the versions their behaviour was checked against
# (tests/fixtures/agent-cli records their output; a new release is adopted deliberately).
CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0

# llama-cpp-python builds from source (~4-6 min, then pip caches the wheel). A native build
# crashes on batched decoding on some AMX CPUs (see executors/local.py), so on x86-64 build
# for a portable AVX2 target instead; the local executor probes and falls back anyway.
if ! python3 -c "import llama_cpp" >/dev/null 2>&1 && [ "$(uname -m)" = x86_64 ]; then
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF}"
fi
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"

# Debian packages the real parts come from: Chromium (viewer tests), bubblewrap and Docker
# (sandboxed trials). Installed when missing and we may (root with apt-get).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The real agent CLIs at their pinned versions, driven in tests against a loopback fake model API.
installed() { npm ls -g --depth=0 "$1" 2>/dev/null | grep -q "$1@$2\$"; }
if command -v npm >/dev/null 2>&1 && { ! installed @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" || ! installed @openai/codex "$CODEX_VERSION"; }; then
  npm install -g --silent "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >/dev/null
fi

ruff check src tests benchmarks scripts
lint-imports  # the pipeline's layering and no import cycles (contracts in pyproject.toml)
mypy
# Twice the cores: most tests wait on subprocesses, servers and agent CLIs rather than compute.
# --durations: the log names the slowest tests, so a test that grows shows up in CI.
python3 -m pytest --all -n "$(( $(nproc) * 2 ))" -p no:cacheprovider -q --durations=20 "$@"
