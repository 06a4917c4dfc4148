"""Shared fixtures: a copy of the bundled example skill in tmp, an empty trial work dir, and a
CLI runner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "acme-vpn"


@pytest.fixture
def example_skill(tmp_path: Path) -> Path:
    """A private copy of examples/acme-vpn (tests may edit it)."""
    dest = tmp_path / "skills" / "acme-vpn"
    shutil.copytree(EXAMPLE, dest)
    return dest


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty work dir for one trial (tmp_path/work)."""
    path = tmp_path / "work"
    path.mkdir()
    return path
