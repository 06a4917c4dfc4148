"""What the run needs for multi-turn evals (issue 39): the refusal of an executor that cannot
carry a conversation, before any trial runs."""

from __future__ import annotations

from pathlib import Path

from skillassay.errors import InputError, Problem
from skillassay.executors import Executor
from skillassay.models import EvalSet


def refuse_single_turn_executor(executor_class: type[Executor], executor_name: str, evals: EvalSet,
                                evals_path: Path) -> None:
    """A multi-turn eval given to an executor without `supports_turns` would be measured on its
    first message alone, which is not the eval: refused (exit 2), naming the executor and each
    such eval, before a trial is spent."""
    if executor_class.supports_turns:
        return
    problems = [Problem(str(evals_path), f"$.evals[{i}].turns",
                        f"eval {ev.id} ({ev.name or ev.slug}) is a {len(ev.turns)}-turn conversation and the "
                        f"'{executor_name}' executor cannot carry one (it runs a single prompt): choose an "
                        "executor that supports multi-turn evals, or give this eval one prompt")
                for i, ev in enumerate(evals.evals) if ev.turns]
    if problems:
        raise InputError(problems)
