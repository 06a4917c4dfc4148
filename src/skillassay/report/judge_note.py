"""The report's line about a judge that graded below the floor of grade/judge_check.py, or
unmeasured, because the user passed the override: read from iteration.json's judge_check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.store.jsonio import load_json_lenient


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
            f"(95% CI {record.get('low', 0):.0%}..{record.get('high', 0):.0%}), below the floor of {floor:.0%}; "
            f"its verdicts were used because of {record['allowed_by']}: plain-language results are not reliable.")


def judge_warnings(iteration_dir: Path) -> list[str]:
    record = load_json_lenient(iteration_dir / "iteration.json", {})
    note = weak_judge_note(record.get("judge_check") if isinstance(record, dict) else None)
    return [note] if note else []
