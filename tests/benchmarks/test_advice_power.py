"""A small run of benchmarks/advice_power.py: pilots, advice and re-runs through the library, the
table it prints, and the saved cells it can print again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import repo_paths

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
import advice_power  # noqa: E402

pytestmark = pytest.mark.sim  # Monte-Carlo checks of a statistical promise


def test_small_run_prints_and_saves_every_advice_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "cells.jsonl"
    advice_power.main(["--experiments", "6", "--k", "10", "--evals", "5", "--save", str(saved)])
    out = capsys.readouterr().out
    for kind in ("| difference |", "| ratio gate (1.0) |", "| min_pass_rate, evals |", "| min_pass_rate, trials if alike |"):
        assert kind in out
    assert "every eval at 0.5" in out
    row = next(line for line in out.splitlines() if line.startswith("| difference | K=10, 5 evals, effect +0.3"))
    given = row.split("|")[4].strip()
    assert given.endswith("/6")
    advice_power.main(["--table", str(saved)])
    again = capsys.readouterr().out
    assert row in again  # the saved cells give the same table


def test_capped_advice_is_counted_and_rerun_at_the_cap() -> None:
    t = advice_power.Tally()
    assert t.add(None, 200) is None
    assert t.add(5000, 200) == 200 and t.add(12, 200) == 12
    t.result(True)
    t.result(False)
    given, promised, kept, sizes, capped = t.cells()
    assert given == "2/3" and capped == "1" and kept.startswith("50.0% [")
    assert promised == "80.0%"  # no stated power: the target
    t.add(9, 200, 0.93)
    assert t.cells()[1] == "84.3%"  # the mean of what each advice stated
    assert "max 5,000" in sizes


def test_cells_are_planned_for_their_truth_or_for_a_stated_effect(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each cell plans its advice for its own true effect (the promise's boundary) unless
    --planned says otherwise; the table says which."""
    advice_power.main(["--experiments", "4", "--k", "10", "--evals", "5", "--kind", "paired", "--planned", "0.1"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| difference | K=10, 5 evals, effect +0.3"))
    assert row.split("|")[3].strip() == "0.1"
    assert advice_power.Cell("paired", 3, 10, 0.3).plan() == pytest.approx(advice_power.mean_difference(0.3))
    assert advice_power.Cell("gate", 3, 10, 0.2).plan() == 0.2


def test_the_true_mean_difference_is_below_the_effect_where_it_clips() -> None:
    # Clipping at 1 makes the true mean difference smaller than the effect (0.41 at +0.5).
    assert advice_power.mean_difference(0.0) == pytest.approx(0.0, abs=1e-9)
    assert 0.40 < advice_power.mean_difference(0.5) < 0.42
