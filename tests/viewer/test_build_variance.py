"""The viewer's "Variance across runs" says pass rate per trial, as every other view does, and
names the per-expectation figure apart (issue 34: the table showed the per-expectation rate
where the tab's other pass rates are per trial)."""

from __future__ import annotations

import re
from typing import Any

import repo_paths

from skillassay.viewer.build import variance_rows


def run(eval_id: int, config: str, number: int, verdicts: list[bool | None]) -> dict[str, Any]:
    passed = sum(v is True for v in verdicts)
    return {"eval_id": eval_id, "eval_name": f"e{eval_id}", "configuration": config, "run_number": number,
            "result": {"pass_rate": passed / len(verdicts), "passed": passed, "failed": len(verdicts) - passed,
                       "total": len(verdicts), "time_seconds": 1.0, "tokens": 10},
            "expectations": [{"text": f"x{i}", "passed": v, "evidence": ""} for i, v in enumerate(verdicts)]}


def test_a_trial_passes_only_when_every_expectation_passes() -> None:
    bench = {"runs": [run(1, "with_skill", 1, [True, False]), run(1, "with_skill", 2, [True, True]),
                      run(1, "with_skill", 3, [True, None]), run(1, "with_skill", 4, [False, None])]}
    (row,) = variance_rows(bench)
    assert row["trials"] == {"passed": 1, "graded": 3, "rate": 1 / 3}  # the ungraded trial is in no rate
    assert row["pass"]["mean"] == (0.5 + 1 + 0.5 + 0) / 4  # the expectation pass rate, per run


def test_the_table_names_each_rate() -> None:
    js = (repo_paths.SRC / "skillassay" / "viewer" / "assets" / "viewer.js").read_text(encoding="utf-8")
    section = js[js.index('section("Variance across runs"'):]
    section = section[:section.index("\n    if (b.comparison)")]
    heads = re.findall(r'"([^"]*pass rate[^"]*)"', section)
    assert any(h.startswith("pass rate") and "trial" in h for h in heads), heads
    assert any(h.startswith("expectation pass rate") for h in heads), heads
    assert "r.trials" in section
