"""Grading: turn a finished run (outputs, metrics, timing) into grading.json.

Typed assertions are checked by their plugins; plain-string expectations need a judge
(none configured -> ungraded with the reason, never silently passed or failed). A trial
passes when every expectation passes; one that fails fails it, whatever is left ungraded. `Grader` adds the
judge, its cache and the grader's timing (grading.json and timing.json) on top of the pure
`grade`; the engine and `skillassay grade` both use it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillassay import assertions
from skillassay.assertions import AssertionConfigError, AssertionPlugin, RunView
from skillassay.assertions.code import CheckError
from skillassay.assertions.paths import UsesEvalDir
from skillassay.errors import InputError, Problem
from skillassay.grade.turns import by_turn, name_turns, read_turn_answers, view_for
from skillassay.models import (
    Assertion,
    Eval,
    ExecutionMetrics,
    ExpectationResult,
    Grading,
    GradingSummary,
    Metrics,
    Timing,
)
from skillassay.models.runfiles import GradingTiming, UserNotesSummary
from skillassay.store.bounded import read_text_capped
from skillassay.store.jsonio import load_json_lenient, now_iso
from skillassay.store.layout import ANSWER_FILE, USER_NOTES_FILE

if TYPE_CHECKING:
    from skillassay.grade.judge import Judge, JudgePolicy

NOTES_READ_CAP = 200_000  # characters of user_notes.md summarised (head and tail of a bigger one)



@dataclass(frozen=True)
class CompiledExpectation:
    """An expectation ready to grade: a built plugin, or a plain statement for the judge."""

    text: str
    plugin: AssertionPlugin | None
    negate: bool = False
    # The expectation as written in the eval set (JSON), part of the judge cache key.
    source: Any = None
    # A multi-turn eval's: the turn (1-based) whose answer it is graded on, None for the whole
    # conversation. `in_conversation` False: a single-prompt eval's (grading.json names no turn).
    turn: int | None = None
    in_conversation: bool = False


def compile_expectations(ev: Eval, source: Path | str) -> list[CompiledExpectation]:
    """Build every plugin up front so a misconfigured assertion fails before any trial runs.
    Plugins that read files from the eval set folder (schema_file, python modules) get it
    here, so a missing file is reported now too."""
    compiled, problems = [], []
    eval_dir = Path(source).resolve().parent
    turns, paths = ev.expectation_turns(), ev.expectation_paths()
    for i, exp in enumerate(ev.all_expectations()):
        turn = turns[i] if turns else None
        if isinstance(exp, str):
            compiled.append(CompiledExpectation(exp, None, source=turn_source(exp, turn), turn=turn,
                                                in_conversation=bool(turns)))
            continue
        try:
            plugin = assertions.build(exp)
            if isinstance(plugin, UsesEvalDir):
                plugin.bind_eval_dir(eval_dir)
        except AssertionConfigError as exc:
            # JSONPath filter syntax: `[id=1]` would also be eaten as markup by rich in the CLI.
            where = f"$.evals[?(@.id=={ev.id})].{paths[i]}"
            message = str(exc) if f"'{exp.type}'" in str(exc) else f"'{exp.type}' assertion: {exc}"
            problems.append(Problem(str(source), where, f"eval {ev.id} ({ev.name or ev.slug}): {message}"))
            continue
        compiled.append(CompiledExpectation(assertion_text(exp, plugin), plugin, exp.negate,
                                            source=turn_source(exp.model_dump(mode="json"), turn), turn=turn,
                                            in_conversation=bool(turns)))
    if problems:
        raise InputError(problems)
    return compiled


def turn_source(source: Any, turn: int | None) -> Any:
    """A turn's expectation keyed with its turn, so the judge cache never hands turn 2 the
    verdict it gave the same words on turn 1's answer."""
    return source if turn is None else {"turn": turn, "expectation": source}


def deprecation_notes(evals: Iterable[Eval], compiled: Mapping[int, list[CompiledExpectation]],
                      source: Path | str) -> list[str]:
    """One line per old parameter name an assertion was given (AssertionPlugin.renamed), naming
    the file, the eval and the assertion: `validate` and `run` print them as warnings."""
    notes = []
    for ev in evals:
        paths = ev.expectation_paths()
        for i, exp in enumerate(compiled.get(ev.id, [])):
            for note in exp.plugin.deprecated if exp.plugin is not None else []:
                notes.append(f"{source}: $.evals[?(@.id=={ev.id})].{paths[i]}: eval {ev.id} "
                             f"({ev.name or ev.slug}): {note}")
    return notes


