"""The agent filter in a real headless Chromium (issue 37): choosing an agent shows only its runs,
"all agents" brings every run back, and a single-agent iteration shows no filter."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import ARGS, CHROMIUM, new_page, open_viewer
from iteration_factory import write_iteration
from matrix_samples import EVALS, matrix_iteration, write_matrix

from skillassay.viewer.server import start_server

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                                                                                 "/usr/bin/chromium")]

def test_runs_filter_by_agent(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    it = matrix_iteration(tmp_path)
    write_matrix(it)
    single = write_iteration(tmp_path / "single", 1, EVALS)
    servers = [start_server(it)[0], start_server(single)[0]]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            context, pg, watch = new_page(browser)
            open_viewer(pg, servers[0].url)
            assert pg.text_content("#counter") == "1 / 8"
            assert pg.eval_on_selector_all("#agent-select option", "os => os.map(o => o.textContent)") == [
                "all 2 agents", "sonnet", "haiku"]
            pg.select_option("#agent-select", "haiku")
            pg.wait_for_function("() => document.body.dataset.runId.startsWith('agents/haiku/')", timeout=10000)
            assert pg.text_content("#counter") == "1 / 4"
            options = pg.eval_on_selector_all("#run-select option", "os => os.map(o => o.value)")
            assert len(options) == 4 and all(o.startswith("agents/haiku/") for o in options)
            pg.select_option("#agent-select", "")
            pg.wait_for_function("() => document.getElementById('counter').textContent.endsWith('/ 8')",
                                 timeout=10000)
            pg.click("#tab-benchmark")
            pg.wait_for_selector("#matrix-verdict", timeout=15000)
            assert (pg.text_content("#matrix-verdict") or "").startswith("NOT GATED")
            assert pg.eval_on_selector_all("#benchmark-panel td", "ts => ts.map(t => t.textContent)")[:2] == [
                "sonnet: claude-code", "50%"]
            open_viewer(pg, servers[1].url)
            assert pg.query_selector("#agent-select") is None
            assert watch.errors == [] and watch.dialogs == []
            context.close()
            browser.close()
    finally:
        for srv in servers:
            srv.shutdown()
            srv.server_close()
