"""The viewer shows a conversation turn by turn with each turn's grades, and the per-turn
table on the benchmark tab (viewer/turns.py, viewer.js); every string from the run is untrusted,
so hostile turn prompts and answers reach the page as text and never run (real Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_support import ARGS, CHROMIUM, new_page, open_viewer
from viewer_samples import PAYLOADS, SENTINEL, run_cli

from skillassay.viewer.build import _grading
from skillassay.viewer.render import TEXT_CAP
from skillassay.viewer.turns import conversation, turn_rows


def multi_turn_iteration(root: Path) -> Path:
    skill = root / "talker"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: talker\ndescription: Talks. Use when asked.\n---\n{PAYLOADS[1]}\n")
    evals = [{"id": i, "turns": [{"prompt": f"turn one {PAYLOADS[0]}", "expectations": [
        {"type": "contains", "value": "turn one", "text": f"names turn one {PAYLOADS[3]}"}]},
        {"prompt": f"turn two {PAYLOADS[2]}", "expectations": [{"type": "contains", "value": "never there"}]}],
        "expectations": [{"type": "contains", "value": "turn two"}]} for i in (1, 2)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "talker", "evals": evals}))
    assert run_cli("run", str(skill), "--executor", "echo", "--workspace", str(root / "ws"), "--trials", "1") in (0, 1, 3)
    return root / "ws" / "iteration-1"


def test_the_run_payload_carries_each_turn_and_the_benchmark_payload_the_per_turn_rows(tmp_path: Path) -> None:
    run = tmp_path / "run-1"
    run.mkdir()
    (run / "turns.json").write_text(json.dumps({"turns": [
        {"turn": 1, "prompt": PAYLOADS[0], "answer": PAYLOADS[1], "status": "ok", "error": None},
        {"turn": 2, "prompt": "two", "answer": "x" * 300_000, "status": "error", "error": PAYLOADS[2]}]}))
    (run / "grading.json").write_text(json.dumps({"expectations": [
        {"text": "a", "passed": True, "evidence": "", "turn": 1}, {"text": "b", "passed": None, "evidence": "",
                                                                    "turn": None}],
        "summary": {"passed": 1, "failed": 0, "total": 2, "pass_rate": 0.5}}))
    turns = conversation(run)
    assert [(t["turn"], t["prompt"], t["answer"][:40], t["error"]) for t in turns] == \
        [(1, PAYLOADS[0], PAYLOADS[1][:40], None), (2, "two", "x" * 40, PAYLOADS[2])]
    assert len(turns[1]["answer"]) == TEXT_CAP  # capped like every text the page shows
    assert [e["turn"] for e in _grading(run)["expectations"]] == [1, None]
    assert conversation(tmp_path) == []  # a folder without turns.json: no conversation
    bench = {"turns": {"per_turn": [{"turn": 1, "n_evals": 2, "with_skill": {"pass_rate": 1.0, "passes": 4,
                                                                             "trials": 4, "interval": [0.4, 1.0]},
                                     "baseline": {"pass_rate": 0.0, "passes": 0, "trials": 4, "interval": None},
                                     "difference": {"mean": 1.0, "interval": [-1.0, 1.0], "p_value": 0.5}}]}}
    assert turn_rows(bench) == [{"turn": 1, "n_evals": 2,
                                 "with_skill": {"rate": 1.0, "passes": 4, "trials": 4, "interval": [0.4, 1.0]},
                                 "baseline": {"rate": 0.0, "passes": 0, "trials": 4, "interval": None},
                                 "difference": 1.0, "difference_interval": [-1.0, 1.0], "p_value": 0.5}]
    assert turn_rows({}) == [] and turn_rows({"turns": "damaged"}) == []


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium")
def test_the_conversation_renders_as_inert_text_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    it = multi_turn_iteration(tmp_path)
    out = tmp_path / "view.html"
    assert run_cli("view", str(it), "--static", str(out)) == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context, pg, watch = new_page(browser, bypass_csp=True)  # escaping alone must hold
        try:
            open_viewer(pg, out.as_uri())
            pg.wait_for_selector(".conversation")
            assert pg.locator(".conversation .turn").count() == 2
            assert f"turn two {PAYLOADS[2]}" in pg.text_content(".turn[data-turn='2'] .turn-prompt")
            turn1 = pg.text_content(".turn[data-turn='1']")
            assert "PASS" in turn1 and f"names turn one {PAYLOADS[3]}" in turn1
            assert "FAIL" in pg.text_content(".turn[data-turn='2']")
            assert "Whole conversation" in pg.text_content(".conversation")
            pg.click("#tab-benchmark")
            pg.wait_for_selector("body[data-benchmark-ready='1']")
            assert "Per turn: where in the conversation the skill helps" in pg.text_content("#benchmark-panel")
            assert pg.evaluate(f"typeof window.{SENTINEL}") == "undefined"
            assert not watch.dialogs and not watch.errors, (watch.dialogs, watch.errors)
            assert pg.evaluate("document.querySelectorAll('svg, iframe, [onerror], [onload]').length") == 0
        finally:
            context.close()
            browser.close()
