"""The assertion interface: a typed expectation checked by a program.

A plugin is constructed from the eval's Assertion object (validating its parameters, so a bad
configuration fails before any trial runs) and checks a RunView, returning a Verdict whose
evidence quotes what was found. `negate` is applied by the grader, not by plugins."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from skillassay.models import Assertion, Metrics, Timing


class AssertionConfigError(ValueError):
    """A parameter of an assertion is missing or wrong (message says which and why)."""


@dataclass(frozen=True)
class RunView:
    """What an assertion may look at: the final answer, the files and the run's figures."""

    final_text: str
    outputs_dir: Path
    metrics: Metrics
    timing: Timing
    run_dir: Path
    prompt: str = ""
    # The eval set's folder: where schema_file and python check modules are looked up.
    eval_dir: Path | None = None
    # The files in outputs/ (relative) when the caller has just listed them (the trial loop:
    # tidy_outputs), so grading need not look on disk again; None: look.
    listed_outputs: frozenset[str] | None = None
    # A multi-turn trial's (prompt, answer) for each turn, in order (empty: a single turn). An
    # expectation of turn k is checked on a view whose final_text is turn k's answer.
    turn_answers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Verdict:
    passed: bool
    evidence: str


def quote(text: str, start: int = 0, end: int | None = None, width: int = 60) -> str:
    """A short excerpt around text[start:end], for evidence that shows what was found."""
    end = start if end is None else end
    lo, hi = max(0, start - width), min(len(text), end + width)
    snippet = text[lo:hi].replace("\n", " ")
    return ("…" if lo > 0 else "") + snippet + ("…" if hi < len(text) else "")


class AssertionPlugin(ABC):
    type_name: ClassVar[str]
    # Whether check() may open files in the run folder (outputs/, transcripts): then the
    # trial's files are on disk before it runs (store/writebehind.py). True unless a plugin
    # says otherwise, so a third-party check that reads files is never handed a half-written run.
    reads_run_folder: ClassVar[bool] = True

    # Old parameter name -> the name related assertions share now: the old one keeps working,
    # noted in `deprecated` (validate and run show it, naming the eval and the assertion).
    renamed: ClassVar[dict[str, str]] = {}

    def __init__(self, spec: Assertion) -> None:
        self.spec = spec
        self.deprecated: list[str] = []
        self.params: dict[str, Any] = self.current_names(spec.params)
        self.configure()

    def current_names(self, params: dict[str, Any]) -> dict[str, Any]:
        """params with each old name given as its new one (the eval set itself is unchanged, so
        its fingerprint and the judge cache are too)."""
        out = dict(params)
        for old, new in self.renamed.items():
            if old not in out:
                continue
            if new in out:
                raise AssertionConfigError(f"'{self.spec.type}' takes '{new}' only: '{old}' is the old name of '{new}'")
            out[new] = out.pop(old)
            self.deprecated.append(f"'{self.spec.type}' parameter '{old}' is deprecated: write '{new}' "
                                   "(the old name still works)")
        return out

    def configure(self) -> None:  # noqa: B027 - optional hook
        """Validate self.params; raise AssertionConfigError naming the parameter."""

    def require(self, key: str, kind: type | tuple[type, ...]) -> Any:
        if key not in self.params:
            raise AssertionConfigError(f"'{self.spec.type}' needs parameter '{key}'")
        value = self.params[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, float, (int, float)):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise AssertionConfigError(f"'{self.spec.type}' parameter '{key}' must be {names}, got {value!r}")
        return value

    @abstractmethod
    def describe(self) -> str:
        """Human-readable statement used as `text` when the eval gives none."""

    @abstractmethod
    def check(self, run: RunView) -> Verdict: ...
