"""The report's lines about who produced and graded the answers, from iteration.json: a judge
that graded below the floor of grade/judge_check.py (or unmeasured) because the user passed the
override, and answers that come from the embedded model, which is tiny."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.store.jsonio import load_json_lenient
from skillassay.wording import pct


def weak_judge_note(record: Any) -> str | None:
    """The report's line about a judge graded under the override (None when it met the floor
    or there was no judge)."""
    if not isinstance(record, dict) or not record.get("allowed_by"):
        return None
    judge = record.get("judge")
    identity: dict[str, Any] = judge if isinstance(judge, dict) else {}
    label = f"{identity.get('judge')} ({identity.get('model')})"
    floor = record.get("floor", 0.8)
    if not record.get("measured"):
        return (f"The judge {label} graded the plain-language expectations without a measured agreement "
                f"({record['allowed_by']}): `skillassay judge-check --judge {identity.get('judge')}` measures it.")
    if record.get("meets_floor"):
        return None
    return (f"The judge {label} agreed with {record.get('agreed')} of {record.get('cases')} labelled cases "
            f"(95% CI {pct(record.get('low', 0))}..{pct(record.get('high', 0))}), below the floor of {pct(floor)}; "
            f"its verdicts were used because of {record['allowed_by']}: plain-language results are not reliable.")


TINY_MODEL_NOTE = ("The answers come from the embedded SmolLM2-135M-Instruct, a tiny model (135M parameters): "
                   "they show what this skill's text does to that model, not what it does for a real agent.")


def judge_warnings(iteration_dir: Path) -> list[str]:
    record = load_json_lenient(iteration_dir / "iteration.json", {})
    if not isinstance(record, dict):
        return []
    executor = record.get("executor")
    tiny = isinstance(executor, dict) and executor.get("executor") == "local" and "model_path" not in (
        executor.get("options") or {})
    note = weak_judge_note(record.get("judge_check"))
    return [n for n in (TINY_MODEL_NOTE if tiny else None, note) if n]
