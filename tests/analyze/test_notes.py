"""Analyst notes: each pattern the notes look for, built into records on purpose."""

from __future__ import annotations

from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.cells import group_records
from skillassay.analyze.notes import analyst_notes, cell_notes, cost_notes
from skillassay.models import ExpectationResult, Thresholds
from skillassay.store.records import ExpectationTally, TrialRecord

ARMS = Arms("with_skill", "without_skill")


def rec(eval_id: int, config: str, run: int, verdicts: dict[str, bool], *, status: str = "ok",
        seconds: float = 1.0, tokens: int = 100) -> TrialRecord:
    exps = tuple(ExpectationResult(text=t, passed=p, evidence="e") for t, p in verdicts.items())
    passed = sum(verdicts.values())
    return TrialRecord(eval_id=eval_id, eval_name=f"e{eval_id}", configuration=config, run_number=run,
                       status=status, passed=(passed == len(verdicts)) if status == "ok" else None,
                       passed_count=passed, total_count=len(verdicts), tokens=tokens, duration_seconds=seconds,
                       expectations=exps)


def patterned() -> list[TrialRecord]:
    out = []
    for run in (1, 2, 3):
        # eval 1: 'Output is text' always passes, 'Cites RFC 9999' never does, in both arms.
        for cfg in ("with_skill", "without_skill"):
            out.append(rec(1, cfg, run, {"Output is text": True, "Cites RFC 9999": False}, seconds=20 if cfg == "with_skill" else 7))
        # eval 2: the skill passes 2 of 3 trials (flaky); the baseline always fails the port check.
        out.append(rec(2, "with_skill", run, {"Mentions port 4433": run != 3}, seconds=20))
        out.append(rec(2, "without_skill", run, {"Mentions port 4433": False}, seconds=7))
        # eval 3: only the baseline errors (once).
        out.append(rec(3, "with_skill", run, {"Names the host": True}, seconds=20))
        out.append(rec(3, "without_skill", run, {"Names the host": run != 1},
                       status="error" if run == 1 else "ok", seconds=7))
    return out


def test_each_pattern_is_noted_in_the_spec_wording() -> None:
    notes = analyst_notes(patterned(), ARMS)
    text = "\n".join(notes)
    # 'Names the host' passes in every *completed* run: the errored baseline trial is not a fail.
    assert ("Assertions 'Output is text', 'Names the host' pass 100% in both configurations - may not "
            "differentiate skill value") in notes
    assert any(n.startswith("Assertion 'Cites RFC 9999' fails in every run of both configurations") for n in notes)
    assert "Eval 2 (e2) shows high variance in with_skill (2 of 3 trials passed, 67% ± 58%) - may be flaky or model-dependent" in notes
    assert "Eval 3 (e3): only without_skill errored (1 of 3 trials) - the comparison on this eval is uneven" in notes
    assert "Without-skill runs consistently fail on 'Mentions port 4433'" in text
    # Non-discriminating assertions are not mistaken for one-sided failures, and eval 1/3 are steady.
    assert "Eval 1 (e1) shows" not in text and "Eval 3 (e3) shows" not in text
    cost = notes[-1]
    assert cost.startswith("Skill adds 13s average execution time")
    assert cost.endswith("but improves the expectation pass rate by 28 percentage points"), cost


def test_clean_benchmark_only_gets_the_cost_line() -> None:
    records = [rec(e, cfg, run, {"A": cfg == "with_skill", "B": e == 1}, seconds=5, tokens=100)
               for e in (1, 2) for cfg in ("with_skill", "without_skill") for run in (1, 2)]
    # 'B' passes in both arms on eval 1 only and fails on eval 2: it discriminates evals, not arms,
    # but over all runs it is neither always-pass nor always-fail.
    notes = analyst_notes(records, ARMS)
    assert [n for n in notes if not n.startswith("Skill ")] == ["Without-skill runs consistently fail on 'A' "
                                                                 "(with-skill runs pass it at least once)"]
    assert notes[-1] == "Skill adds <0.1s average execution time and 0 tokens per run and improves the expectation pass rate by 50 percentage points"


def test_cost_line_when_the_skill_saves_and_loses() -> None:
    records = [rec(1, "with_skill", 1, {"A": False}, seconds=3, tokens=50),
               rec(1, "without_skill", 1, {"A": True}, seconds=9, tokens=80)]
    assert cost_notes(group_records(records, (ARMS.skill, ARMS.baseline)), ARMS) == ["Skill saves 6.0s average execution time and 30 tokens per run and "
                                         "lowers the expectation pass rate by 100 percentage points"]


def test_notes_reach_benchmark_json() -> None:
    bench = build_benchmark(patterned(), skill_name="s", skill_path=None, iteration=1, timestamp="t",
                            trials_requested=3, thresholds=Thresholds())
    assert any("may not differentiate skill value" in n for n in bench.notes)
    assert any(n.startswith("Skill adds 13s") for n in bench.notes)


def test_tally_counted_while_reading_gives_the_same_notes() -> None:
    """`skillassay aggregate` keeps no runs: it counts verdicts into ExpectationTallies while
    reading, eval by eval in worker processes (any order), and merges them. The counts and the
    notes must be those of the records held in memory."""
    import random

    records = patterned()
    records.append(rec(4, "old_skill", 1, {"Only elsewhere": True}))
    shuffled = records[:]
    random.Random(7).shuffle(shuffled)
    halves = ExpectationTally(), ExpectationTally()
    for i, r in enumerate(shuffled):
        if r.completed:
            halves[i % 2].add(r.eval_id, r.configuration, r.run_number, r.expectations)
    tally = halves[0]
    tally.merge(halves[1])
    configs = (ARMS.skill, ARMS.baseline)
    counts = tally.counts(configs)
    # Texts in the order the records first show them; errored runs (eval 3 run 1) not counted.
    assert list(counts) == ["Output is text", "Cites RFC 9999", "Mentions port 4433", "Names the host"]
    assert counts["Mentions port 4433"] == {"with_skill": (2, 1), "without_skill": (0, 3)}
    assert counts["Names the host"] == {"with_skill": (3, 0), "without_skill": (2, 0)}
    assert list(counts.items()) == list(ExpectationTally.of(records).counts(configs).items())
    assert cell_notes(group_records(records, configs), ARMS, tally) == analyst_notes(records, ARMS)
