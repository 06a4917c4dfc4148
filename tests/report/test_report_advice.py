"""report.md's sample-size advice is one short sentence a non-statistician can act on (issue 34:
"about 130 evals would likely decide this"), with no power figure and no nested parentheses,
and none at all once the gate (or, ungated, the paired test) has already decided: the audit found
an 80-word item beside a difference the ratio gate had confirmed."""

from __future__ import annotations

from typing import Any

from skillassay.analyze.cells import group_records
from skillassay.analyze.gate import GateResult
from skillassay.analyze.statistics import build_statistics
from skillassay.report.report import recommendations
from skillassay.store.records import TrialRecord

SKILL, BASE = "with_skill", "without_skill"


def _stats(pairs: list[tuple[int, int]], k: int = 3) -> dict[str, Any]:
    recs = [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration=config, run_number=i + 1, status="ok",
                        passed=i < c)
            for e, (a, b) in enumerate(pairs) for config, c in ((SKILL, a), (BASE, b)) for i in range(k)]
    return build_statistics(group_records(recs, (SKILL, BASE)), SKILL, BASE, k, {}, min_detectable_effect=0.1)


UNDECIDED = [(2, 1), (2, 1), (1, 1), (3, 1), (2, 2), (1, 0)]
CONFIRMED = [(3, 0)] * 6 + [(2, 1)] * 2


def _power(recs: list[str]) -> list[str]:
    return [r for r in recs if "evals would" in r]


def test_the_advice_is_one_short_sentence_without_a_power_figure() -> None:
    st = _stats(UNDECIDED)
    assert st["power"]["evals_needed"]
    [advice] = _power(recommendations(st, GateResult("NOT_GATED", 0, []), None))
    assert f"about {st['power']['evals_needed']} evals would likely" in advice, advice
    assert "(" not in advice and "%" not in advice and advice.count(". ") == 0, advice
    assert len(advice.split()) <= 25, (len(advice.split()), advice)


def test_no_advice_once_the_gate_has_decided() -> None:
    st = _stats(UNDECIDED)
    for status, code in (("PASS", 0), ("FAIL", 1)):
        assert _power(recommendations(st, GateResult(status, code, []), None)) == [], status
    assert _power(recommendations(st, GateResult("INCONCLUSIVE", 3, []), None))


def test_no_advice_when_the_paired_test_has_confirmed_the_difference() -> None:
    st = _stats(CONFIRMED)
    interval = st["paired"]["pass_rate_difference"]["interval"]
    assert interval[0] > 0 and st["power"]["evals_needed"], (interval, st["power"])
    for status, code in (("NOT_GATED", 0), ("INCONCLUSIVE", 3)):
        assert _power(recommendations(st, GateResult(status, code, []), None)) == [], status
