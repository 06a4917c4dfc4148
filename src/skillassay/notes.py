"""Analyst notes for benchmark.json `notes`, computed from the graded runs, not by a model.

skill-creator asks an analyzer agent for these observations; every one of them is a fact about
the numbers (an assertion that never varies, an eval whose trials disagree, an arm that
crashed alone, what the skill costs against what it gains), so computing them is cheaper,
reproducible and cannot hallucinate. The wording follows the spec's notes example."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from skillassay.records import ExpectationTally, TrialRecord, VerdictCounts
from skillassay.stats import within_eval_variance

if TYPE_CHECKING:  # aggregate imports this module; only the type is needed here
    from skillassay.aggregate import Arms

# Beyond this many, assertions of one kind are summarised in one note so that a large suite's
# notes stay readable.
MAX_LISTED = 3


def _label(config: str) -> str:
    """'without_skill' -> 'Without-skill', as the spec's notes write the arms."""
    return config.replace("_", "-").capitalize()


def _eval(eval_id: int | str, name: str) -> str:
    return f"Eval {eval_id} ({name})" if name and str(name) != str(eval_id) else f"Eval {eval_id}"


def _quoted(texts: list[str]) -> str:
    shown = ", ".join(f"'{t}'" for t in texts[:MAX_LISTED])
    return shown + (f" and {len(texts) - MAX_LISTED} more" if len(texts) > MAX_LISTED else "")


def expectation_verdicts(records: Iterable[TrialRecord], configs: tuple[str, ...]) -> dict[str, dict[str, list[bool]]]:
    """Assertion text -> configuration -> graded verdicts of completed runs. Ungraded (None)
    verdicts are left out: they are neither a pass nor a fail."""
    out: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if not r.completed or r.configuration not in configs:
            continue
        for e in r.expectations:
            if e.passed is not None:
                out[e.text][r.configuration].append(bool(e.passed))
    return out


def expectation_counts(records: Iterable[TrialRecord], configs: tuple[str, ...]) -> VerdictCounts:
    """Assertion text -> configuration -> (passes, fails) of completed runs, texts in the order
    the records first show them: expectation_verdicts counted (what ExpectationTally gives for
    light records)."""
    return {text: {c: (sum(vs), len(vs) - sum(vs)) for c, vs in by_config.items()}
            for text, by_config in expectation_verdicts(records, configs).items()}


def _counts(records: list[TrialRecord], arms: Arms, tally: ExpectationTally | None) -> VerdictCounts:
    configs = (arms.skill, arms.baseline)
    if tally is not None:
        return tally.counts(configs)
    if any(r.details_dir is not None for r in records):
        raise ValueError("light records (details_dir) need the ExpectationTally they were read with")
    return expectation_counts(records, configs)


def non_discriminating_notes(records: list[TrialRecord], arms: Arms,
                             tally: ExpectationTally | None = None) -> list[str]:
    """Assertions with the same verdict in every run of both arms cannot show what the skill
    changes: either they test something both arms get right, or something nobody can pass."""
    always, never = [], []
    for text, by_config in _counts(records, arms, tally).items():
        s, b = by_config.get(arms.skill), by_config.get(arms.baseline)
        if not s or not b:
            continue
        if not s[1] and not b[1]:
            always.append(text)
        elif not s[0] and not b[0]:
            never.append(text)
    notes = []
    if always:
        verb = "passes" if len(always) == 1 else "pass"
        notes.append(f"Assertion{'s' if len(always) > 1 else ''} {_quoted(always)} {verb} 100% in both "
                     "configurations - may not differentiate skill value")
    if never:
        verb = "fails" if len(never) == 1 else "fail"
        notes.append(f"Assertion{'s' if len(never) > 1 else ''} {_quoted(never)} {verb} in every run of both "
                     "configurations - may be too strict, broken, or beyond the model")
    return notes


def one_sided_failure_notes(records: list[TrialRecord], arms: Arms,
                            tally: ExpectationTally | None = None) -> list[str]:
    """An arm that fails an assertion in every run while the other arm passes it sometimes:
    the spec's "Without-skill runs consistently fail on ..." observation."""
    counts = _counts(records, arms, tally)
    notes = []
    for failing, other in ((arms.baseline, arms.skill), (arms.skill, arms.baseline)):
        texts = [t for t, by in counts.items()
                 if (f := by.get(failing)) and not f[0] and (o := by.get(other)) and o[0]]
        if texts:
            notes.append(f"{_label(failing)} runs consistently fail on {_quoted(texts)} "
                         f"({_label(other).lower()} runs pass {'it' if len(texts) == 1 else 'them'} at least once)")
    return notes


