"""A small run of benchmarks/advice_power.py: pilots, advice and re-runs through the library, the
table it prints, and the saved cells it can print again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import advice_power  # noqa: E402


def test_small_run_prints_and_saves_every_advice_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "cells.jsonl"
    advice_power.main(["--experiments", "6", "--k", "10", "--evals", "5", "--save", str(saved)])
    out = capsys.readouterr().out
    for kind in ("| difference |", "| ratio gate (1.0) |", "| min_pass_rate, evals |", "| min_pass_rate, trials |"):
        assert kind in out
    assert "every eval at 0.5" in out
    row = next(line for line in out.splitlines() if line.startswith("| difference | K=10, 5 evals, effect +0.3"))
    given = row.split("|")[3].strip()
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
    given, kept, sizes, capped = t.cells()
    assert given == "2/3" and capped == "1" and kept.startswith("50.0% [")
    assert "max 5,000" in sizes


def test_prior_mode_prints_the_promise_beside_the_success_rate(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--truth prior: each experiment draws its own truth; the table keys cells by the prior and
    puts the mean assurance promised beside the success rate, with a row pooling the cells."""
    saved = tmp_path / "prior.jsonl"
    advice_power.main(["--truth", "prior", "--experiments", "6", "--k", "10", "--evals", "5",
                       "--kind", "paired", "--save", str(saved)])
    out = capsys.readouterr().out
    assert "assurance promised" in out and "effect +0.3" not in out
    row = next(line for line in out.splitlines()
               if line.startswith("| difference | K=10, 5 evals, effect ~ U(-0.1, 0.5) |"))
    promised = row.split("|")[5].strip()
    assert promised == "n/a" or 0 < float(promised.rstrip("%")) <= 100
    assert any(line.startswith("| difference | all these cells |") for line in out.splitlines())
    advice_power.main(["--table", str(saved)])
    assert row in capsys.readouterr().out


def test_interior_pilots_are_two_ses_inside_the_prior() -> None:
    assert advice_power.interior(0.3, 0.05, (0.0, 0.5)) and not advice_power.interior(0.45, 0.05, (0.0, 0.5))
    # Clipping at 1 makes the true mean difference smaller than the effect (0.41 at +0.5).
    assert advice_power.mean_difference(0.0) == pytest.approx(0.0, abs=1e-9)
    assert 0.40 < advice_power.mean_difference(0.5) < 0.42
