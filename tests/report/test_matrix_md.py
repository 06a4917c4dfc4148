"""The matrix's part of report.md (report/matrix_md.py): the verdict and the failing agent in the
first lines, a row per agent, names and models from the config escaped, and the effects chart."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from iteration_factory import write_iteration

from skillassay.analyze.matrix import AgentPart, summarize_matrix
from skillassay.models.matrix import MatrixSummary
from skillassay.report.matrix_md import render_matrix_md, write_matrix_chart

E = 8
HELPS = {i: ("PPPP", "PFFF") for i in range(1, E + 1)}
NOTHING = {i: ("PFFF", "PFFF") for i in range(1, E + 1)}
PATTERNS = {"helps": HELPS, "nothing": NOTHING}


@functools.cache
def _bench_text(name: str) -> str:
    """One real benchmark.json per outcome pattern, written once per test session."""
    with tempfile.TemporaryDirectory() as tmp:
        it = write_iteration(Path(tmp), 1, PATTERNS[name], thresholds={"min_pass_rate": 0.6})
        return (it / "benchmark.json").read_text(encoding="utf-8")


def bench(tmp_path: Path, name: str, evals: dict[int, tuple[str, str]]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_bench_text("helps" if evals is HELPS else "nothing"))
    return data


def matrix(tmp_path: Path, model: str | None = "claude-haiku-4-5") -> MatrixSummary:
    return summarize_matrix([
        AgentPart("haiku", True, "claude-code", model, bench(tmp_path, "a", HELPS)),
        AgentPart("sonnet", True, "claude-code", "claude-sonnet-4-5", bench(tmp_path, "b", HELPS)),
        AgentPart("cmd", True, "command", None, bench(tmp_path, "c", NOTHING)),
    ])


def test_first_line_says_the_verdict_and_names_the_failing_agent(tmp_path: Path) -> None:
    text = render_matrix_md(matrix(tmp_path), "charts/matrix_effects.png")
    first = text.splitlines()[0]
    assert first.startswith("**Matrix verdict: FAIL") and "fails its gate on cmd" in first
    rows = [line for line in text.splitlines() if line.startswith("| ") and "claude" in line or "| cmd" in line]
    assert len(rows) == 3
    cmd = next(r for r in rows if r.startswith("| cmd"))
    assert "| 25% | 25% | +0 pts [" in cmd and cmd.endswith("| **FAIL** |")
    assert "![The skill's effect per agent, with 95% intervals](charts/matrix_effects.png)" in text
    assert "differs between agents" in text and "| haiku vs cmd |" in text
    assert "family-wise 0.05" in text and "Holm" in text  # the verdicts are after the adjustment, in words
    assert "No pooled effect" in text


def test_agreeing_agents_show_the_pooled_effect(tmp_path: Path) -> None:
    s = summarize_matrix([AgentPart("haiku", True, "claude-code", None, bench(tmp_path, "a", HELPS)),
                          AgentPart("sonnet", True, "claude-code", None, bench(tmp_path, "b", HELPS))])
    text = render_matrix_md(s)
    assert text.splitlines()[0].startswith("**Matrix verdict: PASS")
    assert "Pooled effect over haiku, sonnet: +75 pts (95% CI" in text and "![" not in text


def test_names_and_models_are_escaped(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)>|`x`*y*"
    text = render_matrix_md(matrix(tmp_path, model=hostile))
    assert not re.search(r"(?<!\\)[<>]", text) and "onerror" in text  # no raw HTML
    row = next(line for line in text.splitlines() if line.startswith("| haiku"))
    assert r"\<img src=x onerror=alert(1)\>\|\`x\`\*y\*" in row
    assert row.count(" | ") == 7  # 8 cells: the pipe in the model did not add a column


def test_the_chart_is_a_png(tmp_path: Path) -> None:
    path = write_matrix_chart(tmp_path / "iteration-1", matrix(tmp_path))
    assert path == tmp_path / "iteration-1" / "charts" / "matrix_effects.png"
    assert path.read_bytes().startswith(b"\x89PNG")
