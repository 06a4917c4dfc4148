"""Blind comparison of two iterations' with-skill outputs (skill-creator's comparator).

For each eval a judge model sees the two outputs labelled A and B without knowing which
iteration wrote which. LLM judges prefer whichever output they are shown first (position
bias), so every pair is judged in both orders; a verdict that flips with the order is not a
preference and is recorded as TIE. The judge's reply is schema-constrained, validated, and
retried when invalid; a judge that still fails is reported and no verdict is written.

The judge only gives the rubric and the verdict. The derived scores are computed here, and the
expectation results come from the runs' own grading.json: facts are never asked of a model.
Labels in the written comparison-N.json are mapped back so that "A" always means ITER_A."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from skillassay.analyze.arms import SKILL_CONFIGS
from skillassay.errors import InputError
from skillassay.grade.fence import fence_for
from skillassay.grade.judge import (
    Caps,
    Judge,
    JudgeError,
    JudgeOutputError,
    _array,
    _object,
    _string,
    cap,
    make_judge,
    output_files,
    read_optional,
    templates,
)
from skillassay.grade.judge_providers import LocalJudge
from skillassay.models.improve import Comparison
from skillassay.stats.binomial import wilson_interval
from skillassay.store.discover import discover
from skillassay.store.jsonio import read_json, write_json
from skillassay.store.layout import ANSWER_FILE
from skillassay.store.read import load_grading

SCHEMA_VERSION = 1
CONTENT = ("correctness", "completeness", "accuracy")
STRUCTURE = ("organization", "formatting", "usability")
MAX_ITEMS = 3  # strengths/weaknesses per side for hosted judges
BOUNDED_MAX_ITEMS = 1  # the embedded model fills every slot it is given, often with repeats
Label = Literal["A", "B"]
LABELS: tuple[Label, Label] = ("A", "B")


# ------------------------------------------------------------------ judges

# The embedded model decodes its prompt one token at a time (~50 ms a token here), and a
# comparison shows two outputs in each of two calls, so its excerpts are short.
COMPARE_LOCAL_CAPS = Caps(prompt=200, answer=220, file_each=100, files_total=200, transcript=300, notes=200,
                          evidence=80, claims=1)


def make_compare_judge(name: str, model: str | None = None) -> Judge:
    """The grading judge's backends; the embedded model needs more output tokens here (two
    rubrics and two quality verdicts) than for grading one run."""
    if name == "local":
        return LocalJudge(temperature=0.0, max_tokens=1000, caps=COMPARE_LOCAL_CAPS)
    judge = make_judge(name, model)
    if judge is None:
        raise InputError.one("--judge", name, "a judge is required: local, openai or anthropic")
    return judge


def ask_validated(judge: Judge, system: str, user: str, schema: dict[str, Any], model: type[BaseModel],
                  attempts: int = 3) -> BaseModel:
    """One reply, validated with pydantic; an invalid reply is asked again, and after the last
    attempt JudgeError carries the reason. Transport errors are not retried here (the SDKs
    already retry 429/5xx)."""
    last = "no attempt made"
    for _ in range(max(1, attempts)):
        try:
            return model.model_validate(judge.complete_json(system, user, schema))
        except JudgeOutputError as exc:
            last = str(exc)
        except ValidationError as exc:
            last = f"reply does not match the schema: {exc.errors(include_url=False)[:3]}"
    raise JudgeError(f"invalid judge output after {attempts} attempts: {last}")


# ------------------------------------------------------------------ the reply schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgedContent(_Strict):
    correctness: int
    completeness: int
    accuracy: int


class JudgedStructure(_Strict):
    organization: int
    formatting: int
    usability: int


class JudgedRubric(_Strict):
    content: JudgedContent
    structure: JudgedStructure


class JudgedQuality(_Strict):
    score: int
    strengths: list[str]
    weaknesses: list[str]


class JudgedComparison(_Strict):
    """What the judge returns, in the labels it was shown."""

    rubric: dict[Label, JudgedRubric]
    output_quality: dict[Label, JudgedQuality]
    reasoning: str
    winner: Literal["A", "B", "TIE"]


def _scale(lo: int, hi: int) -> dict[str, Any]:
    """Integer scores as an enum: OpenAI's strict mode ignores minimum/maximum, an enum it keeps,
    and llama.cpp's grammar then cannot emit a 0 or a 7 on a 1-5 scale."""
    return {"type": "integer", "enum": list(range(lo, hi + 1))}


