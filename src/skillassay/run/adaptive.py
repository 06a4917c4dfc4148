"""Adaptive runs: trials in rounds, and the rule that says when the suite has had enough.

Every eval gets trials each round and the whole run stops at once, when every gate's call is
decided (analyze/sequential: a Haybittle-Peto group-sequential design with curtailment, on the
gates' own statistics; its futility bound is off since issue 34). The round loop is pure apart from one callable
it is given, `execute` (the engine's "run this batch of planned trials", whatever backend runs
them), so the rounds dispatch through the same path a fixed run uses. The suite's state is
replayed from the graded trials at the fixed looks: nothing about rounds is stored, and a
killed run resumes at the round it was in, running only the trials that round still lacks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillassay.analyze import sequential as seq
from skillassay.analyze.arms import Arms
from skillassay.analyze.benchmark import build_benchmark
from skillassay.analyze.gate import evaluate
from skillassay.models import Adaptive, Thresholds
from skillassay.run.plan import Trial
from skillassay.store.records import TrialRecord

SCHEMA_VERSION = 2

Outcomes = tuple[bool | None, ...]


def questions_for(thresholds: Thresholds, skill: str = "with_skill", baseline: str = "without_skill") -> seq.Questions:
    """The gates the rule watches: every configured threshold."""
    gates = tuple((k, float(v)) for k, v in thresholds.model_dump().items()
                  if v is not None and k in seq.DIRECTIONS)
    return seq.Questions(gates=gates, skill=skill, baseline=baseline)


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


def fixed_gate_agrees(records: list[TrialRecord], q: seq.Questions, state: seq.EvalState) -> bool:
    """The fixed design's gate on the trials of the look makes exactly the calls the rule
    says are settled: a decided gate's PASS / FAIL, a settled gate's INCONCLUSIVE. The
    reported verdict is that gate's, so a stop is allowed only where the two agree."""
    thresholds = Thresholds(**dict(q.gates))
    bench = build_benchmark([r for r in records if r.run_number <= state.trials], skill_name="look",
                            skill_path=None, iteration=1, timestamp="look", trials_requested=state.trials,
                            thresholds=thresholds, arms=Arms(q.skill, q.baseline))
    calls = {t.key: t.status for t in evaluate(bench, thresholds).thresholds}
    return all(calls.get(g.key) == (g.call if g.status == seq.DECIDED else "INCONCLUSIVE") for g in state.gates)


@dataclass
class Replay:
    """The suite's state replayed over the looks the trials reach; `memo` keeps each look's
    state while trials are only added (a look's trials never change within one run)."""

    q: seq.Questions
    settings: Adaptive
    memo: dict[int, seq.EvalState] = field(default_factory=dict)

    def agreed(self, eval_ids: Iterable[int | str], records: list[TrialRecord]) -> set[int | str]:
        """The evals that stopped at their first look because both arms agreed on every trial."""
        if not seq.AGREE_ON:  # the per-eval stop is off: no outcomes to regroup at every look
            return set()
        outcomes = outcomes_by_eval(records, self.q.skill, self.q.baseline)
        least = self.settings.min_trials_per_eval
        return {e for e in eval_ids if seq.eval_agreed(*outcomes.get(e, ((), ())), least)}

    def state(self, eval_ids: Iterable[int | str], records: list[TrialRecord]) -> seq.EvalState:
        s = self.settings
        eval_ids = list(eval_ids)
        outcomes = outcomes_by_eval(records, self.q.skill, self.q.baseline)
        agreed = self.agreed(eval_ids, records)
        open_ = [e for e in eval_ids if e not in agreed]
        have = min((min(len(a), len(b)) for a, b in (outcomes.get(e, ((), ())) for e in open_)),
                   default=s.max_trials_per_eval)
        last, before = seq.EvalState(seq.RUNNING, 0), None
        for at in seq.looks(s.min_trials_per_eval, s.max_trials_per_eval, s.round_size):
            if at > have:
                break
            if at not in self.memo:
                now = seq.suite_look(records, self.q, at, s.max_trials_per_eval, before)
                if not open_:
                    now = seq.EvalState(seq.SETTLED, at, ("every eval's arms agreed at its first look",), now.gates)
                elif now.status in (seq.DECIDED, seq.SETTLED) and not fixed_gate_agrees(records, self.q, now):
                    now = seq.EvalState(seq.RUNNING, at, (), now.gates)
                self.memo[at] = now
            last = before = self.memo[at]
            if last.stopped:
                return last
        return last

    def eval_states(self, eval_ids: Iterable[int | str], records: list[TrialRecord]) -> dict[int | str, seq.EvalState]:
        """Per eval: its own stop when its arms agreed, the suite's state otherwise."""
        eval_ids = list(eval_ids)
        suite, agreed = self.state(eval_ids, records), self.agreed(eval_ids, records)
        least = self.settings.min_trials_per_eval
        return {e: seq.EvalState(seq.AGREED, least, (f"both arms gave the same outcome on all {least} trials",))
                if e in agreed else suite for e in eval_ids}


def suite_state(eval_ids: Iterable[int | str], records: list[TrialRecord], settings: Adaptive,
                questions: seq.Questions) -> seq.EvalState:
    """The suite's state from the trials on disk (resume: a function of the files alone)."""
    return Replay(questions, settings).state(list(eval_ids), records)


def next_round(pending: Iterable[Trial], now: seq.EvalState, settings: Adaptive,
               agreed: Iterable[int | str] = ()) -> list[Trial]:
    """The planned trials the next round runs: every open eval's, up to the next look (an
    eval whose arms agreed at its first look gets no more). `pending` are the planned trials
    not yet graded, so a resumed round runs only what it lacks."""
    if now.stopped:
        return []
    target = seq.next_target(now, settings.min_trials_per_eval, settings.max_trials_per_eval, settings.round_size)
    done = set(agreed)
    return [t for t in pending if t.run_number <= target and t.eval.id not in done]


