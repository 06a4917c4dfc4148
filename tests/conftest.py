"""Shared fixtures: a copy of the bundled example skill in tmp, an empty trial work dir, and the
viewer's sample workspaces (built once per session) and test servers."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from llama_server_support import llama_server  # noqa: F401 - one real OpenAI-compatible server per worker

if TYPE_CHECKING:  # imported in the fixtures: the viewer pulls in matplotlib, which most tests never need
    from skillassay.viewer.server import ViewerServer

# Hermetic plugins: only skillassay's own load (src/skillassay/plugins.py), whatever else is
# installed here, in this process and in every child a test starts.
os.environ["SKILLASSAY_PLUGINS"] = "skillassay"

# One BLAS thread per process (set before numpy loads OpenBLAS, inherited by every child): the
# suite runs 4 xdist workers on 2 cores, and each worker's OpenBLAS threads spin waiting for a
# core another worker holds. Measured here under load: the paired-coverage simulation took 13.2
# CPU-s and 35 s with two BLAS threads, 4.5 CPU-s and 9 s with one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# llama.cpp's idle OpenMP threads sleep rather than spin, as executors/llama_runtime.py sets for
# the processes that load the model, here also for the llama.cpp server tests start.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "acme-vpn"

# The tiers a plain `pytest` leaves out: each needs a heavy real part (a model, a cluster, a
# browser, an agent CLI, a sandbox) or simulates for a while. Markers are listed in pyproject.toml.
SLOW_TIERS = ("model", "ray", "browser", "agent_cli", "sim", "sandbox", "slow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--all", action="store_true", dest="all_tiers",
                     help="run every tier (model, ray, browser, agent_cli, sim, sandbox, slow), not only the fast one")


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the slow tiers unless --all or an explicit -m says otherwise: a plain `pytest`
    is the fast tier a developer runs after every change."""
    group_shared_state(items)
    if config.getoption("all_tiers") or config.getoption("markexpr"):
        return
    kept, slow = [], []
    for item in items:
        (slow if any(item.get_closest_marker(t) for t in SLOW_TIERS) else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept
        config.stash[_DESELECTED] = len(slow)


_DESELECTED = pytest.StashKey[int]()
TESTS = Path(__file__).resolve().parent


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The module- and session-scoped fixtures of this suite (not pytest's) the test uses, named
    by scope: a session fixture by its name, a module fixture by its module and name."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    found = []
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if not defs or defs[-1].scope not in ("module", "session"):
            continue
        code = getattr(defs[-1].func, "__code__", None)
        if code is None or not Path(code.co_filename).resolve().is_relative_to(TESTS):
            continue  # pytest's and its plugins' own (tmp_path_factory, worker_id)
        found.append(name if defs[-1].scope == "session" else f"{item.nodeid.split('::')[0]}::{name}")
    return found


def group_shared_state(items: list[pytest.Item]) -> None:
    """Tests that share an expensive fixture of wider scope (sample workspaces built by real runs,
    a Ray cluster, a llama.cpp server, a docker daemon, a venv with skillassay installed) go to one
    xdist group, so with `--dist loadgroup` (pyproject.toml) one worker builds it once instead of
    every worker that happens to draw one of its tests. Tests sharing any such fixture are
    one group (union-find over the fixtures)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    uses = [(item, _shared_fixtures(item)) for item in items]
    for _, names in uses:
        for other in names[1:]:
            parent[root(other)] = root(names[0])
    for item, names in uses:
        if names:
            item.add_marker(pytest.mark.xdist_group(root(names[0])))


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("all_tiers") or config.getoption("markexpr"):
        return None
    return f"fast tier: the {', '.join(SLOW_TIERS)} tiers are left out; `pytest --all` runs them too"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    n = config.stash.get(_DESELECTED, 0)
    if n:
        terminalreporter.write_line(f"fast tier: {n} tests of the slow tiers were left out (`pytest --all` runs every tier)")


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


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """viewer_samples.build_workspace, once per session for every viewer test module: two
    iterations of the example skill, extra output kinds, feedback left on iteration 1. Tests that
    change it must undo the change."""
    from viewer_samples import build_workspace

    return build_workspace(tmp_path_factory.mktemp("viewer"))


@pytest.fixture(scope="session")
def evil_workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """viewer_samples.build_evil_workspace, once per session: the injection payloads everywhere
    the viewer shows text."""
    from viewer_samples import build_evil_workspace

    return build_evil_workspace(tmp_path_factory.mktemp("evil"))


@contextmanager
def serving(iteration: Path, previous: Path | None) -> Iterator[ViewerServer]:
    """The viewer on an ephemeral loopback port, stopped and closed on exit."""
    from skillassay.viewer.server import start_server

    srv, _ = start_server(iteration, previous)
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def viewer_server(workspace: dict[str, Path]) -> Iterator[ViewerServer]:
    """The viewer serving iteration 2 of `workspace`, with iteration 1 as previous. The workspace
    is session-scoped and shared, so feedback.json is removed before and after: every test starts
    with no feedback saved."""
    it2 = workspace["it2"]
    (it2 / "feedback.json").unlink(missing_ok=True)
    with serving(it2, workspace["it1"]) as srv:
        yield srv
    (it2 / "feedback.json").unlink(missing_ok=True)


@pytest.fixture
def evil_viewer_server(evil_workspace: dict[str, Path]) -> Iterator[ViewerServer]:
    """The viewer serving iteration 2 of `evil_workspace`, with iteration 1 (whose feedback holds
    the payloads) as previous."""
    with serving(evil_workspace["it2"], evil_workspace["it1"]) as srv:
        yield srv