def require_judge(evals: Iterable[Eval], source: Path | str, grader: Grader) -> None:
    """Plain-language expectations need a judge: without one every such trial would end
    ungraded, so the whole run would be spent on a measurement that cannot say anything.
    Refused before any trial runs, naming each eval and `--judge`."""
    if grader.judge is not None:
        return
    problems = plain_expectation_problems(evals, source)
    if problems:
        raise InputError(problems)


def plain_expectation_problems(evals: Iterable[Eval], source: Path | str) -> list[Problem]:
    """require_judge's problems, one per eval with plain-language expectations (`validate`
    without --judge reports them as `run` without --judge refuses them)."""
    problems = []
    for ev in evals:
        plain = [i for i, exp in enumerate(ev.all_expectations()) if isinstance(exp, str)]
        if plain:
            texts = ", ".join(repr(t) for t in [ev.all_expectations()[i] for i in plain][:2])
            more = f" and {len(plain) - 2} more" if len(plain) > 2 else ""
            problems.append(Problem(
                str(source), f"$.evals[?(@.id=={ev.id})].{ev.expectation_paths()[plain[0]]}",
                f"eval {ev.id} ({ev.name or ev.slug}): {len(plain)} plain-language "
                f"{'expectation needs' if len(plain) == 1 else 'expectations need'} a judge ({texts}{more}) and "
                "none is chosen: run with --judge local (the embedded model), --judge openai or --judge "
                "anthropic, or write them as typed assertions"))
    return problems


def assertion_text(spec: Assertion, plugin: AssertionPlugin) -> str:
    if spec.text:
        return spec.text
    text = plugin.describe()
    return f"NOT: {text}" if spec.negate else text


def check(exp: CompiledExpectation, view: RunView) -> ExpectationResult:
    if exp.plugin is None:
        return ExpectationResult(text=exp.text, passed=None,
                                 evidence="Ungraded: plain-language expectation and no judge configured")
    try:
        verdict = exp.plugin.check(view)
    except CheckError as exc:  # the check hung or crashed: no verdict to report
        return ExpectationResult(text=exp.text, passed=None, evidence=f"Ungraded: {exc}")
    except Exception as exc:  # a plugin bug must not lose the run: record it as evidence
        return ExpectationResult(text=exp.text, passed=None, evidence=f"Ungraded: check raised {exc!r}")
    passed = verdict.passed != exp.negate
    evidence = verdict.evidence if not exp.negate else f"(negated) {verdict.evidence}"
    return ExpectationResult(text=exp.text, passed=passed, evidence=evidence)


def summarize(results: list[ExpectationResult]) -> GradingSummary:
    passed = sum(1 for r in results if r.passed is True)
    failed = sum(1 for r in results if r.passed is False)
    total = len(results)
    return GradingSummary(passed=passed, failed=failed, total=total,
                          pass_rate=round(passed / total, 4) if total else 0.0)


def grade(compiled: list[CompiledExpectation], view: RunView, grader_seconds: float | None = None,
          results: list[ExpectationResult] | None = None) -> Grading:
    """The grading of a run from its results (checked here when not given)."""
    results = [check(exp, view) for exp in compiled] if results is None else results
    m, t = view.metrics, view.timing
    return Grading(
        expectations=results,
        summary=summarize(results),
        execution_metrics=ExecutionMetrics(
            tool_calls=m.tool_calls, total_tool_calls=m.total_tool_calls, total_steps=m.total_steps,
            errors_encountered=m.errors_encountered, output_chars=m.output_chars,
            transcript_chars=m.transcript_chars),
        timing=GradingTiming(
            executor_duration_seconds=t.executor_duration_seconds,
            grader_duration_seconds=grader_seconds,
            total_duration_seconds=total_seconds(t, grader_seconds)),
    )


def total_seconds(t: Timing, grader_seconds: float | None) -> float | None:
    """Executor plus grader wall time, as in the spec's example (165 + 26 = 191)."""
    executor = t.executor_duration_seconds if t.executor_duration_seconds is not None else t.total_duration_seconds
    if executor is None:
        return None
    return round(executor + (grader_seconds or 0.0), 6)


def run_view(run_dir: Path, metrics: Metrics, timing: Timing, prompt: str = "",
             eval_dir: Path | None = None, final_text: str | None = None,
             listed_outputs: Iterable[str] | None = None,
             turn_answers: Sequence[tuple[str, str]] | None = None) -> RunView:
    """`final_text`: the answer as written to outputs/answer.md, when the caller has it;
    `listed_outputs`: the files in outputs/ besides it, when the caller has just listed them;
    `turn_answers`: a multi-turn trial's (prompt, answer) per turn, read from turns.json when
    not given."""
    if final_text is None:
        answer = run_dir / "outputs" / ANSWER_FILE
        final_text = answer.read_text(encoding="utf-8", errors="replace") if answer.is_file() else ""
    text = final_text
    if turn_answers is None:
        turn_answers = read_turn_answers(run_dir)
    return RunView(final_text=text, outputs_dir=run_dir / "outputs", metrics=metrics, timing=timing,
                   run_dir=run_dir, prompt=prompt, eval_dir=eval_dir,
                   listed_outputs=None if listed_outputs is None else frozenset(listed_outputs),
                   turn_answers=tuple(turn_answers))


