"""Executor plugins, discovered through the `skillassay.executors` entry-point group (the
built-ins are registered the same way as third-party ones)."""

from __future__ import annotations

import os
from importlib.metadata import entry_points

from skillassay.errors import InputError
from skillassay.executors.base import (
    Executor,
    ExecutorSettings,
    TransientError,
    TrialRequest,
    TrialResult,
    Usage,
)

GROUP = "skillassay.executors"


def _allowed(name: str) -> bool:
    """SKILLASSAY_EXECUTORS (comma list) restricts which plugins load, for hermetic tests."""
    allow = os.environ.get("SKILLASSAY_EXECUTORS")
    return allow is None or name in {a.strip() for a in allow.split(",")}


def executor_names() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=GROUP) if _allowed(ep.name))


def load_executor_class(name: str) -> type[Executor]:
    for ep in entry_points(group=GROUP):
        if ep.name == name and _allowed(name):
            return ep.load()
    raise InputError.one("--executor", name, f"unknown executor; installed: {', '.join(executor_names())}")


__all__ = ["Executor", "ExecutorSettings", "TransientError", "TrialRequest", "TrialResult", "Usage",
           "executor_names", "load_executor_class"]
