"""The viewer in a real headless Chromium (Debian's, at /usr/bin/chromium): navigation, every
output kind, feedback round trips, the static file from file://, and an injection corpus that
must never run. Screenshots of each tab go to test-artifacts/."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from browser_support import ARGS, CHROMIUM, Watch, new_page, open_viewer
from viewer_samples import EVIL_NAMES, PAYLOADS, SENTINEL, run_cli

from skillassay.viewer.build import build_index
from skillassay.viewer.server import ViewerServer

ARTIFACTS = repo_paths.REPO / "test-artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium "
                                                              "(apt-get install -y chromium)")]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Watch]]:
    context, pg, watch = new_page(browser)
    yield pg, watch
    context.close()


def wait_js(pg: Any, predicate: str, arg: Any = None) -> None:
    """Poll a function, not a string expression: the page's CSP (rightly) forbids eval."""
    pg.wait_for_function(predicate, arg=arg, timeout=10000)


def wait_run(pg: Any, run_id: str) -> None:
    wait_js(pg, "(id) => document.body.dataset.runId === id", run_id)


def current_run(pg: Any) -> str:
    return pg.evaluate("document.body.dataset.runId")


def shot(pg: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_navigation_with_buttons_and_arrow_keys(page: tuple[Any, Watch], viewer_server: ViewerServer) -> None:
    pg, watch = page
    ids = [r.run_id for r in viewer_server.index.runs]
    open_viewer(pg, viewer_server.url)
    assert current_run(pg) == ids[0]
    assert pg.text_content("#counter") == f"1 / {len(ids)}"
    assert pg.is_disabled("#prev")
    pg.click("#next")
    wait_run(pg, ids[1])
    pg.keyboard.press("ArrowRight")
    wait_run(pg, ids[2])
    assert pg.text_content("#counter") == f"3 / {len(ids)}"
    pg.keyboard.press("ArrowLeft")
    wait_run(pg, ids[1])
    pg.click("#prev")
    wait_run(pg, ids[0])
    pg.focus("#feedback")  # arrows inside the feedback box move the caret, not the run
    pg.keyboard.press("ArrowRight")
    pg.wait_for_timeout(200)
    assert current_run(pg) == ids[0]
    pg.select_option("#run-select", ids[-1])
    wait_run(pg, ids[-1])
    assert pg.is_disabled("#next")
    assert not watch.errors and not watch.dialogs


def test_each_output_kind_renders(page: tuple[Any, Watch], viewer_server: ViewerServer) -> None:
    pg, watch = page
    open_viewer(pg, viewer_server.url)
    assert pg.text_content(".prompt pre") == "What port does the Acme VPN server use?"
    assert pg.locator(".grades .expectation .badge").first.text_content() == "PASS"
    assert "Found '4433'" in pg.locator(".evidence").first.text_content()
    md = pg.locator(".outputs .file-markdown", has_text="report.md")
    assert md.locator("table td").first.text_content() == "1" and md.locator("strong").text_content() == "bold"
    assert pg.locator(".outputs .file-markdown", has_text="answer.md").locator("h1").text_content() == "Acme VPN"
    code = pg.locator(".outputs .file-code", has_text="script.py")
    assert code.locator(".hl span.k").first.text_content() == "def"
    assert pg.locator(".outputs .file-text", has_text="log.txt").locator("pre").text_content().strip() == "plain log line"
    img = pg.locator(".file-image img")
    assert img.get_attribute("alt") == "chart.png"
    assert pg.evaluate("document.querySelector('.file-image img').naturalWidth") == 4
    link = pg.locator(".outputs .file-binary a.download")
    assert link.get_attribute("download") == "data.bin"
    with pg.expect_download() as dl:
        link.click()
    assert Path(dl.value.path()).read_bytes() == b"\x00\x01\x02binary\xff\xfe"
    pg.click("details.previous summary")
    assert pg.text_content(".previous-feedback") == "previous feedback: too long"
    pg.click("details.transcript summary")
    assert "Transcript" in pg.text_content("details.transcript")
    shot(pg, "viewer-outputs-tab.png")
    assert not watch.errors and not watch.dialogs


def test_benchmark_tab(page: tuple[Any, Watch], viewer_server: ViewerServer) -> None:
    pg, watch = page
    open_viewer(pg, viewer_server.url)
    pg.click("#tab-benchmark")
    pg.wait_for_selector("body[data-benchmark-ready='1']")
    assert pg.is_hidden("#outputs-panel")
    panel = pg.text_content("#benchmark-panel")
    for heading in ("Gate", "Summary", "Per eval", "Variance across runs", "Regressions", "Analyst notes", "Trend across iterations"):
        assert heading in panel
    assert pg.locator("#benchmark-panel .badge").first.text_content() in {"PASS", "FAIL", "INCONCLUSIVE"}
    widths = pg.evaluate("[...document.querySelectorAll('img.chart')].map(i => i.naturalWidth)")
    assert len(widths) == 2 and all(w > 100 for w in widths)  # per-eval bars and the trend
    trend_rows = pg.locator("section.block", has_text="Trend across iterations").locator("tbody tr")
    assert trend_rows.count() == 2
    variance = pg.locator("section.block", has_text="Variance across runs")
    assert variance.locator("th").nth(3).text_content() == "pass rate (trials passed)"  # per trial, as elsewhere
    assert re.fullmatch(r"\d+% \(\d+/\d+\)", variance.locator("tbody tr td").nth(3).text_content() or "")
    shot(pg, "viewer-benchmark-tab.png")
    pg.keyboard.press("ArrowRight")  # arrows do nothing on the benchmark tab
    pg.click("#tab-outputs")
    assert current_run(pg) == viewer_server.index.runs[0].run_id
    assert not watch.errors and not watch.dialogs


def test_feedback_is_saved_and_back_after_reload(page: tuple[Any, Watch], viewer_server: ViewerServer) -> None:
    pg, watch = page
    ids = [r.run_id for r in viewer_server.index.runs]
    open_viewer(pg, viewer_server.url)
    posts: list[str] = []
    pg.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    text = "Answer is right but far too verbose."
    pg.locator("#feedback").press_sequentially(text, delay=5)
    wait_js(pg, "() => document.getElementById('save-state').textContent === 'saved'")
    assert 1 <= len(posts) < len(text) / 2  # debounced, not one POST per key
    saved = json.loads((viewer_server.iteration_dir / "feedback.json").read_text())
    assert saved["status"] == "in_progress"
    assert [(r["run_id"], r["feedback"]) for r in saved["reviews"]] == [(ids[0], text)]
    pg.click("#next")
    wait_run(pg, ids[1])
    assert pg.input_value("#feedback") == ""
    pg.fill("#feedback", "second run note")
    pg.click("#prev")  # leaving the run flushes its pending save at once
    wait_run(pg, ids[0])
    wait_js(pg, "() => Number(document.body.dataset.saved) >= 2")
    pg.reload()
    pg.wait_for_selector("body[data-ready='1']")
    assert current_run(pg) == ids[0]  # the position survives a reload too
    assert pg.input_value("#feedback") == text
    pg.click("#next")
    wait_run(pg, ids[1])
    assert pg.input_value("#feedback") == "second run note"
    pg.click("#complete")
    wait_js(pg, "() => document.getElementById('save-state').textContent === 'review marked complete'")
    saved = json.loads((viewer_server.iteration_dir / "feedback.json").read_text())
    assert saved["status"] == "complete" and {r["run_id"] for r in saved["reviews"]} == {ids[0], ids[1]}
    assert not watch.errors and not watch.dialogs


def test_static_file_works_from_file_url(page: tuple[Any, Watch], workspace: dict[str, Path], tmp_path: Path) -> None:
    pg, watch = page
    out = tmp_path / "review.html"
    assert run_cli("view", str(workspace["it2"]), "--previous", str(workspace["it1"]), "--static", str(out)) == 0
    ids = [r.run_id for r in build_index(workspace["it2"]).runs]
    open_viewer(pg, out.as_uri())
    assert current_run(pg) == ids[0]
    assert pg.evaluate("document.querySelector('.file-image img').naturalWidth") == 4
    with pg.expect_download() as dl:
        pg.click(".file-binary a.download")
    assert Path(dl.value.path()).read_bytes() == b"\x00\x01\x02binary\xff\xfe"
    pg.keyboard.press("ArrowRight")
    wait_run(pg, ids[1])
    pg.fill("#feedback", "static note")
    assert pg.is_visible("#export")
    with pg.expect_download() as dl:
        pg.click("#export")
    assert dl.value.suggested_filename == "feedback.json"
    exported = json.loads(Path(dl.value.path()).read_text())
    assert [(r["run_id"], r["feedback"]) for r in exported["reviews"]] == [(ids[1], "static note")]
    assert exported["status"] == "in_progress" and exported["reviews"][0]["timestamp"]
    pg.click("#tab-benchmark")
    pg.wait_for_selector("body[data-benchmark-ready='1']")
    shot(pg, "viewer-static-benchmark-tab.png")
    assert all(u.startswith(("file:", "data:", "blob:")) for u in watch.requests), watch.requests
    assert not watch.errors and not watch.dialogs


def visit_everything(pg: Any, n_runs: int) -> None:
    """Every run, every collapsed section, and the benchmark tab: every payload gets its chance."""
    for i in range(n_runs):
        wait_js(pg, "(n) => document.getElementById('counter').textContent.startsWith(n + ' /')", i + 1)
        wait_js(pg, "() => document.querySelector('.run-detail') !== null")
        pg.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        pg.wait_for_timeout(50)
        if i < n_runs - 1:
            pg.keyboard.press("ArrowRight")
    pg.click("#tab-benchmark")
    pg.wait_for_selector("body[data-benchmark-ready='1']")
    pg.wait_for_timeout(300)


def assert_inert(pg: Any, watch: Watch) -> None:
    assert pg.evaluate(f"typeof window.{SENTINEL}") == "undefined"
    assert not watch.dialogs, watch.dialogs
    assert pg.evaluate("document.scripts.length") == 2  # the JSON data and our own script
    assert pg.evaluate("document.querySelectorAll('iframe, object, embed, svg, [onerror], [onload]').length") == 0
    hrefs = pg.evaluate("[...document.querySelectorAll('[href], [src]')].map(e => e.getAttribute('href') || e.getAttribute('src'))")
    assert not [h for h in hrefs if not h.startswith(("data:", "api/file?"))], hrefs


@pytest.mark.parametrize("csp", ["enforced", "bypassed"])
@pytest.mark.parametrize("mode", ["served", "static"])
def test_injection_corpus_never_executes(browser: Any, evil_workspace: dict[str, Path], request: pytest.FixtureRequest,
                                         tmp_path: Path, mode: str, csp: str) -> None:
    """With the CSP bypassed too: escaping alone must hold, the CSP is the second wall."""
    context, pg, watch = new_page(browser, bypass_csp=csp == "bypassed")
    it2, it1 = evil_workspace["it2"], evil_workspace["it1"]
    n_runs = len(build_index(it2).runs)
    if mode == "served":  # conftest.py's server on it2 with it1 as previous, stopped after the test
        url = request.getfixturevalue("evil_viewer_server").url
    else:
        out = tmp_path / "evil.html"
        assert run_cli("view", str(it2), "--previous", str(it1), "--static", str(out)) == 0
        url = out.as_uri()
    try:
        open_viewer(pg, url)
        # The payloads are on screen as text, which proves they reached the page and stayed inert.
        assert PAYLOADS[0] in pg.text_content(".prompt pre")
        assert EVIL_NAMES[0] in pg.text_content(".outputs")
        assert pg.text_content(".grades").count(PAYLOADS[0]) >= 3  # expectation texts and evidence
        visit_everything(pg, n_runs)
        assert PAYLOADS[2] in pg.text_content("#benchmark-panel")  # analyst notes
        if mode == "served" and csp == "enforced":
            shot(pg, "viewer-injection-benchmark-tab.png")
        pg.click("#tab-outputs")
        assert PAYLOADS[0] in pg.text_content(".previous-feedback") or n_runs > 1
        assert_inert(pg, watch)
        # Clicking what looks like a link in hostile markdown must not run it either.
        for link in pg.locator(".md a").all():
            link.click(modifiers=[], no_wait_after=True)
        pg.wait_for_timeout(200)
        assert pg.evaluate(f"typeof window.{SENTINEL}") == "undefined"
        assert not watch.errors, watch.errors
    finally:
        context.close()
