"""Checks on structured (JSON) answers."""

from __future__ import annotations

import json

from skillassay.assertions.base import AssertionPlugin, RunView, Verdict, quote


def extract_json_text(text: str) -> str:
    """Models often wrap JSON in a ``` fence; grade the fenced part when there is one."""
    stripped = text.strip()
    if stripped.startswith("```"):
        body = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        return body.rsplit("```", 1)[0].strip()
    return stripped


class JsonValid(AssertionPlugin):
    type_name = "json_valid"

    def describe(self) -> str:
        return "The output is valid JSON"

    def check(self, run: RunView) -> Verdict:
        text = extract_json_text(run.final_text)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return Verdict(False, f"Not JSON ({exc.msg} at line {exc.lineno} col {exc.colno}): \"{quote(text, exc.pos, exc.pos)}\"")
        return Verdict(True, f"Parsed a JSON {type(value).__name__}: \"{quote(text, 0, 0, 80)}\"")