def _by_eval(records: list[TrialRecord]) -> dict[tuple[int | str, str], dict[str, list[TrialRecord]]]:
    cells: dict[tuple[int | str, str], dict[str, list[TrialRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        cells[(r.eval_id, r.eval_name)][r.configuration].append(r)
    return cells


def variance_notes(records: list[TrialRecord], arms: Arms) -> list[str]:
    """Any 0 < c < K is a non-deterministic eval (stats-notes): the spread shown is the
    per-trial standard deviation sqrt(c(K-c)/(K(K-1))), so "67% ± 58%" reads like the spec's
    "50% ± 40%"."""
    notes = []
    for (eval_id, name), by_config in _by_eval(records).items():
        for config in (arms.skill, arms.baseline):
            done = [r for r in by_config.get(config, []) if r.completed]
            k, c = len(done), sum(1 for r in done if r.passed)
            var = within_eval_variance(c, k)
            if var is None or var == 0:
                continue
            notes.append(f"{_eval(eval_id, name)} shows high variance in {config} ({c} of {k} trials passed, "
                         f"{c / k:.0%} ± {math.sqrt(var):.0%}) - may be flaky or model-dependent")
    return notes


def one_arm_error_notes(records: list[TrialRecord], arms: Arms) -> list[str]:
    """Errors in one arm only make the eval's comparison uneven, and often mean the skill (or
    its absence) breaks the agent rather than changing its answer."""
    notes = []
    for (eval_id, name), by_config in _by_eval(records).items():
        errored = {c: sum(1 for r in by_config.get(c, []) if not r.completed) for c in (arms.skill, arms.baseline)}
        for bad, good in ((arms.skill, arms.baseline), (arms.baseline, arms.skill)):
            if errored[bad] and not errored[good] and by_config.get(good):
                notes.append(f"{_eval(eval_id, name)}: only {bad} errored ({errored[bad]} of "
                             f"{len(by_config[bad])} trials) - the comparison on this eval is uneven")
    return notes


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _arm_means(records: list[TrialRecord], config: str) -> tuple[float | None, float | None, float | None]:
    """Mean per-run expectation pass rate, duration and tokens of completed runs: the same
    figures as run_summary, so the note agrees with the `delta` beside it."""
    done = [r for r in records if r.configuration == config and r.completed]
    return (_mean([r.expectation_pass_rate or 0.0 for r in done]),
            _mean([r.duration_seconds for r in done if r.duration_seconds is not None]),
            _mean([float(r.tokens) for r in done if r.tokens is not None]))


def _seconds(x: float) -> str:
    return f"{x:.0f}s" if x >= 10 else f"{x:.1f}s" if x >= 0.05 else "<0.1s"


def _cost_phrase(parts: list[tuple[float, str]]) -> str:
    """'adds 13s average execution time and 1700 tokens per run', merging a shared verb."""
    verbs = ["adds" if d >= 0 else "saves" for d, _ in parts]
    if len(set(verbs)) == 1:
        return f"{verbs[0]} " + " and ".join(text for _, text in parts)
    return " and ".join(f"{v} {text}" for v, (_, text) in zip(verbs, parts, strict=True))


def cost_notes(records: list[TrialRecord], arms: Arms) -> list[str]:
    """What the skill costs in time and tokens against its pass-rate gain, in one sentence."""
    ps, ts, ks = _arm_means(records, arms.skill)
    pb, tb, kb = _arm_means(records, arms.baseline)
    if ps is None or pb is None:
        return []
    parts: list[tuple[float, str]] = []
    if ts is not None and tb is not None:
        parts.append((ts - tb, f"{_seconds(abs(ts - tb))} average execution time"))
    if ks is not None and kb is not None:
        parts.append((ks - kb, f"{abs(ks - kb):.0f} tokens per run"))
    gain = ps - pb
    points = round(abs(gain) * 100)
    if points == 0:
        effect = "does not change pass rate"
    else:
        effect = f"{'improves' if gain > 0 else 'lowers'} pass rate by {points}%"
    if not parts:
        return [f"Skill {effect}"]
    # "but" only where a cost meets a gain, as in the spec's example.
    joiner = "but" if points and gain > 0 and any(d > 0 for d, _ in parts) else "and"
    return [f"Skill {_cost_phrase(parts)} {joiner} {effect}"]


def analyst_notes(records: list[TrialRecord], arms: Arms, tally: ExpectationTally | None = None) -> list[str]:
    """All observations, most actionable first: assertions that cannot discriminate, flaky
    evals, one-sided errors, then the cost/benefit line. `tally`: the verdicts of light records
    (see records.ExpectationTally)."""
    return [
        *non_discriminating_notes(records, arms, tally),
        *variance_notes(records, arms),
        *one_arm_error_notes(records, arms),
        *one_sided_failure_notes(records, arms, tally),
        *cost_notes(records, arms),
    ]
