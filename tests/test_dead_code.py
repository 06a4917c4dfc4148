"""Dead and test-only code has left the package (issue 35 item 5; the audit found these still
there): no function of these names is defined anywhere under src/. The confidence sequence lives
with its test (tests/run/test_confidence_sequence.py)."""

from __future__ import annotations

import ast

import repo_paths

GONE = {"apply_budget", "confidence_sequence", "predmix_bets"}


def test_dead_and_test_only_functions_are_not_in_the_package() -> None:
    defined = {f"{path.relative_to(repo_paths.SRC)}:{node.name}"
               for path in (repo_paths.SRC / "skillassay").rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in GONE}
    assert not defined, sorted(defined)
