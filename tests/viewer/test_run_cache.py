"""The served viewer's /api/run answers (viewer/run_cache.py): a crowd asking for one run gets one
rendering, and a file that changes under a running server is shown changed on the next request
(issue 40: p95 under 1 s for 200 readers at once)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from iteration_factory import write_iteration

import skillassay.viewer.build as build
import skillassay.viewer.run_cache as run_cache
from skillassay.viewer.run_cache import RunCache
from skillassay.viewer.server import ViewerServer, start_server

RUN = "eval-1-e1/with_skill/run-1"


@pytest.fixture
def iteration(tmp_path: Path) -> Path:
    it = write_iteration(tmp_path / "ws", 1, {1: ("PP", "FF"), 2: ("PF", "FP")})
    (it / RUN / "outputs" / "answer.md").write_text("The port is **4433**.\n")
    return it


@pytest.fixture
def served(iteration: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ViewerServer]:
    # The files were written a moment ago: without this, every answer is "racily" fresh and none is kept.
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    server, _ = start_server(iteration)
    yield server
    server.shutdown()
    server.server_close()


def get_run(server: ViewerServer, run_id: str = RUN) -> dict[str, Any]:
    with urllib.request.urlopen(f"{server.url}api/run?id={quote(run_id, safe='')}", timeout=30) as resp:
        return json.loads(resp.read())


def file_names(payload: dict[str, Any]) -> list[str]:
    return [f["name"] for f in payload["files"]]


def test_a_crowd_asking_for_one_run_gets_it_rendered_once(served: ViewerServer, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str] = []
    real = build.render_file

    def counting(path: Path, name: str, href: str | None) -> dict[str, Any]:
        rendered.append(name)
        time.sleep(0.05)  # long enough for the crowd to arrive while the first rendering is under way
        return real(path, name, href)

    monkeypatch.setattr(build, "render_file", counting)
    answers: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda: answers.append(get_run(served))) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 20 and all(a == answers[0] for a in answers)
    assert "4433" in answers[0]["files"][0]["html"]
    assert sorted(rendered) == ["answer.md", "metrics.json"], f"rendered {len(rendered)} times for 20 requests"


def test_a_file_that_changes_is_rendered_again(served: ViewerServer, iteration: Path) -> None:
    run = iteration / RUN
    first = get_run(served)
    assert file_names(first) == ["answer.md", "metrics.json"] and first["grading"]["expectations"][0]["passed"] is True

    (run / "outputs" / "answer.md").write_text("The port is **8443** after all.\n")
    assert "8443" in get_run(served)["files"][0]["html"]

    grading = json.loads((run / "grading.json").read_text())
    grading["expectations"][0].update(passed=False, evidence="re-graded")
    (run / "grading.json").write_text(json.dumps(grading))
    assert get_run(served)["grading"]["expectations"][0]["evidence"] == "re-graded"

    (run / "outputs" / "notes").mkdir()
    (run / "outputs" / "notes" / "later.txt").write_text("written after the server started")
    assert file_names(get_run(served)) == ["answer.md", "notes/later.txt", "metrics.json"]
    (run / "outputs" / "notes" / "later.txt").write_text("rewritten in its folder, longer than before")
    assert "longer than before" in get_run(served)["files"][1]["html"]
    (run / "outputs" / "notes" / "later.txt").unlink()
    assert file_names(get_run(served)) == ["answer.md", "metrics.json"]


def test_a_file_added_in_a_folder_with_no_listed_file_is_noticed(served: ViewerServer, iteration: Path) -> None:
    """A folder of outputs/ that held no file when the answer was built (so no listed file names
    it) changes only its own mtime when a file arrives: the answer must follow it all the same."""
    deep = iteration / RUN / "outputs" / "logs" / "deep"
    deep.mkdir(parents=True)
    assert file_names(get_run(served)) == ["answer.md", "metrics.json"]
    (deep / "late.txt").write_text("written after the first look")
    assert file_names(get_run(served)) == ["answer.md", "logs/deep/late.txt", "metrics.json"]
    (deep / "inner").mkdir()
    (deep / "inner" / "later.txt").write_text("and one more level down")
    assert "logs/deep/inner/later.txt" in file_names(get_run(served))


def test_outputs_with_more_folders_than_the_cap_are_not_watched_but_rebuilt(tmp_path: Path) -> None:
    for name in ("a/b", "c", "link-target"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "a" / "to-c").symlink_to(tmp_path / "c")  # a link is not walked into
    assert run_cache.folders_under(tmp_path, cap=4) == [tmp_path / n for n in ("a", "a/b", "c", "link-target")]
    assert run_cache.folders_under(tmp_path, cap=3) is None


def test_an_answer_whose_files_just_changed_is_sent_but_not_kept(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.txt"
    fresh.write_text("changed a moment ago")
    cache = RunCache(lambda run_id: (fresh.read_bytes(), (str(fresh),)))
    assert cache.get("r") == b"changed a moment ago" and cache.get("r") == b"changed a moment ago"
    assert cache.builds == 2  # within the racy window: built again, since a change in the same tick is invisible


def test_kept_answers_stay_under_their_byte_budget(tmp_path: Path) -> None:
    cache = RunCache(lambda run_id: (run_id.encode() * 100, ()), max_bytes=250, racy_ns=0)
    for run_id in ("a", "b", "c"):
        cache.get(run_id)
    cache.get("c")
    cache.get("a")  # "a" was dropped for "c" (the least recently asked first)
    assert cache.builds == 4


def test_previous_runs_answer_follows_its_files(workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    server, _ = start_server(workspace["it2"], workspace["it1"])
    try:
        run_id = server.index.runs[0].run_id
        prev = get_run(server, run_id)["previous"]
        answer = workspace["it1"] / prev["run_id"] / "outputs" / "answer.md"
        before = answer.read_text()
        try:
            answer.write_text(before + "\nA line the previous iteration's agent added later.\n")
            assert "added later" in get_run(server, run_id)["previous"]["files"][0]["html"]
        finally:
            answer.write_text(before)
    finally:
        server.shutdown()
        server.server_close()


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """(head, body) of one answer with a Content-Length, read off a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection mid-answer"
        body += chunk
    return head, body


def test_a_tabs_requests_share_one_connection(served: ViewerServer) -> None:
    host = f"127.0.0.1:{served.port}"
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        for path in ("/", "/api/index", f"/api/run?id={quote(RUN, safe='')}"):
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            head, body = read_response(sock)
            assert head.startswith(b"HTTP/1.1 200") and body, head
        sock.sendall(f"GET /nowhere HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        head, _ = read_response(sock)
        assert head.startswith(b"HTTP/1.1 404") and b"Connection: close" in head
        assert sock.recv(1) == b""  # an error closes it: a refused request's body may be unread
