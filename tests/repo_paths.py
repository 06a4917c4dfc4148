"""Where things are in the repository, for tests in any sub-folder of tests/ (one place, so a
moved test file cannot point at the wrong folder)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SRC = REPO / "src"
DOCS = REPO / "docs"
BENCHMARKS = REPO / "benchmarks"
EXAMPLE = REPO / "examples" / "acme-vpn"
FIXTURES = TESTS / "fixtures"
ARTIFACTS = REPO / "test-artifacts"
