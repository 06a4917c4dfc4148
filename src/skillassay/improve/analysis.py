"""Post-hoc analysis of a blind comparison (skill-creator's analyzer): why did the winning
skill version win?

A judge model reads both versions' SKILL.md (the iterations' skill-snapshot), the transcripts
of the compared runs and the comparator's verdict, and says what in the instructions made the
difference and how to improve the loser. What is a fact (which side won, where each skill is,
the comparator's reasoning) is copied from the comparison, not asked of the model; the reply
is schema-constrained and validated with the spec's Analysis model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from skillassay.errors import InputError
from skillassay.grade.fence import fence_for
from skillassay.grade.judge import Judge, _array, _object, _string, cap, read_optional, templates
from skillassay.improve.blind import BOUNDED_MAX_ITEMS, MAX_ITEMS, ask_validated
from skillassay.models.improve import Analysis, Comparison
from skillassay.store.jsonio import load_model, write_json
from skillassay.store.layout import SNAPSHOT_DIR

CATEGORIES = ("instructions", "tools", "examples", "error_handling", "structure", "references")
TRANSCRIPT_FILE = "transcript.md"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgedFollowing(_Strict):
    score: int
    issues: list[str]


class JudgedInstructionFollowing(_Strict):
    winner: JudgedFollowing
    loser: JudgedFollowing


class JudgedSuggestion(_Strict):
    priority: Literal["high", "medium", "low"]
    category: Literal["instructions", "tools", "examples", "error_handling", "structure", "references"]
    suggestion: str
    expected_impact: str


class JudgedInsights(_Strict):
    winner_execution_pattern: str
    loser_execution_pattern: str


class JudgedAnalysis(_Strict):
    winner_strengths: list[str]
    loser_weaknesses: list[str]
    instruction_following: JudgedInstructionFollowing
    improvement_suggestions: list[JudgedSuggestion]
    transcript_insights: JudgedInsights


def analysis_schema(bounded: bool) -> dict[str, Any]:
    text = _string(bounded, 100)
    n = BOUNDED_MAX_ITEMS if bounded else MAX_ITEMS
    items = _array(text, bounded, n)
    following = _object({"score": {"type": "integer", "enum": list(range(1, 11))}, "issues": items})
    suggestion = _object({"priority": {"type": "string", "enum": ["high", "medium", "low"]},
                          "category": {"type": "string", "enum": list(CATEGORIES)},
                          "suggestion": text, "expected_impact": text})
    return _object({
        "winner_strengths": items,
        "loser_weaknesses": items,
        "instruction_following": _object({"winner": following, "loser": following}),
        "improvement_suggestions": _array(suggestion, bounded, n),
        "transcript_insights": _object({"winner_execution_pattern": text, "loser_execution_pattern": text}),
    })


@dataclass(frozen=True)
class Contest:
    """The two sides of a decided comparison, winner first."""

    winner_label: str
    winner_iteration: Path
    winner_run: Path
    loser_iteration: Path
    loser_run: Path
    reasoning: str


def contest_from(comparison: Comparison, where: Path) -> Contest:
    """The iterations and runs are in the comparison's `blind` record (written by
    compare-blind); a TIE has no winner to explain."""
    if comparison.winner == "TIE":
        raise InputError.one(where, "winner", "the comparison is a TIE: there is no winner to analyse")
    blind = (comparison.model_extra or {}).get("blind")
    if not isinstance(blind, dict) or not all(isinstance(blind.get(k), dict) for k in ("A", "B")):
        raise InputError.one(where, "blind", "no record of the compared iterations (write it with compare-blind)")
    win, lose = (blind["A"], blind["B"]) if comparison.winner == "A" else (blind["B"], blind["A"])
    return Contest(comparison.winner, Path(win["iteration"]), Path(win["run_dir"]), Path(lose["iteration"]),
                   Path(lose["run_dir"]), comparison.reasoning)


def skill_text(iteration: Path) -> str:
    return read_optional(iteration / SNAPSHOT_DIR / "SKILL.md")


def render_prompts(judge: Judge, contest: Contest) -> tuple[str, str]:
    """The skills, transcripts and the comparator's reasoning (all written by skill authors,
    agents or a model that read them) go inside a fence they cannot forge (grade/fence.py)."""
    caps, env = judge.caps, templates()
    skill_cap = max(caps.answer, 400)
    material = {
        "reasoning": cap(contest.reasoning, caps.notes),
        "winner_skill_path": str(contest.winner_iteration / SNAPSHOT_DIR),
        "winner_skill": cap(skill_text(contest.winner_iteration), skill_cap),
        "loser_skill_path": str(contest.loser_iteration / SNAPSHOT_DIR),
        "loser_skill": cap(skill_text(contest.loser_iteration), skill_cap),
        "winner_transcript": cap(read_optional(contest.winner_run / TRANSCRIPT_FILE), caps.transcript),
        "loser_transcript": cap(read_optional(contest.loser_run / TRANSCRIPT_FILE), caps.transcript),
    }
    fence = fence_for(material.values())
    system = env.get_template("analysis_system.j2").render(bounded=judge.bounded, fence=fence)
    user = env.get_template("analysis_user.j2").render(winner_label=contest.winner_label, fence=fence, **material)
    return system, user


def analyze(comparison: Comparison, where: Path, judge: Judge, attempts: int = 3) -> Analysis:
    contest = contest_from(comparison, where)
    system, user = render_prompts(judge, contest)
    reply = ask_validated(judge, system, user, analysis_schema(judge.bounded), JudgedAnalysis, attempts)
    assert isinstance(reply, JudgedAnalysis)
    return Analysis.model_validate({
        "comparison_summary": {
            "winner": contest.winner_label,
            "winner_skill": str(contest.winner_iteration / SNAPSHOT_DIR),
            "loser_skill": str(contest.loser_iteration / SNAPSHOT_DIR),
            "comparator_reasoning": contest.reasoning,
        },
        **reply.model_dump(),
        "analysis_judge": judge.identity(),
        "comparison_file": str(where),
    })


def analysis_path(comparison_path: Path) -> Path:
    """analysis.json beside comparison-1.json (the spec's name); analysis-N.json beside
    comparison-N.json for further runs, so analysing several never overwrites."""
    n = comparison_path.stem.removeprefix("comparison-")
    return comparison_path.with_name("analysis.json" if n in ("1", comparison_path.stem) else f"analysis-{n}.json")


def analyze_file(comparison_path: Path, judge: Judge, attempts: int = 3) -> Path:
    """Read, analyse, write; JudgeError (nothing written) when the judge keeps failing."""
    comparison = load_model(comparison_path, Comparison)
    analysis = analyze(comparison, comparison_path, judge, attempts)
    out = analysis_path(comparison_path)
    write_json(out, analysis)
    return out
