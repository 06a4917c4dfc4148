"""`report ITERATION --format pr-comment`: verdict first, effect with its interval, the change
against the base iteration with regressions named, cost when recorded, a collapsed per-eval
table; under GitHub's 65,536-character limit however many evals; hostile names inert; secrets
masked (set in the environment, or only remembered by the iteration)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import invoke
from iteration_factory import write_iteration

from skillassay.report.pr_comment import GITHUB_LIMIT, MARKER_PREFIX
from skillassay.store.secret_hashes import new_record

SHA = "0123456789abcdef0123456789abcdef01234567"


def _pair(ws: Path, n_evals: int, regressed: set[int], trials: int = 5) -> Path:
    good = {i: ("P" * trials, "F" * trials) for i in range(1, n_evals + 1)}
    write_iteration(ws, 1, good, thresholds={"min_pass_rate": 0.5})
    now = {i: (("F" * trials) if i in regressed else "P" * trials, "F" * trials) for i in range(1, n_evals + 1)}
    return write_iteration(ws, 2, now, thresholds={"min_pass_rate": 0.5})


def _comment(it: Path, *extra: object, env: dict[str, str] | None = None) -> str:
    from cli_runner import cli

    result = cli(["report", it, "--format", "pr-comment", "--head-sha", SHA, *extra], env=env)
    assert result.code == 0 and not result.crashed, result.output
    return result.stdout


def test_fifty_evals_verdict_first_regressions_named_table_collapsed(tmp_path: Path) -> None:
    it = _pair(tmp_path / "ws", 50, regressed={7, 31, *range(32, 50)})
    invoke("compare", it)  # what `run` does after aggregating: comparison_previous.json
    text = _comment(it, "--link", "https://github.com/o/r/actions/runs/9")
    assert len(text) < GITHUB_LIMIT
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[0] == f"{MARKER_PREFIX}synthetic -->"
    assert lines[1].startswith("## ") and "skillassay: **" in lines[1]  # the verdict, first
    assert f"head commit `{SHA[:12]}`" in text
    assert "**Effect of the skill:**" in text and "95% CI" in text.split("**Effect of the skill:**")[1].split("\n")[0]
    regressed = next(line for line in lines if line.startswith("- **Regressed:**"))
    assert "eval-7 (e7) 5/5 → 0/5" in regressed and "eval-31 (e31)" in regressed
    assert regressed.endswith("and 5 more")  # 20 regressed: 15 named, the rest counted
    details = text.split("<details>")[1]
    assert details.count("\n| ") == 1 + 50  # the header, one row per eval
    assert "[Full report, transcripts and the review page](https://github.com/o/r/actions/runs/9)" in text
    assert text.index("<details>") > text.index("**Against the base branch**")


@pytest.mark.slow  # 600 evals written and gated: about 15 s here
def test_a_huge_suite_with_hostile_names_stays_under_the_limit_and_inert(tmp_path: Path) -> None:
    it = _pair(tmp_path / "ws", 600, regressed=set(), trials=1)
    bench_path = it / "benchmark.json"
    bench = json.loads(bench_path.read_text())
    hostile = "<img src=x onerror=alert(1)> | [click](javascript:alert(1)) " + "x" * 300
    for row in bench["per_eval"]:
        row["eval_name"] = hostile
    bench_path.write_text(json.dumps(bench))
    text = _comment(it)
    assert len(text) <= GITHUB_LIMIT
    assert "more evals are left out to keep this comment under GitHub's size limit" in text
    assert "see report.md in the run's artifacts" in text
    assert not re.search(r"(?<!\\)[<>]", text.split("-->", 1)[1].replace("<details>", "").replace("</details>", "")
                         .replace("<summary>", "").replace("</summary>", ""))  # every < > of a name escaped
    assert "[click](" not in text  # the brackets escaped: no link
    assert text.splitlines()[1].startswith("## ")


def test_base_option_compares_with_the_base_branch_iteration(tmp_path: Path) -> None:
    base = write_iteration(tmp_path / "main", 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF")})
    head = write_iteration(tmp_path / "pr", 1, {1: ("FFF", "FFF"), 2: ("PPP", "FFF")})
    text = _comment(head, "--base", base)
    assert "- **Regressed:** eval-1 (e1) 3/3 → 0/3" in text
    alone = _comment(head)
    assert "no base-branch iteration to compare with" in alone


def test_cost_is_shown_when_runs_recorded_one(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, {1: ("PP", "FF")})
    assert "**Cost:**" not in _comment(it)
    bench = json.loads((it / "benchmark.json").read_text())
    bench["runs"] = [{"eval_id": 1, "eval_name": "e1", "configuration": config, "run_number": k,
                      "result": {"pass_rate": 1.0, "passed": 1, "failed": 0, "total": 1, "time_seconds": 2.0,
                                 "tokens": 100, "tool_calls": 0, "errors": 0,
                                 "cost_usd": 0.25 if config == "with_skill" else 0.1},
                      "expectations": []}
                     for config in ("with_skill", "without_skill") for k in (1, 2)]
    (it / "benchmark.json").write_text(json.dumps(bench))
    text = _comment(it)
    assert "**Cost:** with skill: $0.5000 over 2 trials ($0.2500 per trial); baseline: $0.2000 over 2 trials" in text


def test_secrets_are_masked_whether_set_or_only_remembered(tmp_path: Path) -> None:
    it = _pair(tmp_path / "ws", 3, regressed={1})
    live, remembered = "sk-live-0123456789abcdef", "ghp_remembered0123456789abcdef"
    bench = json.loads((it / "benchmark.json").read_text())
    bench["per_eval"][0]["eval_name"] = f"leak {live} and {remembered}"
    (it / "benchmark.json").write_text(json.dumps(bench))
    record = json.loads((it / "iteration.json").read_text())
    record["redacted_secrets"] = new_record([remembered])
    (it / "iteration.json").write_text(json.dumps(record))
    text = _comment(it, env={"ACME_API_KEY": live})
    assert live not in text and remembered not in text and "[REDACTED]" in text


def test_unknown_format_is_bad_input(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, {1: ("P", "F")})
    result = invoke("report", it, "--format", "html")
    assert result.code == 2 and "--format" in result.flat and not result.crashed


@pytest.mark.browser
def test_the_comment_rendered_reads_verdict_first_with_the_table_collapsed(tmp_path: Path) -> None:
    """Rendered as GitHub renders comments (CommonMark, tables, raw HTML for <details>) in real
    Chromium: the verdict is the first heading, the table stays folded until opened, a hostile
    name is text."""
    from browser_support import ARGS, CHROMIUM
    from markdown_it import MarkdownIt
    from playwright.sync_api import sync_playwright

    it = _pair(tmp_path / "ws", 50, regressed={7})
    bench = json.loads((it / "benchmark.json").read_text())
    bench["per_eval"][2]["eval_name"] = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    (it / "benchmark.json").write_text(json.dumps(bench))
    invoke("compare", it)
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(_comment(it))
    page_file = tmp_path / "comment.html"
    page_file.write_text(f"<!doctype html><meta charset=utf-8>{html}", encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            pg = browser.new_page()
            dialogs: list[str] = []
            pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            pg.goto(page_file.as_uri())
            first = pg.evaluate("document.body.querySelector('h1,h2,h3,p,ul,details,table').tagName")
            assert first == "H2" and pg.inner_text("h2").split("skillassay: ")[1].split()[0] in (
                "PASS", "FAIL", "INCONCLUSIVE")
            assert not pg.is_visible("table")
            pg.click("summary")
            assert pg.is_visible("table")
            assert pg.locator("tbody tr").count() == 50
            assert pg.locator("img").count() == 0 and pg.locator("body script").count() == 0
            assert "<img src=x" in pg.inner_text("table")  # shown as text
            assert dialogs == []
        finally:
            browser.close()


def test_cost_section_of_the_benchmark_is_read_when_there(tmp_path: Path) -> None:
    it = write_iteration(tmp_path / "ws", 1, {1: ("PP", "FF"), 2: ("PP", "FF")})
    bench = json.loads((it / "benchmark.json").read_text())
    bench["cost"] = {
        "configurations": {
            "with_skill": {"total_usd": 0.8, "mean_per_trial_usd": 0.2, "mean_per_trial_interval": [0.15, 0.25],
                           "total_is_lower_bound": True},
            "without_skill": {"total_usd": 0.4, "mean_per_trial_usd": 0.1, "mean_per_trial_interval": [0.05, 0.15]}},
        "effect": {"mean_difference_usd": 0.1, "interval": [0.05, 0.15]}}
    (it / "benchmark.json").write_text(json.dumps(bench))
    text = _comment(it)
    assert ("**Cost:** with skill: at least $0.8000 in all, $0.2000 per trial (95% CI $0.1500 to $0.2500); "
            "baseline: $0.4000 in all, $0.1000 per trial (95% CI $0.0500 to $0.1500); "
            "the skill adds $0.1000 per trial (95% CI $0.0500 to $0.1500).") in text
