"""Checks on structured (JSON) answers: the final answer, or an output file via `file`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillassay.assertions.base import AssertionConfigError, AssertionPlugin, RunView, Verdict, quote
from skillassay.assertions.paths import UsesEvalDir, inside, output_file, relative_param

_MISSING = object()


def extract_json_text(text: str) -> str:
    """Models often wrap JSON in a ``` fence; grade the fenced part when there is one."""
    stripped = text.strip()
    if stripped.startswith("```"):
        body = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        return body.rsplit("```", 1)[0].strip()
    return stripped


class JsonSource(AssertionPlugin):
    """Base for JSON checks: parses the answer, or outputs/<file> when `file` is given."""

    def configure(self) -> None:
        self.file: str | None = None
        if "file" in self.params:
            self.file = relative_param(self.spec.type, "file", self.require("file", str))

    @property
    def where(self) -> str:
        return f"outputs/{self.file}" if self.file else "the output"

    def load(self, run: RunView) -> tuple[Any, Verdict | None]:
        """(value, None) on success, else (_MISSING, failing verdict quoting the bad text)."""
        if self.file:
            path, why = output_file(run, self.file)
            if path is None:
                return _MISSING, Verdict(False, why)
            text = path.read_text(encoding="utf-8", errors="replace")
        else:
            text = extract_json_text(run.final_text)
        try:
            return json.loads(text), None
        except json.JSONDecodeError as exc:
            return _MISSING, Verdict(False, f"{self.where} is not JSON ({exc.msg} at line {exc.lineno} "
                                            f"col {exc.colno}): \"{quote(text, exc.pos, exc.pos)}\"")


class JsonValid(JsonSource):
    type_name = "json_valid"

    def describe(self) -> str:
        return f"{self.where.capitalize()} is valid JSON"

    def check(self, run: RunView) -> Verdict:
        value, failed = self.load(run)
        if failed:
            return failed
        return Verdict(True, f"Parsed a JSON {type(value).__name__}: {quote(json.dumps(value), 0, 0, 80)}")


class JsonSchema(JsonSource, UsesEvalDir):
    """`schema` inline, or `schema_file` relative to the eval set folder; checked with the
    `jsonschema` package (the draft is taken from the schema's $schema, default latest)."""

    type_name = "json_schema"

    def configure(self) -> None:
        super().configure()
        has_inline, has_file = "schema" in self.params, "schema_file" in self.params
        if has_inline == has_file:
            raise AssertionConfigError("'json_schema' needs exactly one of 'schema' (an object) or 'schema_file'")
        self.schema_file: str | None = None
        self.schema: dict[str, Any] | None = None
        if has_inline:
            self.set_schema(self.require("schema", dict), "inline schema")
        else:
            self.schema_file = relative_param("json_schema", "schema_file", self.require("schema_file", str))

    def bind_eval_dir(self, eval_dir: Path) -> None:
        super().bind_eval_dir(eval_dir)
        if self.schema_file is None:
            return
        path = eval_dir / self.schema_file
        if not inside(eval_dir, path) or not path.is_file():
            raise AssertionConfigError(f"'json_schema' schema_file {self.schema_file!r} not found in {eval_dir}")
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AssertionConfigError(f"'json_schema' schema_file {self.schema_file!r} is not JSON: {exc}") from None
        if not isinstance(schema, dict):
            raise AssertionConfigError(f"'json_schema' schema_file {self.schema_file!r} must hold a JSON object")
        self.set_schema(schema, self.schema_file)

    def set_schema(self, schema: dict[str, Any], label: str) -> None:
        from jsonschema import exceptions, validators

        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except exceptions.SchemaError as exc:
            raise AssertionConfigError(f"'json_schema' {label} is not a valid JSON Schema: {exc.message}") from None
        self.schema, self.validator = schema, cls(schema)

    def describe(self) -> str:
        label = self.schema_file or "the given schema"
        return f"{self.where.capitalize()} is JSON valid against {label}"

    def check(self, run: RunView) -> Verdict:
        if self.schema is None:
            raise RuntimeError("schema_file was never loaded: compile with grade.compile_expectations")
        value, failed = self.load(run)
        if failed:
            return failed
        errors = sorted(self.validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if not errors:
            return Verdict(True, f"Valid against the schema: {quote(json.dumps(value), 0, 0, 80)}")
        first = errors[0]
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
        return Verdict(False, f"{len(errors)} schema error(s); first at {where}: {first.message}")


class JsonPath(JsonSource):
    """`path` like `a.b[0].c` (or `$.a.b[0].c`), and `equals`: the JSON value expected there.

    Paths are parsed by jsonpath-ng (maintained, pure Python, no dependencies) rather than by
    hand, so quoting (`"x-y"`), wildcards and the `$` prefix behave as users of JSONPath expect."""

    type_name = "json_path"

    def configure(self) -> None:
        super().configure()
        from jsonpath_ng import parse

        self.path: str = self.require("path", str)
        if "equals" not in self.params:
            raise AssertionConfigError("'json_path' needs parameter 'equals' (the JSON value expected at the path)")
        self.expected = self.params["equals"]
        try:
            self.expr = parse(self.path)
        except Exception as exc:  # jsonpath-ng raises JsonPathParserError, and plain Exception from its lexer
            raise AssertionConfigError(f"'json_path' path {self.path!r} does not parse: {exc}") from None

    def describe(self) -> str:
        return f"{self.where.capitalize()} has {self.path} == {json.dumps(self.expected)}"

    def check(self, run: RunView) -> Verdict:
        value, failed = self.load(run)
        if failed:
            return failed
        found = [m.value for m in self.expr.find(value)]
        if not found:
            return Verdict(False, f"Nothing at {self.path} in {quote(json.dumps(value), 0, 0, 80)}")
        got = found[0] if len(found) == 1 else found
        ok = got == self.expected and isinstance(got, bool) == isinstance(self.expected, bool)  # true != 1 in JSON
        return Verdict(ok, f"{self.path} is {json.dumps(got)}" + ("" if ok else f", expected {json.dumps(self.expected)}"))
