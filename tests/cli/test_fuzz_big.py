"""Big workspaces: the static page applies its budget while rendering (runs past it are listed
with grades, prompt and file names, not rendered), and says so on the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import skillassay.viewer.build as build
from skillassay.store.jsonio import write_json
from skillassay.viewer.static_html import SKIPPED_NOTE, static_html


def write_runs(it: Path, n_evals: int, runs: int, answer: str) -> None:
    for e in range(1, n_evals + 1):
        ev = it / f"eval-{e}-case-{e}"
        write_json(ev / "eval_metadata.json", {"eval_id": e, "eval_name": f"case-{e}", "prompt": f"Question {e}?"})
        for config in ("with_skill", "without_skill"):
            for k in range(1, runs + 1):
                run = ev / config / f"run-{k}"
                (run / "outputs").mkdir(parents=True)
                (run / "outputs" / "answer.md").write_text(answer)
                (run / "transcript.md").write_text(answer)
                write_json(run / "grading.json", {"expectations": [{"text": "says 4433", "passed": k % 2 == 0,
                                                                     "evidence": "x"}],
                                                  "summary": {"passed": k % 2 == 0, "failed": k % 2, "total": 1}})


def boot_of(html: str) -> dict:
    return json.loads(html.split('id="boot">', 1)[1].split("</script>", 1)[0])


def test_runs_past_the_budget_are_listed_not_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    it = tmp_path / "iteration-1"
    answer = "# Answer\n\n" + "The port is **4433**.\n\n" * 200  # ~4.6 KB
    write_runs(it, 5, 4, answer)  # 40 runs
    rendered: list[str] = []
    real = build.render_file
    monkeypatch.setattr(build, "render_file", lambda path, name, href: rendered.append(name) or real(path, name, href))
    html = static_html(it, budget=30_000, render_seconds=None)
    boot = boot_of(html)
    details = list(boot["details"].values())
    assert len(details) == 40 and set(boot["details"]) == {r["id"] for r in boot["index"]["runs"]}
    full = [d for d in details if all(f["kind"] != "skipped" for f in d["files"]) and d["transcript_html"]]
    assert 1 <= len(full) <= 5  # ~11 KB of HTML a run (answer + transcript): the budget holds a few
    assert details[: len(full)] == full  # the embedded runs are the first ones, in run order
    assert len(rendered) <= len(full) + 1  # files of runs past the budget were never opened
    late = details[-1]
    assert late["grading"]["expectations"][0]["text"] == "says 4433" and late["prompt"] == "Question 5?"
    assert late["files"] == [{"name": "outputs/", "kind": "skipped", "size": None, "truncated": True,
                              "note": SKIPPED_NOTE}]
    assert late["transcript_note"] == SKIPPED_NOTE
    note = boot["index"]["budget_note"]
    assert "of 40 runs" in note and "without --static" in note


def test_a_page_within_budget_has_no_note(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    write_runs(it, 1, 2, "# Short\n")
    boot = boot_of(static_html(it, render_seconds=None))
    assert "budget_note" not in boot["index"]
    assert all(d["files"][0]["kind"] == "markdown" and d["transcript_html"] for d in boot["details"].values())


def test_the_time_budget_stops_rendering(tmp_path: Path) -> None:
    it = tmp_path / "iteration-1"
    write_runs(it, 2, 3, "# Answer\n\nfine\n")
    boot = boot_of(static_html(it, render_seconds=0.0))
    assert all(d["files"][0]["kind"] == "skipped" for d in boot["details"].values())
    assert "of 12 runs" in boot["index"]["budget_note"]
