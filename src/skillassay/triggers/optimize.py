"""`skillassay optimize-description`: skill-creator's description loop, done so that it cannot
fool itself.

1. A seeded split of the queries into train and test, stratified by should_trigger (both
   kinds in both halves).
2. The current description is measured on every query (train and test).
3. Each round a proposer sees only the train misses and false triggers and proposes a new
   description; a proposal that breaks the spec (over 1,024 characters, a < or >) is refused
   unmeasured. A valid one is measured on every query.
4. It replaces the incumbent only if it beats it on the TEST queries beyond noise: the paired
   per-query accuracy differences (candidate - incumbent) must have a positive mean and a
   one-sided exact sign-flip p at most alpha / rounds (Bonferroni over the rounds, since each
   round tests a new candidate on the same test queries). Picking the best test score instead,
   as skill-creator does, picks whichever candidate the noise favoured.
5. description_history.json and description_report.md record every round; SKILL.md changes only
   with `apply`, atomically, and only when a candidate won."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from skillassay.errors import InputError
from skillassay.executors import Executor
from skillassay.models.triggers import (
    TRIGGERS_SCHEMA_VERSION,
    DescriptionHistory,
    DescriptionRound,
    QueryResult,
    SplitScore,
    TriggerQuery,
)
from skillassay.spec.skill import Skill, load_skill, split_frontmatter
from skillassay.stats.paired import sign_flip_p_value
from skillassay.stats.sign_flip import MIN_NONZERO_FOR_SIGNIFICANCE
from skillassay.store.jsonio import atomic_write_text, write_json
from skillassay.store.layout import copy_skill_tree, remove_tree
from skillassay.store.lock import WorkspaceLock
from skillassay.triggers import figures
from skillassay.triggers.measure import TriggerRequest, evaluate, load_others, make_executor, triggers_folder
from skillassay.triggers.proposer import ProposalContext, Proposer, QueryScore, spec_problems
from skillassay.triggers.queries import default_queries_path, load_queries
from skillassay.triggers.runner import RunSpec

OPTIMIZE_DIR = "optimize"
CANDIDATES_DIR = "candidates"


@dataclass
class OptimizeRequest:
    trigger: TriggerRequest
    rounds: int = 3
    test_fraction: float = 0.4
    alpha: float = 0.05
    apply: bool = False
    proposer_name: str = "local"


@dataclass
class Scored:
    description: str
    results: dict[int, QueryResult] = field(default_factory=dict)

    def accuracy_of(self, idx: Sequence[int]) -> dict[int, float]:
        out = {}
        for i in idx:
            q = self.results[i]
            acc = figures.query_accuracy(figures.counts_of(q.runs, q.should_trigger))
            if acc is not None:
                out[i] = acc
        return out


# ------------------------------------------------------------------------------- pure parts

def stratified_split(queries: Sequence[TriggerQuery], seed: int, test_fraction: float) -> tuple[list[int], list[int]]:
    """(train, test) query indexes: within each kind (should / should not trigger) a seeded
    shuffle, then max(1, int(n * fraction)) to test when the kind has 2 or more queries."""
    rng = np.random.default_rng(seed)
    train: list[int] = []
    test: list[int] = []
    for kind in (True, False):
        idx = [i for i, q in enumerate(queries) if q.should_trigger is kind]
        order = [idx[j] for j in rng.permutation(len(idx))]
        n_test = max(1, int(len(idx) * test_fraction)) if len(idx) >= 2 else 0
        test += order[:n_test]
        train += order[n_test:]
    return sorted(train), sorted(test)


def paired_test(incumbent: dict[int, float], candidate: dict[int, float]) -> tuple[float | None, float | None, int]:
    """(mean difference, one-sided p that the candidate is better, non-zero pairs) over the
    queries both measured."""
    common = sorted(set(incumbent) & set(candidate))
    if not common:
        return None, None, 0
    d = [candidate[i] - incumbent[i] for i in common]
    p, _ = sign_flip_p_value(d, alternative="greater")
    return float(np.mean(d)), p, sum(1 for x in d if x != 0)


def accepts(mean: float | None, p: float | None, level: float) -> bool:
    return mean is not None and p is not None and mean > 0 and p <= level


def split_score(scored: Scored, idx: Sequence[int]) -> SplitScore:
    per_query = scored.accuracy_of(idx)
    counts = [figures.counts_of(scored.results[i].runs, scored.results[i].should_trigger) for i in idx]
    rec, ftr = figures.recall(counts), figures.false_trigger_rate(counts)
    return SplitScore(accuracy=float(np.mean(list(per_query.values()))) if per_query else None,
                      recall=rec.value, false_trigger_rate=ftr.value,
                      per_query={str(i): round(v, 6) for i, v in per_query.items()})


def replace_description(text: str, description: str, file: Path) -> str:
    """SKILL.md with only the frontmatter's description changed (every other line kept as it
    is), checked by reading it back."""
    lines = text.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    start = next((i for i in range(1, end or 0) if lines[i].startswith("description:")), None)
    if end is None or start is None:
        raise InputError.one(file, "description", "no top-level `description:` line in the frontmatter to replace")
    stop = start + 1
    while stop < end and (lines[stop].startswith((" ", "\t")) or not lines[stop].strip()):
        stop += 1
    new_line = yaml.safe_dump({"description": description}, width=10**9, allow_unicode=True,
                              default_flow_style=False)
    out = "".join(lines[:start]) + new_line + "".join(lines[stop:])
    if split_frontmatter(out, file)[0].get("description") != description:
        raise InputError.one(file, "description", "could not rewrite the description safely; edit SKILL.md by hand")
    return out


# ------------------------------------------------------------------------------- the loop

def candidate_skill(skill: Skill, description: str, folder: Path) -> Skill:
    """A copy of the skill whose SKILL.md has `description`, kept under the workspace (a
    resumed optimisation finds it, and the runs measured with it, again)."""
    if description == skill.description:
        return skill
    key = hashlib.sha256(description.encode()).hexdigest()[:12]
    dest = folder / CANDIDATES_DIR / key / skill.name
    text = replace_description(skill.skill_md.read_text(encoding="utf-8"), description, skill.skill_md)
    if not (dest / "SKILL.md").is_file() or (dest / "SKILL.md").read_text(encoding="utf-8") != text:
        if dest.exists():
            remove_tree(dest, folder / CANDIDATES_DIR)
        copy_skill_tree(skill.path, dest)
        atomic_write_text(dest / "SKILL.md", text)
    return load_skill(dest)


def _misses(scored: Scored, idx: Sequence[int]) -> tuple[list[QueryScore], list[QueryScore]]:
    misses, false = [], []
    for i in idx:
        q = scored.results[i]
        score = QueryScore(q.query, q.trigger_rate.numerator, q.trigger_rate.denominator)
        if q.outcome == "miss":
            misses.append(score)
        elif q.outcome == "false_trigger":
            false.append(score)
    return misses, false


@dataclass
class _Loop:
    req: OptimizeRequest
    executor: Executor
    skill: Skill
    others: tuple[Skill, ...]
    queries: list[TriggerQuery]
    folder: Path

    on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None

    def measure(self, description: str) -> Scored:
        skill = candidate_skill(self.skill, description, self.folder)
        t = self.req.trigger
        results = evaluate(self.executor, (skill, *self.others), self.queries, range(len(self.queries)), t.runs,
                           t.seed, self.folder, t.concurrency, self.on_done)
        return Scored(description, {q.index: q for q in results})


def optimize_description(req: OptimizeRequest, proposer: Proposer,
                         on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None,
                         ) -> tuple[DescriptionHistory, Path]:
    t = req.trigger
    skill = load_skill(Path(t.skill_dir))
    others = load_others(t.with_skills, skill)
    queries = load_queries(Path(t.queries_path) if t.queries_path else default_queries_path(t.skill_dir))
    train, test = stratified_split(queries, t.seed, req.test_fraction)
    if not test or not train:
        raise InputError.one(t.queries_path or default_queries_path(t.skill_dir), "",
                             "too few queries to split into train and test: need at least 2 of each kind")
    executor = make_executor(t)
    folder = triggers_folder(t, skill)
    folder.mkdir(parents=True, exist_ok=True)
    level = req.alpha / max(1, req.rounds)
    try:
        with WorkspaceLock(folder, "optimize-description"):
            loop = _Loop(req, executor, skill, others, queries, folder, on_done)
            history = _run_rounds(loop, proposer, train, test, level)
            history.applied = bool(req.apply and history.changed)
            out = folder / OPTIMIZE_DIR
            out.mkdir(parents=True, exist_ok=True)
            write_json(out / "description_history.json", history)
            atomic_write_text(out / "description_report.md", render_history_md(history, queries, level))
            if history.applied:
                text = replace_description(skill.skill_md.read_text(encoding="utf-8"), history.best_description,
                                           skill.skill_md)
                atomic_write_text(skill.skill_md, text)
    finally:
        executor.close()
        proposer.close()
    return history, folder / OPTIMIZE_DIR


def _run_rounds(loop: _Loop, proposer: Proposer, train: list[int], test: list[int], level: float) -> DescriptionHistory:
    incumbent = loop.measure(loop.skill.description)
    rounds = [DescriptionRound(round=0, description=incumbent.description, status="current",
                               reason="the description the skill started with",
                               train=split_score(incumbent, train), test=split_score(incumbent, test))]
    earlier = [incumbent.description]
    for r in range(1, loop.req.rounds + 1):
        misses, false = _misses(incumbent, train)
        if not misses and not false:
            rounds.append(DescriptionRound(round=r, description=incumbent.description, status="rejected",
                                           reason="no train miss or false trigger left to learn from: stopped"))
            break
        proposal = proposer.propose(ProposalContext(loop.skill.name, incumbent.description, misses, false,
                                                    tuple(earlier), r))
        earlier.append(proposal)
        if problems := spec_problems(proposal):
            rounds.append(DescriptionRound(round=r, description=proposal, status="invalid",
                                           reason="refused unmeasured: " + "; ".join(problems)))
            continue
        if proposal == incumbent.description:
            rounds.append(DescriptionRound(round=r, description=proposal, status="rejected",
                                           reason="same as the current description"))
            continue
        cand = loop.measure(proposal)
        mean, p, nonzero = paired_test(incumbent.accuracy_of(test), cand.accuracy_of(test))
        won = accepts(mean, p, level)
        reason = _reason(won, mean, p, nonzero, level)
        rounds.append(DescriptionRound(round=r, description=proposal, status="accepted" if won else "rejected",
                                       reason=reason, train=split_score(cand, train), test=split_score(cand, test),
                                       test_difference=mean, p_value=p))
        if won:
            incumbent = cand
    original = loop.skill.description
    return DescriptionHistory(schema_version=TRIGGERS_SCHEMA_VERSION, skill_name=loop.skill.name, seed=loop.req.trigger.seed, proposer=loop.req.proposer_name,
                              alpha=loop.req.alpha, train=train, test=test, rounds=rounds,
                              best_description=incumbent.description, changed=incumbent.description != original)


def _reason(won: bool, mean: float | None, p: float | None, nonzero: int, level: float) -> str:
    if mean is None or p is None:
        return "no test query measured by both: nothing to compare"
    head = f"test accuracy {mean:+.3f} per query vs the incumbent, one-sided sign-flip p = {p:.4g} (needs <= {level:.4g})"
    if won:
        return head + ": better beyond noise, adopted"
    if mean <= 0:
        return head + ": not better on test"
    smallest = 0.5 ** nonzero if nonzero else 1.0
    if smallest > level:
        return (head + f": only {nonzero} test queries differ, so p cannot go below {smallest:.4g}; "
                f"add test queries (about {MIN_NONZERO_FOR_SIGNIFICANCE} or more should differ) to tell")
    return head + ": within noise, kept the incumbent"


def power_note(n_test: int, level: float) -> str | None:
    """Said up front when the test split is too small for any candidate ever to be adopted."""
    smallest = 0.5 ** n_test
    if smallest <= level:
        return None
    need = next(n for n in range(1, 64) if 0.5 ** n <= level)
    return (f"With {n_test} test queries the smallest attainable p is {smallest:.4g} > {level:.4g}: no candidate "
            f"can be adopted, whatever it scores. At least {need} test queries must improve; add queries "
            f"(or fewer --rounds, or a larger --test-fraction).")


def _power_note(n_test: int, level: float) -> list[str]:
    note = power_note(n_test, level)
    return [f"**Note:** {note}", ""] if note else []


def render_history_md(history: DescriptionHistory, queries: Sequence[TriggerQuery], level: float) -> str:
    from skillassay.triggers.report_md import md_cell

    lines = [f"# Description optimisation: {history.skill_name}", "",
             f"Proposer `{history.proposer}`, seed {history.seed}; train {len(history.train)} queries, test "
             f"{len(history.test)} (stratified by should_trigger). A candidate replaces the incumbent only when its "
             f"per-query accuracy on the test queries is higher with a one-sided exact sign-flip p <= "
             f"{history.alpha:g} / rounds = {level:.4g}.", "", *_power_note(len(history.test), level),
             "| round | status | train accuracy | test accuracy | test difference | p | reason |",
             "|---|---|---|---|---|---|---|"]
    for r in history.rounds:
        tr = f"{r.train.accuracy:.2f}" if r.train and r.train.accuracy is not None else "-"
        te = f"{r.test.accuracy:.2f}" if r.test and r.test.accuracy is not None else "-"
        diff = f"{r.test_difference:+.3f}" if r.test_difference is not None else "-"
        p = f"{r.p_value:.4g}" if r.p_value is not None else "-"
        lines.append(f"| {r.round} | {r.status} | {tr} | {te} | {diff} | {p} | {md_cell(r.reason, 300)} |")
    lines += ["", "## Descriptions", ""]
    lines += [f"{r.round}. ({r.status}) {md_cell(r.description, 1100)}" for r in history.rounds]
    verdict = ("changed: the best description beat the original on test beyond noise"
               if history.changed else "unchanged: no candidate beat the original on test beyond noise")
    lines += ["", f"Result: {verdict}." + (" Applied to SKILL.md." if history.applied else
                                          (" Not applied (run with --apply)." if history.changed else "")), ""]
    return "\n".join(lines)


__all__ = ["OptimizeRequest", "accepts", "power_note", "optimize_description", "paired_test", "replace_description",
           "stratified_split"]
