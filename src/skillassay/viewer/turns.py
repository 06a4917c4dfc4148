"""The viewer's part of a multi-turn trial (issue 39): the conversation turn by turn (each
prompt and answer, from turns.json) for the run page, and benchmark.json's per-turn rows for
the benchmark tab. Plain data only: the page puts every string in through textContent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillassay.grade.turns import read_turns
from skillassay.report.charts import as_dict, as_list
from skillassay.viewer.render import TEXT_CAP


def conversation(run_dir: Path) -> list[dict[str, Any]]:
    """The turns as the agent ran them (empty for a single-prompt trial), each text capped."""
    return [{"turn": r.get("turn"), "prompt": str(r.get("prompt") or "")[:TEXT_CAP],
             "answer": str(r.get("answer") or "")[:TEXT_CAP], "status": str(r.get("status") or ""),
             "error": None if r.get("error") is None else str(r.get("error"))[:TEXT_CAP]}
            for r in read_turns(run_dir)]


def turn_rows(bench: dict[str, Any]) -> list[dict[str, Any]]:
    """benchmark.json's `turns` per turn: both arms' rate, counts and interval, the difference."""
    rows = []
    for t in as_list(as_dict(bench.get("turns")).get("per_turn")):
        t = as_dict(t)
        arms = {k: as_dict(t.get(k)) for k in ("with_skill", "baseline")}
        diff = as_dict(t.get("difference"))
        rows.append({"turn": t.get("turn"), "n_evals": t.get("n_evals"),
                     **{k: {"rate": a.get("pass_rate"), "passes": a.get("passes"), "trials": a.get("trials"),
                            "interval": a.get("interval")} for k, a in arms.items()},
                     "difference": diff.get("mean"), "difference_interval": diff.get("interval"),
                     "p_value": diff.get("p_value")})
    return rows