def parse_user_notes(text: str) -> UserNotesSummary:
    """Without a judge, the executor's notes are still summarised: bullet lines under a
    heading that names uncertainties, review or workarounds go to that list."""
    buckets: dict[str, list[str]] = {"uncertainties": [], "needs_review": [], "workarounds": []}
    current = "uncertainties"
    for line in text.splitlines():
        stripped = line.strip()
        low = stripped.lower()
        if stripped.startswith("#") or (low.endswith(":") and not stripped.startswith(("-", "*"))):
            current = ("workarounds" if "workaround" in low else "needs_review" if "review" in low
                       else "uncertainties" if "uncertain" in low else current)
        elif stripped.startswith(("-", "*")) and stripped.lstrip("-* ").strip():
            buckets[current].append(stripped.lstrip("-* ").strip())
    return UserNotesSummary(**buckets)


def empty_notes() -> UserNotesSummary:
    """All three lists set explicitly: files are written with exclude_unset."""
    return UserNotesSummary(uncertainties=[], needs_review=[], workarounds=[])


def record_grader_timing(run_dir: Path, start: str, end: str, seconds: float) -> None:
    """The spec keeps grader_start/end/duration in timing.json too; the other fields stay."""
    from skillassay.store.jsonio import write_json

    path = run_dir / "timing.json"
    data = load_json_lenient(path, {})
    if not isinstance(data, dict):
        data = {}
    data.update(grader_start=start, grader_end=end, grader_duration_seconds=round(seconds, 6))
    write_json(path, data)


@dataclass
class GradeCounts:
    """How many plain expectations were sent to the judge or taken from its cache."""

    judged: int = 0
    cached: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, judged: int, cached: int) -> None:
        with self.lock:
            self.judged += judged
            self.cached += cached


