"""Shared fixtures: a copy of the bundled example skill in tmp, an empty trial work dir, and the
viewer's test server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported in the fixture: the viewer pulls in matplotlib, which most tests never need
    from skillassay.viewer.server import ViewerServer

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


@pytest.fixture
def viewer_server(workspace: dict[str, Path]) -> Iterator[ViewerServer]:
    """The viewer serving iteration 2 of test_viewer.py's `workspace` (a module must define or import
    that fixture to use this one), with iteration 1 as previous. The workspace is session-scoped and
    shared, so feedback.json is removed before and after: every test starts with no feedback saved."""
    from skillassay.viewer.server import start_server

    it2 = workspace["it2"]
    (it2 / "feedback.json").unlink(missing_ok=True)
    srv, _ = start_server(it2, workspace["it1"])
    yield srv
    srv.shutdown()
    srv.server_close()
    (it2 / "feedback.json").unlink(missing_ok=True)
