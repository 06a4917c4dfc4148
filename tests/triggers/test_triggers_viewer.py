"""The viewer's Triggers tab in a real headless Chromium: the trigger figures of the workspace
(WORKSPACE/triggers/triggers.json) are shown, queries carrying injection payloads stay text,
and a workspace without trigger evals says how to make them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import repo_paths
from browser_support import ARGS, CHROMIUM, new_page, open_viewer
from test_triggers import AGENT, write_skill
from viewer_samples import PAYLOADS, SENTINEL, echo_run, run_cli

from skillassay.triggers import TriggerRequest, measure_triggers
from skillassay.viewer.build import triggers_view

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium")]


def test_triggers_tab_shows_figures_and_escapes_queries(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    skill = write_skill(tmp_path / "skills", "zebra-facts", "Knows zebra lore.")
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "zebra-facts", "evals": [
        {"id": 1, "prompt": "zebra?", "expectations": [{"type": "contains", "value": "zebra"}]}]}))
    ws = tmp_path / "ws"
    it = echo_run(skill, ws)
    assert triggers_view(it) is None
    queries = [{"query": f"zebra {PAYLOADS[0]}", "should_trigger": True},
               {"query": f"mango {PAYLOADS[1]}", "should_trigger": True},
               {"query": f"zebra {PAYLOADS[3]}", "should_trigger": False}]
    (skill / "evals" / "trigger_evals.json").write_text(json.dumps(queries))
    measure_triggers(TriggerRequest(skill_dir=skill, executor="command", runs=1, workspace=ws,
                                    options={"argv": [sys.executable, "-S", str(AGENT), "{prompt}"]}))
    out = tmp_path / "review.html"
    assert run_cli("view", str(it), "--static", str(out)) == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context, pg, watch = new_page(browser)
        open_viewer(pg, out.as_uri())
        pg.click("#tab-triggers")
        pg.wait_for_selector("body[data-triggers-ready='1']")
        assert pg.is_hidden("#outputs-panel") and pg.is_hidden("#benchmark-panel")
        text = pg.text_content("#triggers-panel") or ""
        assert "recall" in text and "50% [" in text and "1/2 runs" in text
        assert "Misses (should have triggered): 1" in text and "False triggers (should not have): 1" in text
        assert PAYLOADS[0] in text and PAYLOADS[1] in text  # shown as text, never run
        assert pg.evaluate(f"window.{SENTINEL}") is None and not watch.dialogs and not watch.errors
        shots = repo_paths.REPO / "test-artifacts"
        shots.mkdir(exist_ok=True)
        pg.screenshot(path=str(shots / "viewer-triggers-tab.png"), full_page=True)
        pg.click("#tab-outputs")
        assert pg.is_hidden("#triggers-panel")
        context.close()
        browser.close()
    shutil.rmtree(ws / "triggers")
    assert triggers_view(it) is None