def comparison_schema(bounded: bool) -> dict[str, Any]:
    """Rubric and quality before reasoning and winner: the model commits to scores first and
    the verdict follows from them (properties are generated in schema order)."""
    rubric = _object({"content": _object({k: _scale(1, 5) for k in CONTENT}),
                      "structure": _object({k: _scale(1, 5) for k in STRUCTURE})})
    items = BOUNDED_MAX_ITEMS if bounded else MAX_ITEMS
    quality = _object({"score": _scale(1, 10),
                       "strengths": _array(_string(bounded, 60), bounded, items),
                       "weaknesses": _array(_string(bounded, 60), bounded, items)})
    return _object({
        "rubric": _object({k: rubric for k in LABELS}),
        "output_quality": _object({k: quality for k in LABELS}),
        "reasoning": _string(bounded, 200),
        "winner": {"type": "string", "enum": ["A", "B", "TIE"]},
    })


# ------------------------------------------------------------------ what is compared


@dataclass(frozen=True)
class Side:
    iteration: Path
    run_dir: Path


@dataclass(frozen=True)
class Pair:
    eval_id: int | str
    eval_name: str
    run_number: int
    a: Side
    b: Side


def skill_runs(iteration: Path) -> dict[tuple[int | str, int], tuple[str, Path]]:
    found = discover(iteration)
    return {(r.eval.eval_id, r.run_number): (r.eval.eval_name, Path(r.path))
            for r in found.runs if r.configuration in SKILL_CONFIGS}


def pick_pairs(iter_a: Path, iter_b: Path, eval_id: str | None = None, all_runs: bool = False) -> list[Pair]:
    """Matching with-skill runs of both iterations: run 1 of each eval (the lowest run number
    both have), or every run number both have."""
    runs_a, runs_b = skill_runs(iter_a), skill_runs(iter_b)
    common = sorted((k for k in runs_a if k in runs_b), key=lambda k: (str(k[0]).zfill(12), k[1]))
    if eval_id is not None:
        common = [k for k in common if str(k[0]) == str(eval_id)]
    if not all_runs:
        first: dict[int | str, tuple[int | str, int]] = {}
        for k in common:
            first.setdefault(k[0], k)
        common = list(first.values())
    if not common:
        what = f"eval {eval_id}" if eval_id is not None else "any eval"
        raise InputError.one(iter_b, "with_skill", f"no with_skill run of {what} exists in both {iter_a} and {iter_b}")
    return [Pair(k[0], runs_b[k][0], k[1], Side(iter_a, runs_a[k][1]), Side(iter_b, runs_b[k][1])) for k in common]


def eval_prompt(run_dir: Path) -> str:
    """eval_metadata.json sits two levels up (eval folder / configuration / run-K)."""
    for folder in (run_dir.parent.parent, run_dir.parent):
        meta = folder / "eval_metadata.json"
        if meta.is_file():
            data = read_json(meta)
            if isinstance(data, dict) and isinstance(data.get("prompt"), str):
                return data["prompt"]
    return ""


def expectation_results(run_dir: Path) -> dict[str, Any] | None:
    """From the run's grading.json, never from the judge. Ungraded expectations (passed null)
    count as not passed in `passed` and are left out of `details`, which take booleans."""
    grading = load_grading(run_dir)
    if grading is None:
        return None
    s = grading.summary
    return {"passed": s.passed, "total": s.total, "pass_rate": s.pass_rate,
            "details": [{"text": e.text, "passed": e.passed} for e in grading.expectations if e.passed is not None]}


def expectation_texts(run_dir: Path) -> list[str]:
    grading = load_grading(run_dir)
    return [e.text for e in grading.expectations] if grading else []


@dataclass(frozen=True)
class Shown:
    label: str
    answer: str
    files: list[Any]


def render_prompts(judge: Judge, pair: Pair, order: tuple[Side, Side]) -> tuple[str, str]:
    """The task and both outputs go inside a fence they cannot forge (grade/fence.py), as the
    grading judge's material does: an output cannot open a section of its own and name a winner."""
    caps = judge.caps
    env = templates()
    sides = [Shown(label, cap(read_optional(side.run_dir / "outputs" / ANSWER_FILE), caps.answer),
                   output_files(side.run_dir / "outputs", caps))
             for label, side in zip(LABELS, order, strict=True)]
    prompt = cap(eval_prompt(pair.b.run_dir), caps.prompt)
    fence = fence_for([prompt, *(s.answer for s in sides),
                       *(f"{f.name}\n{f.text or ''}" for s in sides for f in s.files)])
    system = env.get_template("blind_system.j2").render(bounded=judge.bounded, fence=fence)
    user = env.get_template("blind_user.j2").render(
        prompt=prompt,
        expectations=[cap(t, caps.evidence) for t in expectation_texts(pair.a.run_dir)][:3 if judge.bounded else 10],
        sides=sides, fence=fence)
    return system, user


