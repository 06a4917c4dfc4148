"""The judge's results per run, so re-grading does not re-ask about unchanged pairs.

Judging is the slow and paid part of grading, and its inputs are fixed once a run is done.
An entry is keyed by a hash of (the expectation as JSON, the judge's identity including its
prompt templates and sample count, the run's content: outputs/, transcript, prompt); any
change to one of them misses the cache. Only graded verdicts are stored: an ungraded one
(judge failure) is asked again next time. Typed assertions are not cached: they are cheap,
and a `python`/`command` check may depend on code outside the run."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillassay.models import ExpectationResult
from skillassay.store.bounded import CHUNK, file_digest, list_files, read_head_tail
from skillassay.store.jsonio import load_json_lenient, write_json

CACHE_FILE = "grading_cache.json"
SCHEMA_VERSION = 1


def sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def run_content_hash(run_dir: Path, prompt: str) -> str:
    """What the judge reads: the files under outputs/ it is shown (names, count, bytes: see
    judge.output_files), transcript.md, the prompt. Bounded like the judge's own reading: a
    file is hashed in chunks, one over HASH_CAP by its size, head and tail."""
    from skillassay.grade.judge import BOOKKEEPING_FILES, MAX_FILES_SHOWN

    h = hashlib.sha256(prompt.encode())
    outputs = run_dir / "outputs"
    listing = list_files(outputs, MAX_FILES_SHOWN + len(BOOKKEEPING_FILES)) if outputs.is_dir() else None
    files = [outputs / n for n in listing.names] if listing else []
    h.update(f"{listing.total if listing else 0} files\0".encode())
    for path in [*files, run_dir / "transcript.md"]:
        if path.is_file() and not path.is_symlink():
            h.update(str(path.relative_to(run_dir)).encode() + b"\0" + _content_digest(path))
    return h.hexdigest()


def _content_digest(path: Path) -> bytes:
    digest = file_digest(path)
    if digest is not None:
        return bytes.fromhex(digest)
    head, tail, size = read_head_tail(path, CHUNK * 16, CHUNK * 16)
    return hashlib.sha256(f"{size}\0".encode() + head + b"\0" + tail).digest()


def entry_key(expectation: Any, judge_identity: dict[str, Any], content_hash: str) -> str:
    return sha({"expectation": expectation, "judge": judge_identity, "run": content_hash})


@dataclass
class JudgeCache:
    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    extras: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> JudgeCache:
        """A missing or unreadable cache is an empty one (it only saves time)."""
        path = run_dir / CACHE_FILE
        data = load_json_lenient(path)
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            return cls(path)
        entries, extras = data.get("entries"), data.get("extras")
        return cls(path, entries if isinstance(entries, dict) else {}, extras if isinstance(extras, dict) else {})

    def get(self, key: str) -> ExpectationResult | None:
        hit = self.entries.get(key)
        if hit is None:
            return None
        try:
            return ExpectationResult.model_validate(hit)
        except ValueError:
            return None

    def put(self, key: str, result: ExpectationResult) -> None:
        if result.passed is not None:
            self.entries[key] = result.model_dump(mode="json")

    def save(self, keep: set[str], keep_extras: set[str]) -> None:
        """Only what the current expectations use is kept, so edits do not pile up."""
        write_json(self.path, {
            "schema_version": SCHEMA_VERSION,
            "entries": {k: v for k, v in self.entries.items() if k in keep},
            "extras": {k: v for k, v in self.extras.items() if k in keep_extras},
        })
