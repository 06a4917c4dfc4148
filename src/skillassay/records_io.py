"""Reading graded runs from a workspace into TrialRecords."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillassay.grade import trial_passed
from skillassay.models import Grading, Metrics, Timing
from skillassay.records import TrialRecord

_RUN = re.compile(r"run-(\d+)")


def _read(path: Path) -> Any | None:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def load_grading(run_dir: Path) -> Grading | None:
    """The run's grading.json if present and valid, else None (the trial is not done)."""
    data = _read(run_dir / "grading.json")
    if data is None:
        return None
    try:
        return Grading.model_validate(data)
    except ValueError:
        return None


def load_metrics(run_dir: Path) -> Metrics:
    for p in (run_dir / "outputs" / "metrics.json", run_dir / "metrics.json"):
        data = _read(p)
        if isinstance(data, dict):
            try:
                return Metrics.model_validate(data)
            except ValueError:
                break
    return Metrics()


def load_timing(run_dir: Path) -> Timing:
    data = _read(run_dir / "timing.json")
    try:
        return Timing.model_validate(data) if isinstance(data, dict) else Timing()
    except ValueError:
        return Timing()


def duration_of(t: Timing) -> float | None:
    for v in (t.executor_duration_seconds, t.total_duration_seconds):
        if v is not None:
            return float(v)
    return t.duration_ms / 1000 if t.duration_ms is not None else None


def tokens_of(t: Timing, m: Metrics) -> int | None:
    if t.total_tokens is not None:
        return int(t.total_tokens)
    usage = (m.model_extra or {}).get("usage") or {}
    ins, outs = usage.get("input_tokens"), usage.get("output_tokens")
    return None if ins is None and outs is None else (ins or 0) + (outs or 0)


def make_record(eval_id: int | str, eval_name: str, configuration: str, run_number: int,
                grading: Grading, metrics: Metrics, timing: Timing, run_dir: Path | None) -> TrialRecord:
    status = metrics.status or "ok"
    notes: list[str] = []
    if grading.user_notes_summary:
        u = grading.user_notes_summary
        notes = [*u.uncertainties, *u.needs_review, *u.workarounds]
    usage = (metrics.model_extra or {}).get("usage") or {}
    return TrialRecord(
        eval_id=eval_id, eval_name=eval_name, configuration=configuration, run_number=run_number,
        status=status,
        passed=trial_passed(grading) if status == "ok" else None,
        passed_count=grading.summary.passed, total_count=grading.summary.total,
        tokens=tokens_of(timing, metrics), duration_seconds=duration_of(timing),
        tool_calls=metrics.total_tool_calls, skill_triggered=metrics.skill_triggered,
        cost_usd=usage.get("cost_usd"),
        expectations=tuple(grading.expectations), notes=tuple(notes), run_dir=run_dir,
        errors=metrics.errors_encountered, error=metrics.error,
    )


def read_run(run_dir: Path, eval_id: int | str, eval_name: str, configuration: str) -> TrialRecord | None:
    grading = load_grading(run_dir)
    if grading is None:
        return None
    m = _RUN.fullmatch(run_dir.name)
    return make_record(eval_id, eval_name, configuration, int(m.group(1)) if m else 1, grading,
                       load_metrics(run_dir), load_timing(run_dir), run_dir)
