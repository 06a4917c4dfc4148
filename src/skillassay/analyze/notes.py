"""Analyst notes for benchmark.json `notes`, computed from the graded runs, not by a model.

skill-creator asks an analyzer agent for these observations; every one of them is a fact about
the numbers (an assertion that never varies, an eval whose trials disagree, an arm that
crashed alone, what the skill costs against what it gains), so computing them is cheaper,
reproducible and cannot hallucinate. The wording follows the spec's notes example."""

from __future__ import annotations

import math
from array import array

from skillassay.analyze.arms import Arms
from skillassay.analyze.cells import EvalCell, group_records, joined, mean_or_none
from skillassay.analyze.triggered import rarely_loaded_notes
from skillassay.stats.binomial import within_eval_variance
from skillassay.store.records import ExpectationTally, TrialRecord, VerdictCounts
from skillassay.wording import pct, points

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


def non_discriminating_notes(counts: VerdictCounts, arms: Arms) -> list[str]:
    """Assertions with the same verdict in every run of both arms cannot show what the skill
    changes: either they test something both arms get right, or something nobody can pass."""
    always, never = [], []
    for text, by_config in counts.items():
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


def one_sided_failure_notes(counts: VerdictCounts, arms: Arms) -> list[str]:
    """An arm that fails an assertion in every run while the other arm passes it sometimes:
    the spec's "Without-skill runs consistently fail on ..." observation."""
    notes = []
    for failing, other in ((arms.baseline, arms.skill), (arms.skill, arms.baseline)):
        texts = [t for t, by in counts.items()
                 if (f := by.get(failing)) and not f[0] and (o := by.get(other)) and o[0]]
        if texts:
            notes.append(f"{_label(failing)} runs consistently fail on {_quoted(texts)} "
                         f"({_label(other).lower()} runs pass {'it' if len(texts) == 1 else 'them'} at least once)")
    return notes


def variance_notes(cells: list[EvalCell], arms: Arms) -> list[str]:
    """Any 0 < c < K is a non-deterministic eval (stats-notes): the spread shown is the
    per-trial standard deviation sqrt(c(K-c)/(K(K-1))), so "67% ± 58%" reads like the spec's
    "50% ± 40%"."""
    notes = []
    for cell in cells:
        for config in (arms.skill, arms.baseline):
            k, c = cell.arms[config].completed, cell.arms[config].passes
            var = within_eval_variance(c, k)
            if var is None or var == 0:
                continue
            notes.append(f"{_eval(cell.eval_id, cell.eval_name)} shows high variance in {config} ({c} of {k} trials passed, "
                         f"{pct(c / k)} ± {pct(math.sqrt(var))}) - may be flaky or model-dependent")
    return notes


def one_arm_error_notes(cells: list[EvalCell], arms: Arms) -> list[str]:
    """Errors in one arm only make the eval's comparison uneven, and often mean the skill (or
    its absence) breaks the agent rather than changing its answer."""
    notes = []
    for cell in cells:
        by_config = cell.arms
        for bad, good in ((arms.skill, arms.baseline), (arms.baseline, arms.skill)):
            if by_config[bad].errored and not by_config[good].errored and by_config[good].recorded:
                notes.append(f"{_eval(cell.eval_id, cell.eval_name)}: only {bad} errored ({by_config[bad].errored} of "
                             f"{by_config[bad].recorded} trials) - the comparison on this eval is uneven")
    return notes


def config_values(cells: list[EvalCell], config: str) -> tuple[array[float], array[float], array[float]]:
    """Per completed run of a configuration, in run order: expectation pass rate (0 without
    expectations, as skill-creator counts it), duration and tokens (each where recorded)."""
    arms = [c.arms[config] for c in cells if config in c.arms]
    return (joined(a.run_rates for a in arms), joined(a.durations for a in arms), joined(a.tokens for a in arms))


def _arm_means(cells: list[EvalCell], config: str) -> tuple[float | None, float | None, float | None]:
    """The same figures as run_summary, so the note agrees with the `delta` beside it."""
    rates, durations, tokens = config_values(cells, config)
    return mean_or_none(rates), mean_or_none(durations), mean_or_none(tokens)


def _seconds(x: float) -> str:
    return f"{x:.0f}s" if x >= 10 else f"{x:.1f}s" if x >= 0.05 else "<0.1s"


def _cost_phrase(parts: list[tuple[float, str]]) -> str:
    """'adds 13s average execution time and 1700 tokens per run', merging a shared verb."""
    verbs = ["adds" if d >= 0 else "saves" for d, _ in parts]
    if len(set(verbs)) == 1:
        return f"{verbs[0]} " + " and ".join(text for _, text in parts)
    return " and ".join(f"{v} {text}" for v, (_, text) in zip(verbs, parts, strict=True))


def cost_notes(cells: list[EvalCell], arms: Arms) -> list[str]:
    """What the skill costs in time and tokens against its pass-rate gain, in one sentence."""
    ps, ts, ks = _arm_means(cells, arms.skill)
    pb, tb, kb = _arm_means(cells, arms.baseline)
    if ps is None or pb is None:
        return []
    parts: list[tuple[float, str]] = []
    if ts is not None and tb is not None:
        parts.append((ts - tb, f"{_seconds(abs(ts - tb))} average execution time"))
    if ks is not None and kb is not None:
        parts.append((ks - kb, f"{abs(ks - kb):.0f} tokens per run"))
    gain = ps - pb
    change = points(gain)
    # the mean share of expectations passed, not the share of trials that passed them all
    # (the report's "pass rate"): named so, and its change is in percentage points
    if change == "0":
        effect = "does not change the expectation pass rate"
    else:
        effect = f"{'improves' if gain > 0 else 'lowers'} the expectation pass rate by {change} percentage points"
    if not parts:
        return [f"Skill {effect}"]
    # "but" only where a cost meets a gain, as in the spec's example.
    joiner = "but" if change != "0" and gain > 0 and any(d > 0 for d, _ in parts) else "and"
    return [f"Skill {_cost_phrase(parts)} {joiner} {effect}"]


def analyst_notes(records: list[TrialRecord], arms: Arms) -> list[str]:
    """cell_notes for records held in memory."""
    configs = (arms.skill, arms.baseline)
    return cell_notes(group_records(records, configs), arms, ExpectationTally.of(records, configs))


def cell_notes(cells: list[EvalCell], arms: Arms, tally: ExpectationTally) -> list[str]:
    """All observations, most actionable first: assertions that cannot discriminate, flaky
    evals, evals whose with-skill arm seldom loaded the skill, one-sided errors, then the
    cost/benefit line. `tally`: the expectations' verdicts,
    counted while the runs were read (see records.ExpectationTally)."""
    counts = tally.counts((arms.skill, arms.baseline))
    return [
        *non_discriminating_notes(counts, arms),
        *variance_notes(cells, arms),
        *rarely_loaded_notes(cells, arms.skill),
        *one_arm_error_notes(cells, arms),
        *one_sided_failure_notes(counts, arms),
        *cost_notes(cells, arms),
    ]
