"""The served viewer's downloads (`/api/file`, viewer/served_file.py) mask what the static page
and `report` mask: the secrets the iteration's runs remembered (iteration.json's salted hashes),
plain and base64, with the variable that held them no longer set; and they are read, masked and
sent in bounded pieces, also where a secret straddles two pieces.

The server is the real `skillassay view` process, without the variable in its environment."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import repo_paths
from iteration_factory import write_iteration
from process_support import sigint_default

from skillassay.store.redact import disk_redactor
from skillassay.store.secret_hashes import new_record
from skillassay.viewer.served_file import READ, masked_pieces, reach_of

RUN_ID = "eval-1-e1/with_skill/run-1"
KEY = "Zx81kQ0pLm2nVb7cXz9aQwTy"  # no known key shape: only iteration.json's hashes know it


@pytest.fixture
def iteration(tmp_path: Path) -> Path:
    """An iteration whose run remembered KEY, with the key in two of its outputs."""
    it = write_iteration(tmp_path / "ws", 1, {1: ("PP", "FF")})
    record_path = it / "iteration.json"
    record = json.loads(record_path.read_text())
    record["redacted_secrets"] = new_record([KEY])
    record_path.write_text(json.dumps(record))
    outputs = it / RUN_ID / "outputs"
    (outputs / "notes.md").write_text(f"config: key={KEY}\n")
    (outputs / "blob.txt").write_text(base64.b64encode(b"x" + KEY.encode() + b"yz").decode() + "\n")
    # A big file with the key across every boundary a reader of READ bytes could cut at.
    line = b"filler " * 30 + b"key=" + KEY.encode() + b" end\n"
    with (outputs / "big.log").open("wb") as fh:
        for _ in range((3 * READ) // len(line) + 50):
            fh.write(line)
    return it


@pytest.fixture
def port(iteration: Path) -> Iterator[int]:
    env = {k: v for k, v in os.environ.items() if "KEY" not in k}
    env.update(PYTHONPATH=str(repo_paths.SRC), COLUMNS="200")
    proc = subprocess.Popen([sys.executable, "-m", "skillassay", "view", str(iteration), "--no-browser"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default, env=env)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    found = re.search(r"127\.0\.0\.1:(\d+)", first)
    assert found, first
    threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()  # type: ignore[union-attr]
    try:
        yield int(found.group(1))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def download(port: int, name: str) -> bytes:
    url = f"http://127.0.0.1:{port}/api/file?run={quote(RUN_ID, safe='')}&name={name}"
    with urllib.request.urlopen(url, timeout=120) as resp:
        return resp.read()


def test_downloads_mask_the_secrets_the_run_remembered(iteration: Path, port: int) -> None:
    """Before: /api/file sent the agent's files as they are on disk, key and all."""
    assert download(port, "notes.md") == b"config: key=[REDACTED]\n"
    blob = download(port, "blob.txt")
    encoded = base64.b64encode(b"x" + KEY.encode() + b"yz")
    assert encoded[4:-4] not in blob and b"[REDACTED]" in blob
    big = download(port, "big.log")
    size = (iteration / RUN_ID / "outputs" / "big.log").stat().st_size
    assert KEY.encode() not in big and big.count(b"key=[REDACTED] end\n") == big.count(b"\n") > 0
    assert len(big) == size - big.count(b"\n") * (len(KEY) - len("[REDACTED]"))


@pytest.mark.parametrize("read", [7, 64, 1000])
def test_a_secret_across_a_piece_boundary_is_masked(read: int) -> None:
    """Pieces far smaller than the text: the key straddles many cuts, and a key split across a
    line (the redactor's split form) too; the joined pieces are what masking the whole gives."""
    from skillassay.store.redact import _compiled

    redactor = _compiled(frozenset([KEY]))
    text = (f"a {KEY} b\n" * 20 + f"half {KEY[:10]}\n{KEY[10:]} x " * 20 + "sk-" + "A" * 40 + " tail").encode()
    pieces = list(masked_pieces(io.BytesIO(text), redactor.bytes, reach_of(redactor), read=read))
    assert b"".join(pieces) == redactor.bytes(text)
    assert KEY[:10].encode() not in b"".join(pieces)
    assert max(map(len, pieces)) < read + 2 * reach_of(redactor) + 64  # bounded: never the whole text


def test_the_reach_covers_the_longest_form() -> None:
    redactor = disk_redactor()
    assert reach_of(redactor) >= max((len(f.encode()) for f in redactor.secrets), default=0)
