"""Load the secrets an iteration's run remembered (iteration.json `redacted_secrets`, salted
hashes: store/secret_hashes.py) into the redactor, for the commands that read an iteration
later (`grade`, `compare`, `report`, `view`): what they write or show masks those values even
when the variables that held them are no longer set. Not `aggregate`: it reads only files the
run already masked for the same values, and benchmark.json can be hundreds of MB (the hashed
search costs about as much again as the literal one)."""

from __future__ import annotations

import json
from pathlib import Path

from skillassay.store.redact import remember

RECORD_FILE = "iteration.json"


def remember_iterations(*folders: Path | None) -> int:
    """Each folder's own iteration.json, and its iteration-*/ ones when it is a workspace; the
    number of records loaded. An unreadable record adds nothing (it only ever adds masking)."""
    loaded = 0
    for folder in folders:
        if folder is None or not folder.is_dir():
            continue
        for path in [folder / RECORD_FILE, *sorted(folder.glob(f"iteration-*/{RECORD_FILE}"))]:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(data, dict):
                loaded += remember(data.get("redacted_secrets"))
                for shard in data.get("redacted_secrets_shards") or []:  # a merged iteration's (run/merge.py)
                    loaded += remember(shard)
    return loaded


def too_weak_to_remember(folder: Path) -> int:
    """How many secret values the iteration's run masked but did not remember, their hashes
    being guessable (store/secret_strength.py): what a later page may show unmasked."""
    try:
        data = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return 0
    record = data.get("redacted_secrets") if isinstance(data, dict) else None
    count = record.get("too_weak_to_remember") if isinstance(record, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


__all__ = ["remember_iterations", "too_weak_to_remember"]
