#!/usr/bin/env bash
# The test command: installs what the tests need (idempotent; quick when already there),
# then runs the linter and the whole test suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# llama-cpp-python builds from source (~4 min, then pip caches the wheel). A native build
# crashes on batched decoding on some AMX CPUs (see executors/local.py), so on x86-64 build
# for a portable AVX2 target instead; the local executor probes and falls back anyway.
if ! python3 -c "import llama_cpp" >/dev/null 2>&1 && [ "$(uname -m)" = x86_64 ]; then
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF}"
fi
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"

# Real headless Chromium for the viewer tests (Debian package; Playwright drives it).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# The sandboxes the trials run in (tests/test_sandbox*.py): bubblewrap, and dockerd for the
# docker sandbox (the tests start a private daemon; images are built offline, nothing is pulled).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && { ! command -v bwrap >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; }; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap docker.io >/dev/null
fi
# The real agent CLIs, driven in tests against a loopback fake model API.
if command -v npm >/dev/null 2>&1 && { ! command -v claude >/dev/null 2>&1 || ! command -v codex >/dev/null 2>&1; }; then
  npm install -g --silent @anthropic-ai/claude-code @openai/codex >/dev/null
fi

ruff check src tests benchmarks scripts
lint-imports  # the pipeline's layering and no import cycles (contracts in pyproject.toml)
mypy
python3 -m pytest -q -p no:cacheprovider