@dataclass
class RoundsResult:
    executed: list[TrialRecord]
    states: dict[int | str, seq.EvalState]
    rounds: int
    suite: seq.EvalState = field(default_factory=lambda: seq.EvalState(seq.RUNNING, 0))


def run_rounds(pending: list[Trial], done: list[TrialRecord], settings: Adaptive, questions: seq.Questions,
               configurations: tuple[str, str], execute: Callable[[list[Trial]], list[TrialRecord]],
               halted: Callable[[], bool] = lambda: False) -> RoundsResult:
    """Rounds until the suite stops (every gate decided or settled, or the maximum reached),
    no planned trial is left to run, or `halted` says the run must stop (the same-error streak)."""
    q = seq.Questions(questions.gates, *configurations)
    eval_ids = list(dict.fromkeys([*(t.eval.id for t in pending), *(r.eval_id for r in done)]))
    replay = Replay(q, settings)
    records, rounds = list(done), 0
    executed: list[TrialRecord] = []
    left = list(pending)

    def result() -> RoundsResult:
        return RoundsResult(executed, replay.eval_states(eval_ids, records), rounds, replay.state(eval_ids, records))

    while True:
        now = replay.state(eval_ids, records)
        batch = next_round(left, now, settings, replay.agreed(eval_ids, records))
        if not batch or halted():
            return result()
        chosen, size = {id(t) for t in batch}, len(batch)
        left = [t for t in left if id(t) not in chosen]
        got = execute(batch)  # may consume the list (schedule.execute_all does, to free each trial)
        rounds += 1
        executed += got
        records += got
        if len(got) < size:  # the executor stopped early (streak, or a stop: run/interrupt.py): no further round
            return result()


def design_record(settings: Adaptive, questions: seq.Questions, final: Mapping[int | str, seq.EvalState],
                  names: Mapping[int, str] | Mapping[int | str, str], records: Iterable[TrialRecord] = ()) -> dict[str, Any]:
    """benchmark.json's `adaptive` section: the method and parameters, why the suite stopped
    (per gate: Z, information, conditional power), and per eval the trials it used, so a
    reader can tell a decided run from one that ran out of trials. `trials_recorded` counts
    every graded trial on disk (a reused baseline may hold more than the stop needed)."""
    recorded: dict[int | str, int] = defaultdict(int)
    for r in records:
        recorded[r.eval_id] += 1
    named: dict[int | str, str] = dict(names.items())
    least = settings.min_trials_per_eval
    suite = next((s for s in final.values() if s.status != seq.AGREED),
                 seq.EvalState(seq.SETTLED, least, ("every eval's arms agreed at its first look",))
                 if final else seq.EvalState(seq.RUNNING, 0))
    stopped = suite.status if suite.stopped else "not stopped (run interrupted)"

    def why(s: seq.EvalState) -> list[str]:
        if s.status == seq.AGREED:
            return list(s.reasons)
        return [f"suite stop at {s.trials} trials per arm ({s.status})"] if s.stopped else []

    per_eval = [{"eval_id": e, "eval_name": named.get(e), "trials_per_arm": s.trials,
                 "trials_recorded": recorded.get(e, 0), "stopped": s.status if s.status == seq.AGREED else stopped,
                 "reasons": why(s)} for e, s in final.items()]
    return {
        "schema_version": SCHEMA_VERSION,
        "method": seq.METHOD,
        "alpha": seq.ALPHA,
        "interim_alpha_one_sided": seq.INTERIM_ALPHA,
        "final_alpha_one_sided": seq.FINAL_ALPHA,
        "futility_conditional_power": seq.FUTILITY_POWER or None,  # null: futility off (issue 34)
        "futility_optimism_se": seq.FUTILITY_OPTIMISM,
        # the per-eval stop's outcomes ("pass" / "fail" on which both arms' first look must agree); [] = off
        "eval_stop_when_arms_agree_on": ["pass" if v else "fail" for v in seq.AGREE_ON],
        "min_trials_per_eval": settings.min_trials_per_eval,
        "max_trials_per_eval": settings.max_trials_per_eval,
        "round_size": settings.round_size,
        "looks": seq.looks(settings.min_trials_per_eval, settings.max_trials_per_eval, settings.round_size),
        "gates_watched": [k for k, _ in questions.gates],
        "rule": RULE,
        "stopped": stopped,
        "stopped_at_trials_per_arm": suite.trials,
        "evals_agreed": sum(s.status == seq.AGREED for s in final.values()),
        "gates": [{"key": g.key, "z": g.z, "information_fraction": g.information,
                   "conditional_power": g.power, "status": g.status, "call": g.call, "reason": g.reason()}
                  for g in suite.gates],
        "reasons": list(suite.reasons),
        "trials_recorded": sum(recorded.values()),
        "trials_fixed_design": 2 * settings.max_trials_per_eval * len(final),
        "per_eval": per_eval,
    }


RULE = ("every eval gets trials each round; after each round, from min_trials_per_eval on, the whole run stops "
        "when every configured gate is decided (|Z| beyond the Haybittle-Peto interim boundary, one-sided "
        "p <= 0.00135 in t(E-1), and the fixed gate makes that call) or settled (conditional power of any call "
        "at max_trials_per_eval, under the trend moved half a standard error towards it, below 0.2, and the fixed "
        "gate INCONCLUSIVE); a gate once decided stays so while the fixed gate still makes that call; "
        "otherwise it runs to max_trials_per_eval. The reported gates are the fixed design's "
        "statistics on the trials run.")
