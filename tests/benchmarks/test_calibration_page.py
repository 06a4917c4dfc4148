"""docs/calibration.md is generated from benchmarks/results/calibration.json (issue 35): the page
is the rendering of the results file, checked like docs/cli.md; and a few settings re-run with
few experiments agree with the stored rates within their Monte-Carlo intervals."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import repo_paths

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
import calibration  # noqa: E402
import calibration_page  # noqa: E402


def test_docs_calibration_md_is_the_rendering_of_the_results_file() -> None:
    data = json.loads(calibration_page.RESULTS.read_text(encoding="utf-8"))
    rendered = calibration_page.render(data)
    checked_in = calibration_page.PAGE.read_text(encoding="utf-8") if calibration_page.PAGE.exists() else ""
    if rendered != checked_in:
        pytest.fail("docs/calibration.md differs from the rendering of benchmarks/results/calibration.json: "
                    "run `python benchmarks/calibration_page.py` (or re-run calibration.py / adaptive.py with --save)")
    assert data["calibration"]["settings"] and "## Overall" in rendered


def test_saving_writes_the_counts_and_the_page_renders_them(tmp_path: Path) -> None:
    s = calibration.Setting("beta22", 3, 10)
    tally = calibration.AATally()
    tally.false_pass["min_pass_rate"] = calibration.Rate(3, 150)
    tally.cover["difference"] = calibration.Rate(148, 150)
    path = tmp_path / "results.json"
    calibration_page.save_calibration(path, {s: tally}, {}, {"command": "c", "seed": 0, "experiments_aa": 150,
                                                             "experiments_effect": 50, "power": False})
    calibration_page.save_adaptive(path, "python benchmarks/adaptive.py", "report\nlines")
    data = json.loads(path.read_text())
    row = data["calibration"]["settings"][0]
    assert row["false_pass"]["min_pass_rate"] == {"hits": 3, "n": 150}
    page = calibration_page.render(data)
    assert "2.0% [0.7, 5.7]" in page and "98.7% [95.3, 99.6]" in page and "report\nlines" in page
    assert calibration_page.render(data) == page  # nothing but the file goes in


def _agree(stored: dict[str, int], rerun: calibration.Rate) -> bool:
    """Two binomial proportions agree within 3.3 SE of their pooled rate (about 0.1% apart by chance)."""
    if not stored["n"] or not rerun.n:
        return True
    pooled = (stored["hits"] + rerun.hits) / (stored["n"] + rerun.n)
    se = math.sqrt(max(pooled * (1 - pooled), 1e-4) * (1 / stored["n"] + 1 / rerun.n))
    return abs(stored["hits"] / stored["n"] - rerun.hits / rerun.n) <= 3.3 * se


@pytest.mark.sim
def test_a_few_settings_rerun_agree_with_the_stored_rates() -> None:
    data = json.loads(calibration_page.RESULTS.read_text(encoding="utf-8"))
    stored = {(s["population"], s["k"], s["n_evals"]): s for s in data["calibration"]["settings"]}
    bad = []
    for key in (("beta22", 3, 10), ("mix", 3, 10)):
        if key not in stored:
            continue
        s = calibration.Setting(*key)
        tally = calibration.AATally()
        for i in range(20, 40):  # experiments of their own seeds, not the first ones re-read
            calibration.aa_experiment(calibration.experiment_rng(data["calibration"]["meta"]["seed"], s, 0, 10_000 + i),
                                      s, tally, i)
        for g in calibration.GATES:
            for side in ("pass", "fail"):
                if not _agree(stored[key][f"false_{side}"][g], getattr(tally, f"false_{side}")[g]):
                    bad.append((key, g, side))
        for c, r in tally.cover.items():
            if not _agree(stored[key]["cover"][c], r):
                bad.append((key, c))
    assert not bad, bad
