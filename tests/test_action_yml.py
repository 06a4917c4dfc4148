"""action.yml and the workflows docs/ci.md gives for it agree: every input a documented step
passes is declared, every output it reads exists, no script has an expression pasted into it
(GitHub would substitute it before bash sees it: shell injection), and every expression names
an input, a step or a context that exists. The Action itself runs in tests/test_action.py."""

from __future__ import annotations

import re
from typing import Any

import yaml
from repo_paths import DOCS, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
OURS = "YOUR-ORG/skillassay@v1"


def _workflows() -> list[dict[str, Any]]:
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b.split("```", 1)[0]) for b in text.split("```yaml\n")[1:]]
    return [b for b in blocks if OURS in yaml.safe_dump(b)]


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for job in workflow["jobs"].values() for s in job["steps"]]


def test_no_script_has_an_expression_pasted_in_and_every_reference_exists() -> None:
    steps = ACTION["runs"]["steps"]
    ids = {s["id"] for s in steps if "id" in s}
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    for step in steps:
        assert "${{" not in step.get("run", ""), step.get("name")
    for name in re.findall(r"inputs\.([A-Za-z0-9_-]+)", text):
        assert name in ACTION["inputs"], name
    for step_id, _output in re.findall(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", text):
        assert step_id in ids, step_id
    assert ACTION["runs"]["using"] == "composite"
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)


def test_the_documented_workflows_use_only_what_the_action_declares() -> None:
    workflows = _workflows()
    assert len(workflows) == 3  # one run, shards + merge, the trusted comment workflow
    modes = set()
    for workflow in workflows:
        for step in _steps(workflow):
            if step.get("uses") == OURS:
                assert set(step.get("with") or {}) <= set(ACTION["inputs"]), step.get("with")
                modes.add((step.get("with") or {}).get("mode", "run"))
            for ref in re.findall(r"steps\.skillassay\.outputs\.([A-Za-z0-9_-]+)", yaml.safe_dump(step)):
                assert ref in ACTION["outputs"], ref
    assert modes == {"run", "merge", "comment"}


def test_the_main_workflow_is_complete() -> None:
    workflow = _workflows()[0]
    assert {"pull_request", "push"} <= set(workflow[True])  # PyYAML reads the bare key `on` as True
    assert workflow["permissions"]["pull-requests"] == "write"
    uses = [s.get("uses", "") for s in _steps(workflow)]
    assert uses[:2] == ["actions/checkout@v4", "actions/setup-python@v5"] and OURS in uses
    comment = _workflows()[2]
    assert list(comment[True]) == ["workflow_run"]
    assert not any("checkout" in s.get("uses", "") for s in _steps(comment))  # never the fork's code
