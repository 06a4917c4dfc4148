"""The one plugin registry (src/skillassay/plugins.py): every kind found by entry point, the
built-ins included; a name two distributions register is an error naming both, never a silent
pick; the allow-list keeps other distributions' plugins out."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from plugin_support import on_path, write_distribution

from skillassay import plugins
from skillassay.errors import InputError

ECHO_TWIN = {"skillassay.executors": {"echo": "acme_twin:Echo"}}
TWIN_CODE = {"acme_twin.py": "from skillassay.executors.echo import EchoExecutor as Echo\n"}


def test_every_kind_has_its_built_ins_registered_by_entry_point() -> None:
    expected = {
        "executors": {"local", "echo", "openai", "anthropic", "command", "claude-code", "codex"},
        "assertions": {"contains", "json_valid", "file_exists", "python", "similar"},
        "judges": {"local", "openai", "anthropic"},
        "proposers": {"local", "openai", "anthropic", "scripted"},
        "backends": {"local", "ray"},
        "sandboxes": {"none", "bwrap", "docker"},
    }
    for kind, names in expected.items():
        found = plugins.registered(kind)
        assert names <= set(found), kind
        assert {found[n].distribution for n in names} == {"skillassay"}, kind
    assert plugins.find("judges", "openai").extras == ("openai",)


def test_a_name_two_distributions_register_is_an_error_naming_both(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(plugins.ALLOW_ENV, raising=False)
    write_distribution(tmp_path, "acme-twin", ECHO_TWIN, TWIN_CODE, version="2.5")
    with on_path(tmp_path):
        with pytest.raises(InputError) as caught:
            plugins.names("executors")
        message = str(caught.value)
        assert "'echo'" in message and "skillassay 0.1.0" in message and "acme-twin 2.5" in message
        assert plugins.ALLOW_ENV in message
        assert "contains" in plugins.names("assertions")  # the other kinds are not affected


def test_the_cli_exits_2_on_a_collision_without_a_traceback(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(plugins.ALLOW_ENV, raising=False)
    write_distribution(tmp_path, "acme-twin", ECHO_TWIN, TWIN_CODE)
    with on_path(tmp_path):
        result = invoke("executors")
    assert result.exit_code == 2, result.output
    assert "acme-twin" in result.output and "skillassay" in result.output and "Traceback" not in result.output


def test_the_allow_list_keeps_other_distributions_out(tmp_path: Path, monkeypatch) -> None:
    write_distribution(tmp_path, "acme-twin", ECHO_TWIN | {"skillassay.judges": {"acme": "acme_twin:Echo"}}, TWIN_CODE)
    with on_path(tmp_path):
        monkeypatch.setenv(plugins.ALLOW_ENV, "skillassay")
        assert plugins.find("executors", "echo").distribution == "skillassay"
        assert plugins.find("judges", "acme") is None
        monkeypatch.setenv(plugins.ALLOW_ENV, "Acme_Twin")  # names compare normalised, as pip's do
        assert plugins.names("executors") == ["echo"] and plugins.find("executors", "echo").distribution == "acme-twin"


def test_a_distribution_registering_one_name_twice_is_not_a_collision(tmp_path: Path, monkeypatch) -> None:
    """Two groups of one distribution may share a name (the `local` executor, judge, proposer)."""
    monkeypatch.setenv(plugins.ALLOW_ENV, "skillassay")
    assert plugins.find("executors", "local") and plugins.find("judges", "local") and plugins.find("proposers", "local")


def test_unknown_names_and_kinds() -> None:
    assert "unknown judge" in plugins.unknown("judges", "opneai") and "openai" in plugins.unknown("judges", "opneai")
    with pytest.raises(ValueError, match="unknown plugin kind"):
        plugins.names("widgets")


def test_metadata_older_than_the_code_says_to_reinstall(monkeypatch) -> None:
    """An editable install made before a kind was added has no entry points for it: the
    message says so instead of calling every built-in name unknown."""
    from importlib.metadata import EntryPoints

    stale = EntryPoints(ep for ep in plugins.group("skillassay.executors"))  # judges missing, as before
    monkeypatch.setattr(plugins, "_installed", lambda: stale)
    plugins._index.cache_clear()
    try:
        assert "echo" in plugins.names("executors")
        with pytest.raises(InputError, match="predates this code; reinstall it"):
            plugins.names("judges")
    finally:
        monkeypatch.undo()
        plugins._index.cache_clear()
