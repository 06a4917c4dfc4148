"""A config file's `backend` and `sandbox` name plugins of the one registry (plugins.py), the
way `executor` does: a third-party distribution's backend and sandbox are picked from the
config, and a name no installed plugin has is exit 2 naming the config file, the key and the
names that are installed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runner import invoke
from plugin_support import on_path, write_distribution

from skillassay import plugins

# A real distribution as pip leaves one: a sandbox that marks every confined argv (the agent
# sees ACME_JAIL=1 only if the wrap ran) and a backend that counts what it executed.
ACME_CODE = {"acme_infra.py": '''
import contextlib
from dataclasses import replace

from skillassay.run.backends import Backend

EXECUTED = []


class Jail:
    @staticmethod
    def check(spec, probe):
        return replace(spec, chosen="checked by acme")

    @staticmethod
    @contextlib.contextmanager
    def wrap(spec, argv, *, cwd, writable, readonly, env):
        yield ["env", "ACME_JAIL=1", *argv]


class Counting(Backend):
    name = "acme"

    def execute(self, trial, *args, **kwargs):
        EXECUTED.append(trial)
        return super().execute(trial, *args, **kwargs)
'''}
ACME_ENTRY_POINTS = {"skillassay.backends": {"acme": "acme_infra:Counting"},
                     "skillassay.sandboxes": {"acme-jail": "acme_infra:Jail"}}


def one_eval_skill(example_skill: Path, **config: object) -> Path:
    """The example skill cut to one eval and one trial, its config given `config` on top."""
    evals_file = example_skill / "evals" / "evals.json"
    evals = json.loads(evals_file.read_text())
    evals["evals"] = evals["evals"][:1]
    evals_file.write_text(json.dumps(evals))
    config_file = example_skill / "evals" / "benchmark_config.json"
    config_file.write_text(json.dumps(json.loads(config_file.read_text()) | {"trials_per_eval": 1} | config))
    return config_file


@pytest.mark.slow  # a real run, in-process
def test_a_third_party_backend_and_sandbox_are_picked_from_the_config(example_skill: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_distribution(tmp_path / "site", "acme-infra", ACME_ENTRY_POINTS, ACME_CODE)
    monkeypatch.setenv(plugins.ALLOW_ENV, "skillassay,acme-infra")
    one_eval_skill(example_skill, executor="command", backend="acme", sandbox="acme-jail")
    with on_path(tmp_path / "site"):
        result = invoke("run", example_skill, "--workspace", tmp_path / "ws", "-o",
                        'argv=["bash", "-c", "echo jail=${ACME_JAIL:-absent}"]')
        module = sys.modules.get("acme_infra")
    assert result.exit_code in (0, 1, 3), result.output  # a verdict (here INCONCLUSIVE: one eval)
    assert module is not None
    executed = list(module.EXECUTED)
    iteration = json.loads((tmp_path / "ws" / "iteration-1" / "iteration.json").read_text())
    assert iteration["sandbox"] == {"kind": "acme-jail", "chosen": "checked by acme"}
    answers = sorted((tmp_path / "ws" / "iteration-1").glob("eval-*/*/run-*/outputs/answer.md"))
    assert len(answers) == len(executed) == 2  # both arms' trials, through the acme backend
    assert all(a.read_text().strip() == "jail=1" for a in answers)


@pytest.mark.parametrize(("config", "key", "name", "known"), [
    ({"backend": "acme"}, "$.backend", "acme", "local, ray"),
    ({"sandbox": "acme-jail"}, "$.sandbox", "acme-jail", "bwrap, docker, none"),
    ({"sandbox": {"kind": "acme-jail"}}, "$.sandbox.kind", "acme-jail", "bwrap, docker, none"),
])
def test_an_unknown_backend_or_sandbox_in_the_config_is_exit_2_naming_file_key_and_known_names(
        example_skill: Path, tmp_path: Path, config: dict, key: str, name: str, known: str) -> None:
    config_file = one_eval_skill(example_skill, executor="echo", **config)
    for command in (("validate", example_skill), ("run", example_skill, "--workspace", tmp_path / "ws")):
        result = invoke(*command)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        text = " ".join(result.output.split())
        assert str(config_file) in text and key in text and f"'{name}'" in text and known in text
    assert not (tmp_path / "ws").exists()
