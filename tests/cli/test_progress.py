"""`run`'s progress off a terminal (cli.progress.LineProgress, issue 34): a 50,000-trial run
printed 50,006 lines to a CI log, one per trial. Throttled: every 5% of the run or every few
seconds, the first and last trial and every errored one."""

from __future__ import annotations

import io

from rich.console import Console

from skillassay.cli.progress import LineProgress
from skillassay.store.records import TrialRecord


def trial(k: int, status: str = "ok") -> TrialRecord:
    return TrialRecord(1, "e1", "with_skill", k, status, status == "ok", 1, 1)


def lines_for(total: int, errored: frozenset[int] = frozenset()) -> list[str]:
    out = io.StringIO()
    progress = LineProgress(Console(file=out, force_terminal=False))
    progress.start(total, 0, "first iteration")
    for k in range(1, total + 1):
        progress.trial_done(trial(k, "error" if k in errored else "ok"))
    progress.finish()
    return out.getvalue().splitlines()


def test_a_huge_run_logs_a_few_dozen_lines_not_one_per_trial() -> None:
    lines = lines_for(50_000, errored=frozenset({7, 30_000}))
    assert len(lines) < 60, len(lines)
    assert lines[1].startswith("[1/50000]") and lines[-1].startswith("[50000/50000]")
    assert any(line.startswith("[7/50000]") and "ERROR" in line for line in lines)  # errors always shown
    assert any(line.startswith("[2500/50000]") for line in lines)  # each 5% step


def test_a_small_run_still_logs_every_trial() -> None:
    lines = lines_for(12)
    assert [line.split("]")[0] for line in lines[1:]] == [f"[{k}/12" for k in range(1, 13)]


def test_time_alone_brings_a_line_between_steps() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = LineProgress(Console(file=out, force_terminal=False), every=10.0, clock=lambda: now[0])
    progress.start(1_000_000, 0, "x")
    for k in range(1, 1001):  # 0.1% of the run, 31 s (1/32 s a trial: exact in binary)
        now[0] += 1 / 32
        progress.trial_done(trial(k))
    lines = out.getvalue().splitlines()[1:]
    assert [line.split("]")[0] for line in lines] == ["[1/1000000", "[321/1000000", "[641/1000000", "[961/1000000"]
