"""load_json_lenient reads files whose damage only hides what they add; it must never wait on a
FIFO (a config path that is a pipe hung `run` before any check could refuse it)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from skillassay.store.jsonio import load_json_lenient


def test_a_fifo_gives_the_default_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(load_json_lenient(fifo, "default")), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the stuck read so the test process can end
        with open(fifo, "w") as fh:
            fh.write("{}")
        reader.join(5)
    assert result == ["default"]


def test_a_file_reads_and_damage_gives_the_default(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"a": 1}', encoding="utf-8")
    bad.write_text("{", encoding="utf-8")
    assert load_json_lenient(good) == {"a": 1}
    assert load_json_lenient(bad, {}) == {} and load_json_lenient(tmp_path / "missing.json") is None
    assert load_json_lenient(tmp_path) is None