@dataclass
class Grader:
    """Grades whole runs: typed checks, the judge (with its cache) and the grader timing.
    Shared by worker threads; each run's cache file is touched by one thread only."""

    judge: Judge | None = None
    policy: JudgePolicy | None = None
    use_cache: bool = True
    counts: GradeCounts = field(default_factory=GradeCounts)

    def identity(self) -> dict[str, Any] | None:
        if self.judge is None:
            return None
        from skillassay.grade.judge import templates_hash

        samples = self.policy.samples if self.policy else 1
        return {**self.judge.identity(), "samples": samples, "templates": templates_hash(),
                "caps": self.judge.caps.__dict__}

    def grade_run(self, compiled: list[CompiledExpectation], view: RunView, use_judge: bool = True,
                  timing: Timing | None = None) -> Grading:
        """Grade one finished run; the grader's times go into `timing` when the caller will
        write timing.json itself (the engine: one write per trial), else into the file."""
        start, t0 = now_iso(), time.perf_counter()
        views = [view_for(e, view) for e in compiled] if view.turn_answers else [view] * len(compiled)
        results: list[ExpectationResult | None] = [None if e.plugin is None else check(e, v)
                                                   for e, v in zip(compiled, views, strict=True)]
        plain = [i for i, e in enumerate(compiled) if e.plugin is None]
        extras: dict[str, Any] = {}
        if plain and use_judge and self.judge is not None:
            for group in by_turn(compiled, plain):  # one judge call per answer judged
                found = self.judge_plain(compiled, group, views[group[0]], results)
                if compiled[group[0]].turn is None or not extras:  # the whole conversation's, if any
                    extras = found or extras
        for i in plain:
            if results[i] is None:
                results[i] = check(compiled[i], views[i])  # ungraded: no judge configured
        seconds = time.perf_counter() - t0
        final = [r for r in results if r is not None]
        name_turns(compiled, final)
        grading = grade(compiled, view, round(seconds, 6), final)
        grading.claims = extras.get("claims") or []
        grading.user_notes_summary = extras.get("user_notes_summary") or self.notes_of(view)
        if extras.get("eval_feedback") is not None:
            grading.eval_feedback = extras["eval_feedback"]
        if self.judge is not None and plain:
            grading.judge = self.identity()  # type: ignore[attr-defined]  # an extra field (the model allows extras)
        if timing is not None:
            timing.grader_start, timing.grader_end = start, now_iso()
            timing.grader_duration_seconds = round(seconds, 6)
        else:
            record_grader_timing(view.run_dir, start, now_iso(), seconds)
        return grading

    @staticmethod
    def notes_of(view: RunView) -> UserNotesSummary:
        """The executor's user_notes.md, summarised. When the trial loop has just listed outputs/
        (view.listed_outputs), that listing says whether there is one: no look on disk per trial."""
        if view.listed_outputs is not None and USER_NOTES_FILE not in view.listed_outputs:
            return empty_notes()
        notes_file = os.path.join(view.outputs_dir, USER_NOTES_FILE)
        if view.listed_outputs is None and not os.path.isfile(notes_file):
            return empty_notes()
        return parse_user_notes(read_text_capped(Path(notes_file), NOTES_READ_CAP)[0])

    def judge_plain(self, compiled: list[CompiledExpectation], plain: list[int], view: RunView,
                    results: list[ExpectationResult | None]) -> dict[str, Any]:
        """Fill results[i] for the plain expectations, from the cache or one judge call;
        returns the run-level extras (claims, notes summary, feedback) as models."""
        from skillassay.grade.judge import JudgePolicy, judge_expectations
        from skillassay.grade.judge_cache import JudgeCache, entry_key, run_content_hash, sha
        from skillassay.models.runfiles import Claim, EvalFeedback

        assert self.judge is not None
        identity = self.identity() or {}
        content = run_content_hash(view.run_dir, view.prompt)
        cache = JudgeCache.load(view.run_dir) if self.use_cache else JudgeCache(view.run_dir / "grading_cache.json")
        keys = {i: entry_key(compiled[i].source, identity, content) for i in plain}
        extras_key = sha({"judge": identity, "run": content})
        misses = []
        for i in plain:
            hit = cache.get(keys[i])
            if hit is not None:
                hit.judge_cached = True  # type: ignore[attr-defined]  # an extra field (the model allows extras)
                results[i] = hit
            else:
                misses.append(i)
        stored = cache.extras.get(extras_key)
        if misses:  # claims etc. then come from this call: they describe the same run
            outcome = judge_expectations(self.judge, [compiled[i].text for i in misses], view,
                                         self.policy or JudgePolicy())
            for i, result in zip(misses, outcome.results, strict=True):
                results[i] = result
                cache.put(keys[i], result)
            if outcome.claims is not None:
                stored = {"claims": [c.model_dump(mode="json") for c in outcome.claims],
                          "user_notes_summary": outcome.user_notes_summary.model_dump(mode="json")
                          if outcome.user_notes_summary else None,
                          "eval_feedback": outcome.eval_feedback.model_dump(mode="json")
                          if outcome.eval_feedback else None}
                cache.extras[extras_key] = stored
        self.counts.add(len(misses), len(plain) - len(misses))
        if self.use_cache:
            cache.save(set(keys.values()), {extras_key})
        if not stored:
            return {}
        return {"claims": [Claim.model_validate(c) for c in stored["claims"]],
                "user_notes_summary": UserNotesSummary.model_validate(stored["user_notes_summary"])
                if stored.get("user_notes_summary") else None,
                "eval_feedback": EvalFeedback.model_validate(stored["eval_feedback"])
                if stored.get("eval_feedback") else None}


def make_grader(judge: str | None, model: str | None = None, samples: int = 1, use_cache: bool = True) -> Grader:
    """A Grader for a --judge name (none/local/openai/anthropic) and K samples. Without a judge
    the judge module (jinja2 templates, tenacity, its pydantic reply models) is not imported:
    a policy is only ever read when there is a judge to ask."""
    if samples < 1:
        raise InputError.one("--judge-samples", str(samples), "must be at least 1")
    if judge in (None, "", "none"):
        return Grader(judge=None, policy=None, use_cache=use_cache)
    from skillassay.grade.judge import JudgePolicy, make_judge

    return Grader(judge=make_judge(judge, model, samples), policy=JudgePolicy(samples=samples), use_cache=use_cache)


def grade_or_fail(compiled: list[CompiledExpectation], view: RunView, status: str, error: str | None,
                  grader: Grader | None = None, timing: Timing | None = None) -> Grading:
    """Grade a run; a trial that failed (status not ok) fails every expectation with the reason,
    and is excluded from rates. One rule for `run` and for re-grading."""
    grading = (grader or Grader()).grade_run(compiled, view, use_judge=status == "ok", timing=timing)
    if status != "ok":
        for exp in grading.expectations:
            exp.passed, exp.evidence = False, f"Trial {status}: {error or 'no detail'}"
        grading.summary.passed, grading.summary.failed = 0, grading.summary.total
        grading.summary.pass_rate = 0.0
    return grading
