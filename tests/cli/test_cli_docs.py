"""docs/cli.md is the CLI's --help output, checked in; these tests fail when it drifts from the
docstrings and option help, and prove the rendering ignores the caller's terminal and environment."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import repo_paths

REPO = repo_paths.REPO


def _load_cli_docs() -> ModuleType:
    """scripts/ is not a package: load scripts/cli_docs.py by path (once per session)."""
    name = "skillassay_scripts_cli_docs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "cli_docs.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


cli_docs = _load_cli_docs()


@pytest.fixture(scope="module")
def rendered() -> str:
    return cli_docs.render_doc()


def test_docs_cli_md_matches_help(rendered: str) -> None:
    doc = REPO / "docs" / "cli.md"
    checked_in = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if rendered != checked_in:  # pytest.fail, not assert: pytest's own string diff would bury the message
        pytest.fail("docs/cli.md is stale: the CLI's --help output changed. Run `python scripts/cli_docs.py` and "
                    "commit docs/cli.md.\n" + cli_docs.stale_diff(rendered, checked_in), pytrace=False)


def test_every_command_has_a_section(rendered: str) -> None:
    """A command added to the app shows up in the page without anyone listing it."""
    for path in cli_docs.command_paths():
        assert f"## `{' '.join(['skillassay', *path])}`\n" in rendered
    assert ["history", "record"] in cli_docs.command_paths()


def test_rendering_ignores_terminal_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What typer read at import (TERMINAL_WIDTH, FORCE_COLOR, GITHUB_ACTIONS) and what rich reads per
    call (COLUMNS, TERM, NO_COLOR, TTY_COMPATIBLE) must not change a byte."""
    import typer.rich_utils as rich_utils

    plain = cli_docs.render_help(["run"])
    monkeypatch.setattr(rich_utils, "MAX_WIDTH", 40)
    monkeypatch.setattr(rich_utils, "FORCE_TERMINAL", True)
    monkeypatch.setattr(rich_utils, "COLOR_SYSTEM", "truecolor")
    for key, value in {"COLUMNS": "40", "TERM": "dumb", "FORCE_COLOR": "1", "TTY_COMPATIBLE": "1", "CI": "true"}.items():
        monkeypatch.setenv(key, value)
    assert cli_docs.render_help(["run"]) == plain
    assert rich_utils.MAX_WIDTH == 40  # restored after rendering, so other tests see what they set


def test_check_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], rendered: str) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(rendered.replace("Sampling temperature.", "Sampling temprature."), encoding="utf-8")
    monkeypatch.setattr(cli_docs, "DOC", stale)
    assert cli_docs.main(["--check"]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert any(x.startswith("-") and "Sampling temprature." in x for x in lines), err
    assert any(x.startswith("+") and "Sampling temperature." in x for x in lines), err
    assert "run `python scripts/cli_docs.py`" in err


def test_schema_help_lists_every_kind() -> None:
    """`schema`'s help names the kinds without importing the models (start-up time): the list
    must be MODELS' keys, in order."""
    from skillassay.cli.main import SCHEMA_KINDS
    from skillassay.models import MODELS

    assert tuple(MODELS) == SCHEMA_KINDS