# ------------------------------------------------------------------ combining two orders


def shown_mapping(order: tuple[Side, Side], pair: Pair) -> dict[str, str]:
    """Judge label -> true label ("A" is ITER_A)."""
    return {label: ("A" if side is pair.a else "B") for label, side in zip(LABELS, order, strict=True)}


def to_true_labels(reply: JudgedComparison, mapping: dict[str, str]) -> JudgedComparison:
    winner = reply.winner if reply.winner == "TIE" else mapping[reply.winner]
    return JudgedComparison(
        rubric={mapping[k]: v for k, v in reply.rubric.items()},
        output_quality={mapping[k]: v for k, v in reply.output_quality.items()},
        reasoning=reply.reasoning, winner=winner)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def rubric_side(judged: list[JudgedRubric]) -> dict[str, Any]:
    """Criteria averaged over the orders; content/structure scores are the criteria means to
    one decimal and overall is their sum (the spec's 4.7 + 4.3 = 9.0)."""
    content = {k: _mean([getattr(j.content, k) for j in judged]) for k in CONTENT}
    structure = {k: _mean([getattr(j.structure, k) for j in judged]) for k in STRUCTURE}
    cs, ss = round(_mean(list(content.values())), 1), round(_mean(list(structure.values())), 1)
    return {"content": content, "structure": structure, "content_score": cs, "structure_score": ss,
            "overall_score": round(cs + ss, 1)}


def combine(identity: JudgedComparison, swapped: JudgedComparison) -> dict[str, Any]:
    """Both judgements are in true labels. Text (reasoning, strengths, weaknesses) comes from
    the order in which the judge's labels were the true ones, so "Output A" in the reasoning
    means ITER_A; numbers are averaged over both orders."""
    agree = identity.winner == swapped.winner
    reasoning = identity.reasoning
    if not agree:
        reasoning = (f"Position bias: the verdict changed with the order the outputs were shown in "
                     f"({identity.winner} when A was shown first, {swapped.winner} when B was), so it is a TIE. "
                     f"Judge's reasoning with A first: {identity.reasoning}")
    return {
        "winner": identity.winner if agree else "TIE",
        "reasoning": reasoning,
        "rubric": {k: rubric_side([identity.rubric[k], swapped.rubric[k]]) for k in LABELS},
        "output_quality": {k: {"score": _mean([identity.output_quality[k].score, swapped.output_quality[k].score]),
                               "strengths": identity.output_quality[k].strengths,
                               "weaknesses": identity.output_quality[k].weaknesses} for k in LABELS},
    }


# ------------------------------------------------------------------ one pair, all pairs


@dataclass
class PairOutcome:
    pair: Pair
    path: Path | None = None
    comparison: Comparison | None = None
    error: str | None = None


def output_dir(iter_a: Path, iter_b: Path) -> Path:
    """Inside ITER_B, per opponent, so comparing one iteration with several never overwrites."""
    return iter_b / "blind" / f"vs-{iter_a.resolve().name}"


def compare_pair(judge: Judge, pair: Pair, seed: int, attempts: int = 3) -> Comparison:
    """Judge both orders; the first shown is chosen by a seeded coin per pair."""
    rng = random.Random(f"{seed}:{pair.eval_id}:{pair.run_number}")
    first = (pair.a, pair.b) if rng.random() < 0.5 else (pair.b, pair.a)
    orders = [first, (first[1], first[0])]
    schema = comparison_schema(judge.bounded)
    judged: list[tuple[dict[str, str], JudgedComparison]] = []
    for order in orders:
        system, user = render_prompts(judge, pair, order)
        reply = ask_validated(judge, system, user, schema, JudgedComparison, attempts)
        assert isinstance(reply, JudgedComparison)
        mapping = shown_mapping(order, pair)
        judged.append((mapping, to_true_labels(reply, mapping)))
    identity = next(j for m, j in judged if m == {"A": "A", "B": "B"})
    swapped = next(j for m, j in judged if m != {"A": "A", "B": "B"})
    data = combine(identity, swapped)
    sides = {"A": expectation_results(pair.a.run_dir), "B": expectation_results(pair.b.run_dir)}
    if all(v is not None for v in sides.values()):
        data["expectation_results"] = sides
    data["blind"] = {
        "schema_version": SCHEMA_VERSION, "seed": seed, "eval_id": pair.eval_id, "eval_name": pair.eval_name,
        "run_number": pair.run_number, "judge": judge.identity(),
        "A": {"iteration": str(pair.a.iteration), "run_dir": str(pair.a.run_dir)},
        "B": {"iteration": str(pair.b.iteration), "run_dir": str(pair.b.run_dir)},
        "orders": [{"judged_order": i + 1, "shown_as": {shown: true for shown, true in m.items()},
                    "winner": j.winner} for i, (m, j) in enumerate(judged)],
        "position_consistent": identity.winner == swapped.winner,
    }
    return Comparison.model_validate(data)


