"""A skill folder as the executors need it: name, description and body of SKILL.md."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skillassay.errors import InputError, Problem
from skillassay.store.jsonio import MAX_DEPTH, JSONLimitError, check_limits

MAX_FRONTMATTER_CHARS = 100_000  # the spec's fields fit in a few KB


class _TooDeep(yaml.YAMLError):
    pass


class FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader with limits: PyYAML's composer recurses once per nesting level (RecursionError
    near 1,000), and aliases let a few lines stand for billions of nodes once anything walks
    them; frontmatter needs neither deep nesting nor aliases."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise _TooDeep(f"line {mark.line + 1}: YAML aliases (*name) are not allowed in frontmatter")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _TooDeep(f"line {mark.line + 1}: nested too deeply (more than {MAX_DEPTH} levels)")
            return super().compose_node(parent, index)  # type: ignore[arg-type]  # stubs say Node for index; we pass on what the composer gave us
        finally:
            self._depth -= 1


@dataclass(frozen=True)
class Skill:
    path: Path
    name: str
    description: str
    body: str
    frontmatter: dict

    @property
    def skill_md(self) -> Path:
        return self.path / "SKILL.md"


NAME_MAX = 64
_NAME_CHARS = re.compile(r"[a-z0-9-]+")


def name_problems(value: Any, folder: str | None = None) -> list[str]:
    """The Agent Skills name rule, the one copy of it: `validate` reports these and `run` refuses
    them, because the name becomes a path (`<name>-workspace`, `.claude/skills/<name>`) and a
    name like `/home/me` or `..` would point those outside where we mean to write and delete.
    `folder` is the skill folder's name, which the spec wants equal to the name; None skips that
    rule (a snapshot lives in `skill-snapshot/`)."""
    if not isinstance(value, str):
        kind = "nothing (null)" if value is None else type(value).__name__
        return [f"expected a string of a-z, 0-9 and '-', got {kind}"]
    out = []
    if not 1 <= len(value) <= NAME_MAX:
        out.append(f"must be 1-{NAME_MAX} characters, got {len(value)}")
    if value and not _NAME_CHARS.fullmatch(value):
        bad = sorted({c for c in value if not re.fullmatch(r"[a-z0-9-]", c)})
        out.append(f"only lowercase a-z, 0-9 and '-' are allowed, found {''.join(bad)!r}")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not start or end with '-'")
    if "--" in value:
        out.append("must not contain '--'")
    if value and folder is not None and value != folder:
        out.append(f"must equal the skill folder's name {folder!r}, got {value!r}")
    return out


def split_frontmatter(text: str, file: Path) -> tuple[dict, str]:
    """SKILL.md = '---' YAML frontmatter '---' markdown body."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InputError.one(file, "frontmatter", "SKILL.md must start with a '---' YAML frontmatter block")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            raw = "".join(lines[1:i])
            body = "".join(lines[i + 1 :])
            break
    else:
        raise InputError.one(file, "frontmatter", "frontmatter block is not closed by '---'")
    if len(raw) > MAX_FRONTMATTER_CHARS:
        raise InputError.one(file, "frontmatter", f"{len(raw):,} characters is over the {MAX_FRONTMATTER_CHARS:,} limit")
    try:
        data = yaml.load(raw, Loader=FrontmatterLoader) or {}  # noqa: S506 - a SafeLoader subclass
        check_limits(data, strings=True)  # a "\ud800" escape gives a str no file can hold
    except _TooDeep as exc:
        raise InputError.one(file, "frontmatter", str(exc)) from None
    except yaml.YAMLError as exc:
        raise InputError.one(file, "frontmatter", f"invalid YAML: {exc}") from None
    except JSONLimitError as exc:
        raise InputError.one(file, f"frontmatter {exc.location}", exc.message) from None
    if not isinstance(data, dict):
        raise InputError.one(file, "frontmatter", "expected a YAML mapping of keys to values")
    return data, body


def load_skill(path: Path) -> Skill:
    path = Path(path)
    md = path / "SKILL.md"
    if not path.is_dir():
        raise InputError.one(path, "", "skill folder not found (expected a folder with SKILL.md)")
    if not md.is_file():
        raise InputError.one(md, "", "file not found: a skill folder must contain SKILL.md")
    try:
        text = md.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError.one(md, "", "not UTF-8 text") from None
    fm, body = split_frontmatter(text, md)
    name, desc = fm.get("name"), fm.get("description")
    if not isinstance(name, str) or not name:
        raise InputError.one(md, "name", "required: the skill's name (a-z0-9-)")
    if problems := name_problems(name):
        raise InputError([Problem(str(md), "name", m) for m in problems])
    if not isinstance(desc, str) or not desc:
        raise InputError.one(md, "description", "required: what the skill does and when to use it")
    return Skill(path=path.resolve(), name=name, description=desc, body=body.strip(), frontmatter=fm)
