"""The served viewer under a crowd and under readers that leave: its listen backlog holds 100
connections made at once (the default of 5 dropped them into one-second SYN retries and
resets), an output file is streamed in bounded memory (the real `skillassay view` process's
peak RSS, read from /proc), and a reader that disconnects mid-download is one quiet line on
stderr, not a traceback."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import repo_paths
from iteration_factory import write_iteration
from process_support import sigint_default

from skillassay.viewer.server import ViewerServer

SRC = repo_paths.SRC
RUN_ID = "eval-1-e1/with_skill/run-1"


@pytest.fixture
def iteration(tmp_path: Path) -> Path:
    return write_iteration(tmp_path / "ws", 1, {1: ("PPF", "PFF"), 2: ("PPP", "FFF")})


def connect_nonblocking(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.connect_ex(("127.0.0.1", port))
    return sock


def test_a_hundred_connections_at_once_fit_in_the_backlog_and_are_all_answered(iteration: Path) -> None:
    """The connections are made before the server accepts any: the kernel completes only as
    many handshakes as the listen backlog holds, the rest wait on SYN retries (or are reset)."""
    server = ViewerServer(iteration)
    socks = [connect_nonblocking(server.port) for _ in range(100)]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    try:
        deadline = time.monotonic() + 0.5
        pending = set(socks)
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(pending), [], 0.05)
            pending -= {s for s in writable if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0}
        assert not pending, f"{len(pending)} of 100 connections not established (listen backlog too small)"
        thread.start()
        request = f"GET /api/index HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n".encode()
        for s in socks:
            s.setblocking(True)
            s.settimeout(30)
            s.sendall(request)
        statuses = []
        for s in socks:
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            statuses.append(data.split(b" ", 2)[1])
        assert statuses == [b"200"] * 100
    finally:
        for s in socks:
            s.close()
        if thread.is_alive():  # shutdown() waits for a serve_forever that must have started
            server.shutdown()
        server.server_close()


@pytest.fixture
def served_process(iteration: Path) -> Iterator[tuple[subprocess.Popen[str], int, list[str]]]:
    """`skillassay view` in its own process; its stderr lines collected as they come."""
    proc = subprocess.Popen([sys.executable, "-m", "skillassay", "view", str(iteration), "--no-browser"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default,
                            env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"})
    assert proc.stderr is not None
    lines: list[str] = []
    first = proc.stderr.readline()
    lines.append(first)
    port = re.search(r"127\.0\.0\.1:(\d+)", first)
    assert port, first
    threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    try:
        yield proc, int(port.group(1)), lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


def file_url(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/api/file?run={quote(RUN_ID, safe='')}&name={name}"


def test_a_big_output_file_is_streamed_in_bounded_memory(iteration: Path, served_process) -> None:  # type: ignore[no-untyped-def]
    proc, port, _ = served_process
    big = iteration / RUN_ID / "outputs" / "big.bin"
    with big.open("wb") as fh:
        fh.write(b"start")
        fh.truncate(256 << 20)  # four times the bound below: a whole read could not stay under it
    for warm in ("api/index", "api/benchmark", f"api/run?id={quote(RUN_ID, safe='')}"):  # charts drawn, imports done
        urllib.request.urlopen(f"http://127.0.0.1:{port}/{warm}", timeout=120).read()
    before = peak_rss_mb(proc.pid)
    with urllib.request.urlopen(file_url(port, "big.bin"), timeout=120) as resp:
        assert resp.headers["Content-Length"] is None  # masked on the way (test_served_file.py): the close ends it
        received, head = 0, b""
        while chunk := resp.read(1 << 20):
            head = head or chunk[:5]
            received += len(chunk)
    assert (received, head) == (256 << 20, b"start")
    assert peak_rss_mb(proc.pid) - before < 64, (before, peak_rss_mb(proc.pid))  # a whole read costs 256 MB


def test_a_reader_that_leaves_mid_download_is_one_quiet_line(iteration: Path, served_process) -> None:  # type: ignore[no-untyped-def]
    proc, port, lines = served_process
    with (iteration / RUN_ID / "outputs" / "big.bin").open("wb") as fh:
        fh.truncate(64 << 20)  # far more than the socket buffers hold
    for _ in range(5):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        path = file_url(port, "big.bin").split(str(port), 1)[1]
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")  # keep-alive server; this answer still ends with the close
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        sock.close()
    deadline = time.monotonic() + 20
    while sum("disconnected" in ln for ln in lines) < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    # the server still answers after them
    assert urllib.request.urlopen(f"http://127.0.0.1:{port}/api/index", timeout=30).status == 200
    time.sleep(0.5)
    text = "".join(lines[1:])
    assert "Traceback" not in text
    quiet = [ln for ln in lines[1:] if ln.strip()]
    assert len(quiet) == 5 and all("disconnected before the answer was sent" in ln for ln in quiet), text
