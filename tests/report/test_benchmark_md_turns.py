"""The per-turn table (templates/turns.md.j2) in benchmark.md and report.md: each turn's rates
with their counts and intervals and the paired difference, read from benchmark.json's `turns`."""

from __future__ import annotations

from skillassay.models.turns import TurnsSection
from skillassay.report.benchmark_md import ci, environment, pts, pts_ci

SECTION = TurnsSection.model_validate({"reading": "population", "per_turn": [
    {"turn": 1, "n_evals": 3, "with_skill": {"configuration": "with_skill", "passes": 8, "trials": 9,
                                             "pass_rate": 0.888889, "interval": [0.5, 0.99]},
     "baseline": {"configuration": "without_skill", "passes": 1, "trials": 9, "pass_rate": 0.111111,
                  "interval": None},
     "difference": {"mean": 0.777778, "interval": [0.2, 1.0], "n_evals": 3, "p_value": 0.25}},
    {"turn": 2, "n_evals": 0, "with_skill": {"configuration": "with_skill", "passes": 0, "trials": 0},
     "baseline": {"configuration": "without_skill", "passes": 0, "trials": 0}, "difference": {}}]})


def render() -> str:
    template = environment().from_string('{% from "turns.md.j2" import turn_table %}{{ turn_table(t, "##") }}')
    return template.render(t=SECTION)


def test_the_table_has_a_row_per_turn_with_counts_intervals_and_the_difference() -> None:
    text = render()
    assert "## Per turn: where in the conversation the skill helps" in text
    assert "| 1 | 3 | 89% (8/9) [50%, 99%] | 11% (1/9) | +78 pts [+20, +100] | 0.250 |" in text
    assert "| 2 | 0 | n/a (0/0) | n/a (0/0) | n/a | n/a |" in text


def test_helpers_say_nothing_for_a_missing_interval() -> None:
    assert ci(None) == "" and pts_ci(None) == "" and pts(None) == "n/a"
    assert ci([0.125, 1.0]) == " [13%, 100%]" and pts(-0.05) == "-5 pts"
