"""Adaptive runs: trials in rounds, and the rule that says which evals get the next round.

The round loop is pure apart from one callable it is given, `execute` (the engine's "run this
batch of planned trials", whatever backend runs them), so the rounds dispatch through the same
path a fixed run uses. An eval's state is replayed from its graded trials at the fixed looks
(analyze/sequential.state_at_looks): nothing about rounds is stored, and a killed run resumes at
the round it was in, running only the trials that round still lacks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from skillassay.analyze import sequential as seq
from skillassay.models import Adaptive, Thresholds
from skillassay.run.plan import Trial
from skillassay.store.records import TrialRecord

SCHEMA_VERSION = 1

Outcomes = tuple[bool | None, ...]


def questions_for(thresholds: Thresholds) -> seq.Questions:
    """The per-eval questions the configured gates ask (sequential.Questions)."""
    return seq.Questions(rate_threshold=thresholds.min_pass_rate, compare_arms=True)


def outcomes_by_eval(records: Iterable[TrialRecord], skill: str,
                     baseline: str) -> dict[int | str, tuple[Outcomes, Outcomes]]:
    """Per eval, each arm's outcomes for trials 1, 2, ... as far as they run without a gap
    (True pass, False fail, None did not complete or was not graded): a look at n trials is
    at trials 1..n of both arms, whatever order they finished in."""
    got: dict[tuple[int | str, str], dict[int, bool | None]] = defaultdict(dict)
    for r in records:
        if r.configuration in (skill, baseline):
            got[(r.eval_id, r.configuration)][r.run_number] = (
                None if not r.completed or r.ungraded else bool(r.passed))
    out: dict[int | str, tuple[Outcomes, Outcomes]] = {}
    for eval_id in dict.fromkeys(e for e, _ in got):
        arms = []
        for cfg in (skill, baseline):
            runs = got.get((eval_id, cfg), {})
            seqn: list[bool | None] = []
            while len(seqn) + 1 in runs:
                seqn.append(runs[len(seqn) + 1])
            arms.append(tuple(seqn))
        out[eval_id] = (arms[0], arms[1])
    return out


def states(eval_ids: Iterable[int | str], outcomes: Mapping[int | str, tuple[Outcomes, Outcomes]],
           settings: Adaptive, questions: seq.Questions) -> dict[int | str, seq.EvalState]:
    return {e: seq.state_at_looks(*outcomes.get(e, ((), ())), questions, settings.min_trials_per_eval,
                                  settings.max_trials_per_eval, settings.round_size) for e in eval_ids}


def next_round(pending: Iterable[Trial], now: Mapping[int | str, seq.EvalState], settings: Adaptive) -> list[Trial]:
    """The planned trials the next round runs: those of running evals up to their next look.
    `pending` are the planned trials not yet graded, so a resumed round runs only what it lacks."""
    targets = {e: seq.next_target(s, settings.min_trials_per_eval, settings.max_trials_per_eval,
                                  settings.round_size) for e, s in now.items()}
    return [t for t in pending if not now[t.eval.id].stopped and t.run_number <= targets[t.eval.id]]


@dataclass
class RoundsResult:
    executed: list[TrialRecord]
    states: dict[int | str, seq.EvalState]
    rounds: int


def run_rounds(pending: list[Trial], done: list[TrialRecord], settings: Adaptive, questions: seq.Questions,
               configurations: tuple[str, str], execute: Callable[[list[Trial]], list[TrialRecord]],
               halted: Callable[[], bool] = lambda: False) -> RoundsResult:
    """Rounds until every eval has stopped (decided, settled or at its maximum), no planned
    trial is left to run, or `halted` says the run must stop (the same-error streak)."""
    eval_ids = list(dict.fromkeys(t.eval.id for t in pending)) + list(dict.fromkeys(r.eval_id for r in done))
    eval_ids = list(dict.fromkeys(eval_ids))
    records, rounds = list(done), 0
    executed: list[TrialRecord] = []
    left = list(pending)
    while True:
        now = states(eval_ids, outcomes_by_eval(records, *configurations), settings, questions)
        batch = next_round(left, now, settings)
        if not batch or halted():
            return RoundsResult(executed, now, rounds)
        chosen, size = {id(t) for t in batch}, len(batch)
        left = [t for t in left if id(t) not in chosen]
        got = execute(batch)  # may consume the list (engine.execute_all does, to free each trial)
        rounds += 1
        executed += got
        records += got
        if len(got) < size:  # the executor stopped early (streak): no further round
            now = states(eval_ids, outcomes_by_eval(records, *configurations), settings, questions)
            return RoundsResult(executed, now, rounds)


def design_record(settings: Adaptive, questions: seq.Questions, final: Mapping[int | str, seq.EvalState],
                  names: Mapping[int, str] | Mapping[int | str, str], records: Iterable[TrialRecord] = ()) -> dict[str, Any]:
    """benchmark.json's `adaptive` section: the method and parameters, and per eval the
    trials it used and why it stopped, so the report (and a reader) can tell a decided eval
    from one that ran out of trials. `trials_recorded` counts every graded trial on disk (a
    reused baseline may hold more than the eval's stop needed)."""
    recorded: dict[int | str, int] = defaultdict(int)
    for r in records:
        recorded[r.eval_id] += 1
    named: dict[int | str, str] = dict(names.items())
    per_eval = [{"eval_id": e, "eval_name": named.get(e), "trials_per_arm": s.trials,
                 "trials_recorded": recorded.get(e, 0),
                 "stopped": s.status if s.stopped else "not stopped (run interrupted)",
                 "reasons": list(s.reasons)} for e, s in final.items()]
    return {
        "schema_version": SCHEMA_VERSION,
        "method": seq.METHOD,
        "bets": seq.BETS,
        "alpha": seq.ALPHA,
        "truncation": seq.TRUNCATION,
        "min_trials_per_eval": settings.min_trials_per_eval,
        "max_trials_per_eval": settings.max_trials_per_eval,
        "round_size": settings.round_size,
        "looks": seq.looks(settings.min_trials_per_eval, settings.max_trials_per_eval, settings.round_size),
        "questions": {"rate_threshold": questions.rate_threshold, "compare_arms": questions.compare_arms},
        "rule": RULE,
        "trials_recorded": sum(recorded.values()),
        "trials_fixed_design": 2 * settings.max_trials_per_eval * len(final),
        "per_eval": per_eval,
    }


RULE = ("after each round, from min_trials_per_eval on, an eval stops when every question its gates ask is "
        "decided by its confidence sequences (decided) or settled: for the pass-rate threshold, every skill "
        "trial so far agreed; for the arms' difference, every trial of each arm agreed and no run of further "
        "trials up to max_trials_per_eval could show one. Otherwise it runs to max_trials_per_eval. The suite "
        "gates are the fixed design's statistics on the trials run.")
