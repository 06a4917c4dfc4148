"""The embedded judge's measured standing, shipped with the package (judge_standing.json).

Measuring the embedded judge takes 56 model calls, about 20 minutes on a loaded 2-core machine,
and its answer is known before a user asks: the model file, its prompts and the labelled cases
all ship with the package. So the result of a real `judge-check --judge local` run ships too,
and `run --judge local` refuses (or accepts) at once. A record counts only for the judge it was
measured on: its key is the judge's identity (model name, sampling, prompt templates' hash,
samples, caps), the labelled cases' hash and, for the embedded judge, the model file's sha256.
Any difference (a new prompt version, another model file, edited cases) is no match, and the
judge is measured again rather than trusted on a stale record. The llama.cpp build it ran on is
recorded beside the result, not in the key: builds move single verdicts, not a standing far
from the floor. Pure functions over plain data; the file is read and written at the edges."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SHIPPED_FILE = "judge_standing.json"
SCHEMA_VERSION = 1


def standing_key(identity: dict[str, Any], cases_sha256: str, model_sha256: str | None) -> dict[str, Any]:
    """What a shipped record must match to stand for this judge."""
    key: dict[str, Any] = {"judge": identity, "cases_sha256": cases_sha256}
    if model_sha256 is not None:
        key["model_sha256"] = model_sha256
    return key


def find_record(key: dict[str, Any], data: Any) -> dict[str, Any] | None:
    """The agreement (as judge_check.Agreement.to_dict) recorded under exactly this key, or
    None: a record for another model file, prompt version or case set never stands in."""
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        return None
    records = data.get("records")
    for record in records if isinstance(records, list) else []:
        if isinstance(record, dict) and _canonical(record.get("key")) == _canonical(key):
            agreement = record.get("agreement")
            return agreement if isinstance(agreement, dict) else None
    return None


def with_record(data: Any, key: dict[str, Any], agreement: dict[str, Any],
                measured_with: dict[str, Any]) -> dict[str, Any]:
    """The shipped file with this judge's record put in (replacing one under the same key)."""
    records = data.get("records") if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION else None
    kept = [r for r in records or [] if isinstance(r, dict) and _canonical(r.get("key")) != _canonical(key)]
    return {"schema_version": SCHEMA_VERSION,
            "about": "skillassay judge-check results shipped with the package (grade/judge_standing.py)",
            "records": [*kept, {"key": key, "agreement": agreement, "measured_with": measured_with}]}


def shipped_data() -> Any:
    """The shipped file's content; None when it is missing or unreadable (then judges are
    measured, as before it shipped)."""
    try:
        text = resources.files("skillassay.grade").joinpath(SHIPPED_FILE).read_text(encoding="utf-8")
        return json.loads(text)
    except (OSError, ValueError):
        return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
