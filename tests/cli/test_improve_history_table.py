"""`history`'s table reads whole in an 80-column terminal or CI log, its rate named and its
difference in points as every other view writes one (issue 34's plain words): the header read
"expectati… / pass rate" (so the row read as a pass rate) and the interval was cut off."""

from __future__ import annotations

from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration
from rich.console import Console

from skillassay.cli.improve import render_history
from skillassay.improve.history import load_history


def test_the_table_is_whole_at_80_columns(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPF", "FFF"), 3: ("FFF", "FFF")})
    write_iteration(tmp_path, 2, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PFF", "FFF")})
    for n in (1, 2):
        assert cli(["history", "record", str(tmp_path / f"iteration-{n}")]).exit_code == 0
    history = load_history(tmp_path)
    assert history is not None
    console = Console(width=80, record=True, color_system=None)
    console.print(render_history(history))
    text = console.export_text()
    assert "…" not in text, text
    assert "expectation" in text and "pass rate" in text, text
    assert "+22 pts" in text and "0.222" not in text, text  # (5/9 - 3/9) per expectation, in points
