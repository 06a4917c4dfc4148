"""The viewer's data, pages and server, without a browser: what is listed, rendered, escaped,
served and refused. Browser behaviour is in test_viewer_browser.py."""

from __future__ import annotations

import html as html_lib
import http.client
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from viewer_samples import PAYLOADS, run_cli

from skillassay.report.charts import write_report_charts
from skillassay.viewer.build import benchmark_payload, build_index, run_payload
from skillassay.viewer.page import script_json
from skillassay.viewer.server import MAX_BODY, ViewerServer
from skillassay.viewer.static_html import static_html

# `workspace` and `evil_workspace` are conftest.py's session fixtures (built by viewer_samples.py),
# shared with test_viewer_browser.py.


# --- index and run data --------------------------------------------------------------------


def test_index_lists_every_run_without_reading_outputs(workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = Path.open

    def spy(self: Path, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(self))
        return real_open(self, *a, **k)

    monkeypatch.setattr(Path, "open", spy)
    index = build_index(workspace["it2"])
    assert len(index.runs) == 16  # 8 evals x 2 configurations x 1 trial
    assert not [p for p in opened if "/outputs/" in p]
    first = index.runs[0]
    assert (first.eval_id, first.configuration, first.run_number) == (1, "with_skill", 1)
    assert first.eval_name == "server-port" and first.passed == first.total == 1


def test_run_payload_renders_each_kind(workspace: dict[str, Path]) -> None:
    it2 = workspace["it2"]
    index = build_index(it2)
    run_id = index.runs[0].run_id
    data = run_payload(index, run_id, workspace["it1"], served=True)
    assert data is not None
    kinds = {f["name"]: f["kind"] for f in data["files"]}
    assert data["files"][0]["name"] == "answer.md"
    assert kinds == {"answer.md": "markdown", "notes.md": "markdown", "report.md": "markdown", "script.py": "code",
                     "log.txt": "text", "chart.png": "image", "data.bin": "binary", "metrics.json": "code"}
    by_name = {f["name"]: f for f in data["files"]}
    assert "<table>" in by_name["report.md"]["html"] and "<strong>bold</strong>" in by_name["report.md"]["html"]
    assert 'class="hl"' in by_name["script.py"]["html"] and '<span class="k">def</span>' in by_name["script.py"]["html"]
    assert by_name["chart.png"]["src"].startswith("data:image/png;base64,")
    assert by_name["data.bin"]["href"] == f"api/file?run={quote(run_id, safe='')}&name=data.bin"
    assert data["prompt"] == "What port does the Acme VPN server use?"
    assert data["grading"]["expectations"][0]["evidence"].startswith("Found '4433'")
    assert data["previous"]["feedback"] == "previous feedback: too long"
    assert data["previous"]["files"][0]["name"] == "answer.md"
    static = run_payload(index, run_id, None, served=False)
    assert static is not None
    assert {f["name"]: f for f in static["files"]}["data.bin"]["href"].startswith("data:application/octet-stream;base64,")
    assert static["previous"] is None


def test_unknown_run_is_none(workspace: dict[str, Path]) -> None:
    assert run_payload(build_index(workspace["it2"]), "../../etc", None, served=True) is None


def test_large_text_is_capped_with_a_note(tmp_path: Path, workspace: dict[str, Path]) -> None:
    from skillassay.viewer.render import TEXT_CAP, render_file

    big = tmp_path / "big.txt"
    big.write_text("x" * (TEXT_CAP + 10))
    f = render_file(big, "big.txt", None)
    assert f["truncated"] and "first 200,000 characters" in f["note"]


def test_escaping_of_rendered_outputs(evil_workspace: dict[str, Path]) -> None:
    index = build_index(evil_workspace["it2"])
    data = run_payload(index, index.runs[0].run_id, evil_workspace["it1"], served=False)
    assert data is not None
    for f in data["files"]:
        html = f.get("html", "")
        assert "<script" not in html.lower() and "<img" not in html.lower() and "<svg" not in html.lower(), f["name"]
        # only real tags count: escaped text may legitimately show `href="javascript:..."` (newer
        # Pygments no longer escapes quotes in text, which is safe once `<` is escaped)
        tags = re.findall(r"<[a-zA-Z][^<>]*>", html)
        assert not [t for t in tags if re.search(r'(?:href|src)\s*=\s*["\']?\s*javascript', t, re.I)], f["name"]
    md = {f["name"]: f for f in data["files"]}["evil.md"]["html"]
    assert "&lt;script&gt;" in md and 'href="javascript' not in md
    assert {f["name"]: f["kind"] for f in data["files"]}["evil.svg"] in {"code", "text"}  # never an image


def test_script_json_cannot_close_the_script_element() -> None:
    text = script_json({"a": PAYLOADS})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": PAYLOADS}


def test_static_page_is_self_contained_and_inert(evil_workspace: dict[str, Path]) -> None:
    html = static_html(evil_workspace["it2"], evil_workspace["it1"])
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = html_lib.unescape(csp.group(1))
    assert "default-src 'none'" in policy and "img-src data:" in policy and "connect-src 'none'" in policy
    nonce = re.search(r"script-src 'nonce-([^']+)'", policy).group(1)  # type: ignore[union-attr]
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts == [' type="application/json" id="boot"', f' nonce="{nonce}"'], scripts
    assert "window.__pwned" not in html.split('id="boot">')[0]  # nothing hostile before the data
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # no CDN, no network


def test_charts_written_as_png(workspace: dict[str, Path]) -> None:
    paths = write_report_charts(workspace["it2"])
    assert [p.relative_to(workspace["it2"]).as_posix() for p in paths] == ["charts/pass_rate.png", "charts/trend.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in paths)


def test_benchmark_payload_reads_statistics_and_comparison(workspace: dict[str, Path], tmp_path: Path) -> None:
    bench = json.loads((workspace["it2"] / "benchmark.json").read_text())
    bench["statistics"] = {
        "skill_configuration": "with_skill", "baseline_configuration": "without_skill",
        "configurations": {"with_skill": {"pass_rate_interval": [0.4, 0.9]}, "without_skill": {"pass_rate_interval": [0.0, 0.3]}},
        "per_eval": [{"eval_id": 1, "configurations": {"with_skill": {"wilson": [0.2, 1.0]}}}],
        "paired": {"improvement_ratio": {"interval": [1.1, 3.0]}, "pass_rate_difference": {"mean": 0.6, "interval": [0.3, 0.9]}},
        "comparison": {"per_eval": [{"eval_id": 2, "eval_name": "protocol", "counts": "3/3 -> 0/3", "label": "regressed"}],
                       "regressed": [2]},
    }
    alone = tmp_path / "iteration-2"  # no comparison_previous.json here: the section inside is used
    alone.mkdir()
    (alone / "benchmark.json").write_text(json.dumps(bench))
    data = benchmark_payload(alone, bench)
    assert data["summary"][0]["skill"]["interval"] == [0.4, 0.9]
    assert data["per_eval"][0]["skill_ci"] == [0.2, 1.0]
    assert data["headline"][1]["interval"] == [0.3, 0.9]
    assert data["comparison"]["regressed"] == ["2"] and data["comparison"]["rows"][0]["label"] == "regressed"
    assert data["per_eval_chart"].startswith("data:image/svg+xml;base64,")


def test_benchmark_payload_of_a_real_second_iteration(workspace: dict[str, Path]) -> None:
    bench = json.loads((workspace["it2"] / "benchmark.json").read_text())
    data = benchmark_payload(workspace["it2"], bench)
    assert [p["iteration"] for p in data["trend"]] == [1, 2]
    assert data["trend_chart"].startswith("data:image/svg+xml;base64,")
    assert len(data["comparison"]["rows"]) == 8  # comparison_previous.json, written by the run
    assert data["gate"]["status"] in {"PASS", "FAIL", "INCONCLUSIVE"}
    assert {r["key"] for r in data["gate"]["thresholds"]} >= {"min_pass_rate", "min_improvement_ratio"}
    assert len(data["variance"]) == 16


def test_benchmark_payload_survives_a_foreign_benchmark(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    it.mkdir()
    (it / "benchmark.json").write_text(json.dumps({"metadata": {"skill_name": "x"}, "statistics": "garbage",
                                                   "runs": [{"eval_id": 1, "result": "bad"}]}))
    data = benchmark_payload(it, json.loads((it / "benchmark.json").read_text()))
    assert data["summary"] == [] and data["gate"] is None and data["trend"] == []


# --- server --------------------------------------------------------------------------------


# The server under test is conftest.py's viewer_server fixture (test_viewer_browser.py uses it too).


def request(srv: ViewerServer, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def post_json(srv: ViewerServer, data: object, path: str = "/api/feedback") -> int:
    return request(srv, "POST", path, json.dumps(data).encode(), {"Content-Type": "application/json"})[0]


def test_server_binds_loopback_only(viewer_server: ViewerServer) -> None:
    assert viewer_server.server_address[0] == "127.0.0.1"


def test_page_has_csp_header_with_nonce(viewer_server: ViewerServer) -> None:
    status, headers, body = request(viewer_server, "GET", "/")
    assert status == 200
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "img-src data:" in policy
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)  # type: ignore[union-attr]
    assert f'<script nonce="{nonce}">' in body.decode()
    assert request(viewer_server, "GET", "/")[1]["content-security-policy"] != policy  # fresh nonce per page


def test_index_then_run_api(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    status, _, body = request(viewer_server, "GET", "/api/index")
    index = json.loads(body)
    assert status == 200 and len(index["runs"]) == 16 and "files" not in index["runs"][0]
    run_id = index["runs"][0]["id"]
    status, _, body = request(viewer_server, "GET", f"/api/run?id={quote(run_id, safe='')}")
    assert status == 200 and json.loads(body)["files"][0]["name"] == "answer.md"
    status, headers, body = request(viewer_server, "GET", f"/api/file?run={quote(run_id, safe='')}&name=data.bin")
    assert status == 200 and body == b"\x00\x01\x02binary\xff\xfe"
    assert headers["content-type"] == "application/octet-stream" and headers["content-disposition"].startswith("attachment")


@pytest.fixture
def outside_link(workspace: dict[str, Path]) -> Iterator[Path]:
    """A symlink in a run's outputs/ pointing out of the workspace, removed afterwards."""
    link = workspace["first"] / "outputs" / "link"
    os.symlink("/etc/passwd", link)
    yield link
    link.unlink()


@pytest.mark.parametrize("name", ["../grading.json", "../../../benchmark.json", "/etc/passwd", "%2e%2e/grading.json", "", "link"])
def test_file_api_refuses_paths_out_of_outputs(viewer_server: ViewerServer, workspace: dict[str, Path],
                                               outside_link: Path, name: str) -> None:
    run_id = quote(build_index(workspace["it2"]).runs[0].run_id, safe="")
    status, _, body = request(viewer_server, "GET", f"/api/file?run={run_id}&name={quote(name, safe='')}")
    assert status == 404, body
    assert b"root:" not in body


def test_symlink_out_is_listed_as_skipped(workspace, outside_link) -> None:  # type: ignore[no-untyped-def]
    index = build_index(workspace["it2"])
    files = {f["name"]: f for f in run_payload(index, index.runs[0].run_id, None, served=False)["files"]}  # type: ignore[index]
    assert files["link"]["kind"] == "skipped" and "html" not in files["link"]


def test_unknown_routes_and_runs_404(viewer_server: ViewerServer) -> None:
    assert request(viewer_server, "GET", "/api/run?id=..%2F..%2F")[0] == 404
    assert request(viewer_server, "GET", "/benchmark.json")[0] == 404
    assert request(viewer_server, "GET", "/../../etc/passwd")[0] == 404


def test_feedback_post_writes_spec_shape_atomically(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    run_id = build_index(workspace["it2"]).runs[0].run_id
    assert post_json(viewer_server, {"run_id": run_id, "feedback": "first"}) == 200
    assert post_json(viewer_server, {"run_id": run_id, "feedback": "second"}) == 200
    assert post_json(viewer_server, {"status": "complete"}) == 200
    data = json.loads((workspace["it2"] / "feedback.json").read_text())
    assert data["status"] == "complete"
    assert [(r["run_id"], r["feedback"]) for r in data["reviews"]] == [(run_id, "second")]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", data["reviews"][0]["timestamp"])
    assert not list(workspace["it2"].glob(".feedback.json.*"))  # no temp file left behind
    status, _, body = request(viewer_server, "GET", "/api/index")
    assert json.loads(body)["feedback"] == {run_id: "second"}


def test_writes_other_than_feedback_are_refused(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    run_id = build_index(workspace["it2"]).runs[0].run_id
    before = (workspace["it2"] / "benchmark.json").read_bytes()
    assert post_json(viewer_server, {"run_id": run_id, "feedback": "x"}, "/api/benchmark") == 404
    assert post_json(viewer_server, {"run_id": run_id, "feedback": "x"}, "/api/feedback/../../benchmark.json") == 404
    assert request(viewer_server, "PUT", "/api/feedback", b"{}", {"Content-Type": "application/json"})[0] == 405
    assert request(viewer_server, "DELETE", "/api/feedback")[0] == 405
    assert post_json(viewer_server, {"run_id": "../../evil", "feedback": "x"}) == 400
    assert post_json(viewer_server, {"run_id": run_id, "feedback": 5}) == 400
    assert post_json(viewer_server, {"status": "hacked"}) == 400
    assert post_json(viewer_server, ["not", "an", "object"]) == 400
    assert (workspace["it2"] / "benchmark.json").read_bytes() == before
    assert not (workspace["it2"] / "feedback.json").exists()


def test_non_json_and_oversized_bodies_are_refused(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    run_id = build_index(workspace["it2"]).runs[0].run_id
    form = f"run_id={run_id}&feedback=x".encode()
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    assert request(viewer_server, "POST", "/api/feedback", form, form_type)[0] == 415
    assert request(viewer_server, "POST", "/api/feedback", b"{nope", {"Content-Type": "application/json"})[0] == 400
    # Refused on the declared length, before any of the body is read.
    conn = http.client.HTTPConnection("127.0.0.1", viewer_server.port, timeout=10)
    conn.putrequest("POST", "/api/feedback")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(MAX_BODY + 1))
    conn.endheaders()
    assert conn.getresponse().status == 413
    conn.close()
    assert request(viewer_server, "POST", "/api/feedback", b"", {"Content-Type": "application/json",
                                                                 "Content-Length": "-5"})[0] == 413
    assert not (workspace["it2"] / "feedback.json").exists()


def test_foreign_host_and_origin_are_refused(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    assert request(viewer_server, "GET", "/api/index", headers={"Host": "evil.example"})[0] == 403
    run_id = build_index(workspace["it2"]).runs[0].run_id
    body = json.dumps({"run_id": run_id, "feedback": "x"}).encode()
    status = request(viewer_server, "POST", "/api/feedback", body,
                     {"Content-Type": "application/json", "Origin": "http://evil.example"})[0]
    assert status == 403
    assert not (workspace["it2"] / "feedback.json").exists()


def test_corrupt_feedback_file_is_not_overwritten(viewer_server: ViewerServer, workspace: dict[str, Path]) -> None:
    path = workspace["it2"] / "feedback.json"
    path.write_text("{broken")
    run_id = build_index(workspace["it2"]).runs[0].run_id
    assert post_json(viewer_server, {"run_id": run_id, "feedback": "x"}) == 409
    assert path.read_text() == "{broken"


# --- command line ------------------------------------------------------------------------


@pytest.mark.slow
def test_view_static_command(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "review.html"
    assert run_cli("view", str(workspace["it2"]), "--previous", str(workspace["it1"]), "--static", str(out)) == 0
    html = out.read_text()
    assert html.startswith("<!doctype html>") and 'id="boot"' in html and "previous feedback: too long" in html


def test_view_rejects_missing_folder(tmp_path: Path) -> None:
    assert run_cli("view", str(tmp_path / "nope"), "--static", str(tmp_path / "x.html")) == 2


@pytest.mark.slow
def test_static_page_respects_its_size_budget(workspace: dict[str, Path]) -> None:
    html = static_html(workspace["it2"], budget=5_000)
    boot = json.loads(html.split('id="boot">', 1)[1].split("</script>", 1)[0])
    files = [f for d in boot["details"].values() for f in d["files"]]
    skipped = [f for f in files if f["kind"] == "skipped"]
    assert skipped and all("size budget" in f["note"] for f in skipped)
    assert files[0]["kind"] == "markdown"  # the first files still fit


def test_symlinked_run_folders_are_not_listed(workspace: dict[str, Path], tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "outputs").mkdir(parents=True)
    (outside / "outputs" / "secret.txt").write_text("secret")
    cfg = workspace["it2"] / "eval-99-planted" / "with_skill"
    cfg.mkdir(parents=True)
    try:
        os.symlink(outside, cfg / "run-1")
        ids = [r.run_id for r in build_index(workspace["it2"]).runs]
        assert len(ids) == 16 and not [i for i in ids if i.startswith("eval-99")]
    finally:
        shutil.rmtree(cfg.parent)


def test_view_port_in_use_is_bad_input(workspace: dict[str, Path]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert run_cli("view", str(workspace["it2"]), "--no-browser", "--port", str(port)) == 2
