"""Executor plugins, discovered through the `skillassay.executors` entry-point group (the
built-ins are registered the same way as third-party ones)."""

from __future__ import annotations

from collections.abc import Mapping

from skillassay import plugins
from skillassay.errors import InputError
from skillassay.executors.base import (
    Executor,
    ExecutorSettings,
    TransientError,
    TrialRequest,
    TrialResult,
    TurnRecord,
    Usage,
)
from skillassay.extras import missing_extra, needs_extra

KIND = "executors"


def executor_names() -> list[str]:
    return plugins.names(KIND)


def required_extra(name: str) -> str | None:
    """The extra this executor's entry point declares (`local = "...:LocalExecutor [local]"`):
    what extras.install_hint(EXTRA) adds for it to load."""
    plugin = plugins.find(KIND, name)
    return plugin.extras[0] if plugin is not None and plugin.extras else None


def load_executor_class(name: str) -> type[Executor]:
    plugin = plugins.find(KIND, name)
    if plugin is None:
        raise InputError.one("--executor", name, unknown_executor(name))
    try:
        return plugins.load(KIND, name)
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc) or (plugin.extras[0] if plugin.extras else None)
        if extra is None:
            raise
        raise InputError.one(f"--executor {name}", "", needs_extra(extra)) from None


def unknown_executor(name: str) -> str:
    return plugins.unknown(KIND, name)


def check_executor(executor: Executor) -> None:
    """Refuse (exit 2) an executor that cannot run here, saying what is missing, before any
    trial is spent: 18 trials that all fail with "Not logged in" measure nothing."""
    missing = executor.ready()
    if missing:
        raise InputError.one(f"--executor {executor.name}", "", f"cannot run here: {missing}")


# Threshold -> what an executor must report for it to be measured.
_NEEDS_TOKENS = ("max_avg_tokens", "max_avg_cost_usd")  # no tokens: nothing to price either


def unmeasurable_thresholds(executor: type[Executor] | Executor, thresholds: Mapping[str, object]) -> list[str]:
    """The configured thresholds this executor reports no figure for (a token ceiling with an
    executor that counts no tokens): gated as "not measured", never INCONCLUSIVE forever."""
    if executor.reports_tokens:
        return []
    return [key for key in _NEEDS_TOKENS if thresholds.get(key) is not None]


def unmeasured_notice(executor_name: str, keys: list[str]) -> str:
    """What `run` says before the trials about thresholds it cannot measure."""
    return (f"{', '.join(keys)} cannot be measured with the {executor_name} executor (it reports no "
            "token counts): shown as NOT MEASURED and left out of the verdict")


__all__ = ["Executor", "ExecutorSettings", "TransientError", "TrialRequest", "TrialResult", "TurnRecord", "Usage",
           "check_executor", "executor_names", "load_executor_class", "required_extra", "unmeasurable_thresholds",
           "unmeasured_notice"]
