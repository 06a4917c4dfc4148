"""Child-process side of the `python` assertion: import the user's function, call it with a
rebuilt RunView, write {"passed", "evidence"} or {"error"} to the result file. Kept apart
from the grader's process so a hang can be killed and a crash cannot take the grader down."""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from skillassay.assertions.base import RunView, Verdict
from skillassay.models import Metrics, Timing


def rebuild_view(data: dict[str, Any]) -> RunView:
    return RunView(
        final_text=data["final_text"], outputs_dir=Path(data["outputs_dir"]),
        metrics=Metrics.model_validate(data["metrics"]), timing=Timing.model_validate(data["timing"]),
        run_dir=Path(data["run_dir"]), prompt=data["prompt"],
        eval_dir=Path(data["eval_dir"]) if data.get("eval_dir") else None)


def normalize(value: Any) -> dict[str, Any]:
    """Accept a Verdict, (passed, evidence), or a bare bool; anything else is the check's bug."""
    if isinstance(value, Verdict):
        return {"passed": value.passed, "evidence": value.evidence}
    if isinstance(value, tuple | list) and len(value) == 2 and isinstance(value[0], bool):
        return {"passed": value[0], "evidence": str(value[1])}
    if isinstance(value, bool):
        return {"passed": value, "evidence": ""}
    return {"error": f"returned {value!r}; expected (passed: bool, evidence: str), a bool or a Verdict"}


def run(request: dict[str, Any]) -> dict[str, Any]:
    if request.get("eval_dir"):
        sys.path.insert(0, request["eval_dir"])
    module_name, func_name = request["function"].split(":")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
        return normalize(func(rebuild_view(request["view"])))
    except Exception as exc:  # the user's code: report, don't crash without a result
        return {"error": f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=3)[-600:]}"}


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    Path(argv[2]).write_text(json.dumps(run(request)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
