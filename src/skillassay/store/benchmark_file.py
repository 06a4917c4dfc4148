"""benchmark.json on disk, written so that huge iterations never exist as one model or one
string: runs[] is streamed entry by entry (or copied from where aggregation spooled it)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from pydantic_core import to_json

from skillassay.models import Benchmark
from skillassay.store.jsonio import atomic_open

RUN_INDENT = "    "
RUN_SEPARATOR = ",\n" + RUN_INDENT


_SEPARATOR_BYTES = RUN_SEPARATOR.encode()


def indented_json(value: Any, prefix: str) -> str:
    text = to_json(value, indent=2).decode("utf-8")
    return text.replace("\n", "\n" + prefix)


def write_benchmark(path: Path, bench: Benchmark) -> None:
    """benchmark.json, pretty-printed like write_json, with runs[] written by the benchmark's
    runs writer (streamed one run at a time, or copied from where aggregation spooled them), so
    huge iterations never exist as one model or string. Key order: skill-creator's shape first
    (metadata, runs, run_summary, notes), then the benchmark process's, then ours."""
    data = bench.to_json_dict()
    runs = data.pop("runs", None)
    keys = list(data)
    keys.insert(1 if "metadata" in data else 0, "runs")
    with atomic_open(path) as fh:
        fh.write("{\n")
        for i, key in enumerate(keys):
            fh.write(f"  {json.dumps(key)}: ")
            if key != "runs":
                fh.write(indented_json(data[key], "  "))
            elif bench._write_runs is not None:
                bench._write_runs(fh)
            else:
                write_run_texts(fh, ((indented_json(r, RUN_INDENT).encode(),) for r in runs or []))
            fh.write(",\n" if i < len(keys) - 1 else "\n")
        fh.write("}\n")


def write_run_texts(fh: IO[str], texts: Iterable[Iterable[bytes]]) -> None:
    """runs[] from serialised entries, each given as UTF-8 blocks (a text may hold several
    entries joined by RUN_SEPARATOR). Bytes go straight to the file under the text layer, so
    nothing is decoded and re-encoded."""
    out = fh.buffer  # type: ignore[attr-defined]  # atomic_open gives a TextIOWrapper
    fh.flush()
    first = True
    for blocks in texts:
        out.write(b"[\n    " if first else _SEPARATOR_BYTES)
        for block in blocks:
            out.write(block)
        first = False
    out.write(b"[]" if first else b"\n  ]")