def summarize(outcomes: list[PairOutcome], iter_a: Path, iter_b: Path, seed: int, judge: dict[str, Any]) -> dict[str, Any]:
    """Win rate of B over A with a Wilson interval, one outcome per eval (the unit of
    replication: runs of one eval share a prompt). An eval's outcome is the side that won more
    of its compared runs; equal counts are a tie, which counts as not a win for B."""
    per_eval: dict[int | str, list[str]] = {}
    for o in outcomes:
        if o.comparison is not None:
            per_eval.setdefault(o.pair.eval_id, []).append(o.comparison.winner)
    verdicts = {}
    for e, ws in per_eval.items():
        a, b = ws.count("A"), ws.count("B")
        verdicts[e] = "B" if b > a else "A" if a > b else "TIE"
    n = len(verdicts)
    b_wins, a_wins = sum(v == "B" for v in verdicts.values()), sum(v == "A" for v in verdicts.values())
    iv = wilson_interval(b_wins, n)
    decisive = wilson_interval(b_wins, a_wins + b_wins)
    return {
        "schema_version": SCHEMA_VERSION, "a": str(iter_a), "b": str(iter_b), "seed": seed, "judge": judge,
        "n_evals": n, "b_wins": b_wins, "a_wins": a_wins, "ties": n - a_wins - b_wins,
        "win_rate_b": None if n == 0 else round(b_wins / n, 6),
        "win_rate_b_interval": None if iv is None else [round(iv[0], 6), round(iv[1], 6)],
        "decisive_win_rate_b": None if a_wins + b_wins == 0 else round(b_wins / (a_wins + b_wins), 6),
        "decisive_win_rate_b_interval": None if decisive is None else [round(decisive[0], 6), round(decisive[1], 6)],
        "interval_method": "Wilson 95% over evals (ties count as not a win; decisive excludes ties)",
        "per_eval": [{"eval_id": e, "winner": v, "comparisons": per_eval[e]} for e, v in verdicts.items()],
        "failures": [{"eval_id": o.pair.eval_id, "run_number": o.pair.run_number, "error": o.error}
                     for o in outcomes if o.error is not None],
    }


@dataclass
class BlindResult:
    outcomes: list[PairOutcome] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    summary_path: Path | None = None


def compare_blind(iter_a: Path, iter_b: Path, judge: Judge, eval_id: str | None = None, seed: int = 0,
                  all_runs: bool = False, attempts: int = 3) -> BlindResult:
    """Compare, write comparison-N.json per pair (N = run number) and summary.json. A pair whose
    judge failed gets no file (a stale one from an earlier call is removed) and is listed."""
    out_dir = output_dir(iter_a, iter_b)
    result = BlindResult()
    for pair in pick_pairs(iter_a, iter_b, eval_id, all_runs):
        path = out_dir / f"eval-{pair.eval_id}" / f"comparison-{pair.run_number}.json"
        outcome = PairOutcome(pair)
        try:
            outcome.comparison = compare_pair(judge, pair, seed, attempts)
            write_json(path, outcome.comparison)
            outcome.path = path
        except JudgeError as exc:
            outcome.error = str(exc)
            path.unlink(missing_ok=True)
        except Exception as exc:  # a backend bug is this pair's failure, not the whole command's
            outcome.error = f"{type(exc).__name__}: {exc}"
            path.unlink(missing_ok=True)
        result.outcomes.append(outcome)
    result.summary = summarize(result.outcomes, iter_a, iter_b, seed, judge.identity())
    result.summary_path = out_dir / "summary.json"
    write_json(result.summary_path, result.summary)
    return result
