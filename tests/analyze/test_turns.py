"""analyze/turns.py: the per-turn pass rates and their intervals, through the suite's own
machinery (one interval per figure, agreeing with its test)."""

from __future__ import annotations

from skillassay.analyze.paired_intervals import inverted_difference
from skillassay.analyze.rate_intervals import pass_rate_interval
from skillassay.analyze.turns import count_turns, turn_statistics, turn_verdicts
from skillassay.models import ExpectationResult
from skillassay.store.records import Outcome, TrialRecord


def exp(turn: int | None, passed: bool | None) -> ExpectationResult:
    return ExpectationResult(text=f"t{turn}", passed=passed, evidence="", turn=turn)  # type: ignore[call-arg]


def record(eval_id: int, config: str, run: int, verdicts: list[tuple[int | None, bool | None]],
           status: str = "ok") -> TrialRecord:
    exps = tuple(exp(t, p) for t, p in verdicts)
    return TrialRecord(eval_id=eval_id, eval_name=f"e{eval_id}", configuration=config, run_number=run, status=status,
                       passed=all(p for _, p in verdicts), expectations=exps)


def test_a_turn_passes_only_when_all_its_expectations_pass() -> None:
    r = record(1, "with_skill", 1, [(1, True), (1, False), (2, True), (3, None), (3, True), (None, False)])
    assert turn_verdicts(r) == {1: False, 2: True, 3: None}  # the whole conversation's is no turn's


def test_errored_and_undecided_trials_are_left_out_and_single_prompt_records_give_nothing() -> None:
    records = [record(1, "with_skill", 1, [(1, True)]), record(1, "with_skill", 2, [(1, True)], status="error"),
               record(1, "with_skill", 3, [(1, None)])]
    assert count_turns(records) == {1: {(1, "with_skill"): [1, 1]}}
    plain = TrialRecord(eval_id=1, eval_name="e", configuration="with_skill", run_number=1, status="ok", passed=True,
                        expectations=(Outcome("x", True),))
    assert turn_statistics([plain], "with_skill", "without_skill") is None


def test_figures_match_the_suite_machinery_on_the_same_counts() -> None:
    # 3 evals x 3 trials; turn 1: skill 3/3, 3/3, 2/3 vs baseline 0/3, 1/3, 0/3; turn 2 the same in both arms
    skill = {1: [True, True, True], 2: [True, True, True], 3: [True, True, False]}
    base = {1: [False, False, False], 2: [True, False, False], 3: [False, False, False]}
    records = []
    for e in (1, 2, 3):
        for i in range(3):
            records.append(record(e, "with_skill", i + 1, [(1, skill[e][i]), (2, True)]))
            records.append(record(e, "without_skill", i + 1, [(1, base[e][i]), (2, True)]))
    section = turn_statistics(records, "with_skill", "without_skill", seed=5)
    assert section is not None and [t.turn for t in section.per_turn] == [1, 2]
    t1 = section.per_turn[0]
    assert (t1.with_skill.passes, t1.with_skill.trials, t1.baseline.passes, t1.baseline.trials) == (8, 9, 1, 9)
    assert t1.with_skill.pass_rate == round(8 / 9, 6) and t1.n_evals == 3
    iv = pass_rate_interval([3, 3, 2], [3, 3, 3])
    assert iv is not None and t1.with_skill.interval == [round(iv[0], 6), round(iv[1], 6)]
    pd = inverted_difference([1, 1, 2 / 3], [0, 1 / 3, 0], 5, t1_floor(skill, base))
    assert t1.difference.mean == round(pd.mean, 6) and t1.difference.p_value == round(pd.p_value or 0, 6)
    assert t1.difference.interval is not None and t1.difference.interval[0] <= pd.mean <= t1.difference.interval[1]
    t2 = section.per_turn[1]
    assert t2.difference.mean == 0.0 and t2.with_skill.pass_rate == t2.baseline.pass_rate == 1.0


def t1_floor(skill: dict[int, list[bool]], base: dict[int, list[bool]]) -> float:
    import math

    from skillassay.stats.means import binomial_floor_se

    def floor(arm: dict[int, list[bool]]) -> float:
        return binomial_floor_se([sum(v) / 3 for v in arm.values()], [3, 3, 3], pseudo=1.0)

    return math.hypot(floor(skill), floor(base))
