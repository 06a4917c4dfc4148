"""Statistics per turn of a multi-turn eval set (issue 39): where in the conversation the skill
helps. For each turn k, a trial's verdict on k is the verdict of k's expectations alone (every
one passes: pass; one fails: fail; otherwise undecided, left out, as a trial is for the suite's
pass rate). Per eval that gives (passes, trials) per arm, which go through the same machinery
as the suite's figures: the per-configuration interval of analyze/rate_intervals.py and the
paired sign-flip difference of analyze/paired_intervals.py, one interval per figure, each
agreeing with its own test. Pure functions over records."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from skillassay.analyze import paired_intervals
from skillassay.analyze.rate_intervals import DEFAULT_READING, Reading, pass_rate_interval
from skillassay.models.turns import TurnsSection
from skillassay.stats.means import binomial_floor_se
from skillassay.store.records import TrialRecord

# (eval id, configuration) -> [passes, trials] on one turn
Counts = dict[tuple[int | str, str], list[int]]


def expectation_turn(e: Any) -> int | None:
    """The turn an expectation result names (grading.json's extra `turn`); None: none."""
    extra = getattr(e, "__pydantic_extra__", None)
    turn = extra.get("turn") if isinstance(extra, dict) else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 1 else None


def turn_verdicts(record: TrialRecord) -> dict[int, bool | None]:
    """The trial's verdict on each turn its expectations name (only for a completed trial)."""
    by_turn: dict[int, list[bool | None]] = {}
    for e in record.expectations:
        k = expectation_turn(e)
        if k is not None:
            by_turn.setdefault(k, []).append(e.passed)
    return {k: (False if False in v else None if None in v else True) for k, v in by_turn.items()}


def count_turns(records: Iterable[TrialRecord]) -> dict[int, Counts]:
    """turn -> (eval, configuration) -> [passes, trials], over completed trials with a verdict."""
    out: dict[int, Counts] = {}
    for r in records:
        add_record(out, r)
    return out


def add_record(counts: dict[int, Counts], r: TrialRecord) -> None:
    """One trial into the counts (aggregation reads trials one at a time, keeping none)."""
    if not r.completed:
        return
    for k, verdict in turn_verdicts(r).items():
        if verdict is None:
            continue
        cell = counts.setdefault(k, {}).setdefault((r.eval_id, r.configuration), [0, 0])
        cell[0] += int(verdict)
        cell[1] += 1


def merge_counts(into: dict[int, Counts], other: dict[int, Counts]) -> None:
    for k, cells in other.items():
        for key, (passes, trials) in cells.items():
            cell = into.setdefault(k, {}).setdefault(key, [0, 0])
            cell[0] += passes
            cell[1] += trials


def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, nd)


def _arm(config: str, cells: Sequence[list[int]], reading: Reading, conf: float) -> dict[str, Any]:
    passes, trials = [c[0] for c in cells], [c[1] for c in cells]
    rates = [p / n for p, n in zip(passes, trials, strict=True) if n]
    iv = pass_rate_interval(passes, trials, reading, conf) if rates else None
    return {"configuration": config, "passes": sum(passes), "trials": sum(trials),
            "pass_rate": _r(sum(rates) / len(rates)) if rates else None,
            "interval": None if iv is None else [_r(iv[0]), _r(iv[1])]}


def turn_statistics(records: Sequence[TrialRecord], skill: str, baseline: str, seed: int = 0,
                    reading: Reading = DEFAULT_READING, conf: float = 0.95) -> TurnsSection | None:
    """benchmark.json's `turns` section, or None when no trial's grading names a turn (a
    single-prompt eval set). Each turn's figures are over the evals with a verdict on that
    turn in both arms, paired by eval."""
    return section_of(count_turns(records), skill, baseline, seed, reading, conf)


def section_of(counts: dict[int, Counts], skill: str, baseline: str, seed: int = 0,
               reading: Reading = DEFAULT_READING, conf: float = 0.95) -> TurnsSection | None:
    """turn_statistics from counts already made."""
    if not counts:
        return None
    per_turn = []
    for k in sorted(counts):
        turn = counts[k]
        evals = list(dict.fromkeys(e for e, _ in turn))
        paired = [e for e in evals if turn.get((e, skill), [0, 0])[1] and turn.get((e, baseline), [0, 0])[1]]
        a = [turn[(e, skill)] for e in paired]
        b = [turn[(e, baseline)] for e in paired]
        pa, pb = [p / n for p, n in a], [p / n for p, n in b]
        floor = math.hypot(*(binomial_floor_se(rates, [n for _, n in cells], pseudo=1.0)
                             for rates, cells in ((pa, a), (pb, b)))) if paired else 0.0
        pd = paired_intervals.inverted_difference(pa, pb, seed, floor) if paired else None
        per_turn.append({
            "turn": k, "n_evals": len(paired),
            "with_skill": _arm(skill, a, reading, conf), "baseline": _arm(baseline, b, reading, conf),
            "difference": {} if pd is None else {
                "mean": _r(pd.mean), "interval": None if pd.interval is None else [_r(x) for x in pd.interval],
                "n_evals": pd.n, "p_value": _r(pd.p_value), "p_value_method": pd.method,
                "explanation": pd.explanation},
        })
    return TurnsSection.model_validate({"schema_version": 1, "reading": reading, "conf": conf,
                                        "per_turn": per_turn})
