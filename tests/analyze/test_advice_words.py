"""The paired advice in one short sentence (issue 34): "about N evals would likely decide it if
...", N rounded up to two significant figures, no power percentage in the sentence, and no
power promised beside "no sample size decides it"."""

from __future__ import annotations

import re

from aa_simulation import BASE, SKILL, records

from skillassay.analyze.advice_words import NO_SIZE_DECIDES, about
from skillassay.analyze.cells import group_records
from skillassay.analyze.statistics import build_statistics


def _ratio_gate(skill: list[str], base: list[str], thr: float) -> dict:
    passes = {}
    for e, (s, b) in enumerate(zip(skill, base, strict=True)):
        passes[(e, SKILL)] = [c == "P" for c in s]
        passes[(e, BASE)] = [c == "P" for c in b]
    k = len(skill[0])
    return build_statistics(group_records(records(passes), (SKILL, BASE)), SKILL, BASE, k,
                            {"min_improvement_ratio": thr})["gates"]["min_improvement_ratio"]


def test_about_rounds_up_to_two_significant_figures() -> None:
    assert [about(n) for n in (7, 37, 100, 127, 2041)] == [7, 37, 100, 130, 2100]


def test_ratio_advice_is_one_rounded_sentence_without_a_power_figure() -> None:
    g = _ratio_gate(["PPF", "PFF", "PPF", "FFF", "PPP", "PFF"], ["PFF", "PFF", "FFF", "PFF", "PPF", "FFF"], 1.0)
    assert g["decision"] == "INCONCLUSIVE"
    note = g["decide_note"]
    assert re.fullmatch(r"about [\d,]+ evals would likely decide it if .+", note), note
    assert "%" not in note
    n = g["evals_to_decide"]
    assert n == about(n) and f"about {n:,} evals" in note


def test_no_promise_beside_no_size_decides() -> None:
    g = _ratio_gate(["PPF", "PFF", "PFF", "FFF"], ["PFF", "PPF", "PFF", "FFF"], 1.0)
    assert g["decide_note"] == NO_SIZE_DECIDES
    assert g["promise"] is None and g["planned_power"] is None
