"""A judge is measured before its verdicts count.

A judge that passes wrong answers makes a skill look better than it is, and nothing in a run
shows it: the embedded 135M judge passed "gives the exact restart command" on answers with a
wrong command because they named the service. So every judge is first asked about labelled
cases shipped with the package (judge_cases.json: an answer, one expectation and the verdict a
careful grader gives; half pass, half fail, most failures near misses), and its agreement with
those verdicts is stated with a Wilson 95% interval. A judge whose interval's lower bound is
below FLOOR is refused for grading unless the user overrides it, and the report then says so.
An ungraded case (the judge gave no verdict that counts) is a disagreement: it is not the
right verdict. The measurement is cached per judge (its identity: backend, model, sampling,
prompt templates, samples) and case set, so a run does not repeat it; the embedded judge's
measurement also ships with the package (grade/judge_standing.py), so it is never run by
`run --judge local` unless the model, its prompts or the cases changed."""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import platformdirs

from skillassay.assertions.base import RunView
from skillassay.errors import InputError
from skillassay.grade.grader import Grader
from skillassay.grade.judge import JudgePolicy, judge_expectations
from skillassay.grade.judge_standing import find_record, shipped_data, standing_key
from skillassay.models import Eval
from skillassay.models.runfiles import Metrics, Timing
from skillassay.store.jsonio import load_json_lenient, now_iso, write_json
from skillassay.wording import pct

FLOOR = 0.8  # the lowest agreement (95% lower bound) at which a judge's verdicts count
OVERRIDE_FLAG = "--allow-weak-judge"
CACHE_FILE = "judge-check.json"
Z95 = 1.959963984540054
TINY_NOTE = ("SmolLM2-135M-Instruct is a tiny model (135M parameters): its verdicts are a demonstration, "
             "not a grading to rely on")


@dataclass(frozen=True)
class JudgeCase:
    id: int
    prompt: str
    output: str
    expectation: str
    passed: bool
    why: str = ""


def cases_text() -> str:
    return resources.files("skillassay.grade").joinpath("judge_cases.json").read_text(encoding="utf-8")


def load_cases() -> list[JudgeCase]:
    data = json.loads(cases_text())
    return [JudgeCase(**c) for c in data["cases"]]


def balanced_subset(cases: list[JudgeCase], n: int) -> list[JudgeCase]:
    """The first n cases taken alternately from the pass and the fail labels (a quick look at a
    slow judge; never recorded as its standing, which needs every case)."""
    passes = [c for c in cases if c.passed]
    fails = [c for c in cases if not c.passed]
    picked: list[JudgeCase] = []
    for pair in zip(passes, fails, strict=False):
        picked.extend(pair)
    return picked[:n]


def cases_sha256() -> str:
    return hashlib.sha256(cases_text().encode()).hexdigest()


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for k of n: it stays inside [0, 1] and is not zero-width at
    k = 0 or k = n, where agreement often sits."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class CaseVerdict:
    id: int
    expected: bool
    verdict: bool | None  # None: ungraded (no verdict that counts)
    evidence: str

    @property
    def agrees(self) -> bool:
        return self.verdict is self.expected


@dataclass
class Agreement:
    """A judge's measured agreement with the labelled cases."""

    judge: dict[str, Any]
    cases: int
    agreed: int
    false_passes: int  # a wrong answer passed: the error that flatters a skill
    false_fails: int
    ungraded: int
    low: float
    high: float
    floor: float = FLOOR
    measured_at: str = ""
    cases_sha256: str = ""
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agreed / self.cases if self.cases else 0.0

    @property
    def meets_floor(self) -> bool:
        return self.low >= self.floor

    def sentence(self) -> str:
        return (f"agreed with the right verdict on {self.agreed} of {self.cases} labelled cases "
                f"({pct(self.rate)}, 95% CI {pct(self.low)}..{pct(self.high)}; {self.false_passes} wrong answers "
                f"passed, {self.false_fails} right answers failed, {self.ungraded} ungraded)")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agreement": round(self.rate, 4), "meets_floor": self.meets_floor}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Agreement:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def judge_case(grader: Grader, case: JudgeCase, scratch: Path) -> CaseVerdict:
    """One case, asked as a run's plain expectation is: the same prompts, quote check and vote."""
    assert grader.judge is not None
    view = RunView(final_text=case.output, outputs_dir=scratch / "outputs", metrics=Metrics(), timing=Timing(),
                   run_dir=scratch, prompt=case.prompt)
    outcome = judge_expectations(grader.judge, [case.expectation], view, grader.policy or JudgePolicy())
    result = outcome.results[0]
    return CaseVerdict(case.id, case.passed, result.passed, result.evidence)


def check_judge(grader: Grader, cases: list[JudgeCase] | None = None,
                on_case: Callable[[int, int], None] | None = None) -> Agreement:
    """Ask the judge about every labelled case; on_case(done, total) after each."""
    cases = load_cases() if cases is None else cases
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="skillassay-judge-check-") as tmp:
        for i, case in enumerate(cases, 1):
            verdicts.append(judge_case(grader, case, Path(tmp)))
            if on_case:
                on_case(i, len(cases))
    agreed = sum(v.agrees for v in verdicts)
    low, high = wilson(agreed, len(verdicts))
    by_id = {c.id: c for c in cases}
    return Agreement(
        judge=grader.identity() or {}, cases=len(verdicts), agreed=agreed,
        false_passes=sum(v.verdict is True and not v.expected for v in verdicts),
        false_fails=sum(v.verdict is False and v.expected for v in verdicts),
        ungraded=sum(v.verdict is None for v in verdicts), low=round(low, 4), high=round(high, 4),
        measured_at=now_iso(), cases_sha256=cases_sha256(),
        disagreements=[{"id": v.id, "expectation": by_id[v.id].expectation, "output": by_id[v.id].output,
                        "right": v.expected, "judge": v.verdict, "evidence": v.evidence}
                       for v in verdicts if not v.agrees])


# ------------------------------------------------------------------ the cache


def cache_path() -> Path:
    return Path(platformdirs.user_cache_dir("skillassay")) / CACHE_FILE


def cache_key(grader: Grader) -> str:
    """The judge's identity and the case set: a new model, prompt template or case file
    measures again. The embedded judge's build is part of it (answers differ by build)."""
    identity = grader.identity() or {}
    extra: dict[str, Any] = {}
    if identity.get("judge") == "local":
        from skillassay.executors.llama_runtime import build_info

        extra = build_info()
    blob = json.dumps({"judge": identity, "cases": cases_sha256(), **extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def cached(grader: Grader) -> Agreement | None:
    data = load_json_lenient(cache_path(), {})
    entry = data.get(cache_key(grader)) if isinstance(data, dict) else None
    try:
        return Agreement.from_dict(entry) if isinstance(entry, dict) else None
    except TypeError:  # an entry from another version: measure again
        return None


def remember(grader: Grader, agreement: Agreement) -> None:
    path = cache_path()
    data = load_json_lenient(path, {})
    data = data if isinstance(data, dict) else {}
    data[cache_key(grader)] = agreement.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)


def current_key(grader: Grader) -> dict[str, Any]:
    """The key a shipped record must match (judge_standing.py): for the embedded judge, with
    the installed model file's sha256."""
    identity = grader.identity() or {}
    model_sha: str | None = None
    if identity.get("judge") == "local":
        from skillassay.executors.llama_runtime import model_sha256
        from skillassay.executors.local import find_embedded_model

        model = find_embedded_model()
        model_sha = model_sha256(model) if model is not None else "not installed"
    return standing_key(identity, cases_sha256(), model_sha)


def shipped(grader: Grader) -> Agreement | None:
    """The standing shipped with the package for exactly this judge, model file and case set."""
    found = find_record(current_key(grader), shipped_data())
    try:
        return Agreement.from_dict(found) if found is not None else None
    except TypeError:
        return None


def progress_lines(notice: Callable[[str], None], total: int, lines: int = 8,
                   clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """An on_case(done, total) that says how far a measurement is in about `lines` lines (a line
    every total/lines cases and at the end): a run that has to measure a judge is not silent
    for minutes, and a CI log does not get a line per case."""
    step, start = max(1, math.ceil(total / lines)), clock()

    def on_case(done: int, of: int) -> None:
        if done % step == 0 or done == of:
            notice(f"judged {done} of {of} labelled cases ({clock() - start:.0f} s)")

    return on_case


# ------------------------------------------------------------------ before grading


def judge_record(grader: Grader, evals: Iterable[Eval], allow_weak: bool,
                 notice: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """standing() when the judge will grade something; None when no eval has a plain-language
    expectation (the judge is never asked, so it needs no measuring)."""
    if grader.judge is None or not any(isinstance(e, str) for ev in evals for e in ev.all_expectations()):
        return None
    return standing(grader, allow_weak, notice)


def judge_label(identity: dict[str, Any]) -> str:
    return f"{identity.get('judge')} ({identity.get('model')})"


def standing(grader: Grader, allow_weak: bool, notice: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The judge's measured agreement, for iteration.json (`source`: the user's cache, the
    record shipped with the package, or measured now and cached), with progress lines through
    `notice` while measuring. Below the floor the judge is refused (InputError, exit 2, naming the
    override) unless allow_weak. With the override and nothing cached it is not measured: the
    user chose to grade with it whatever it scores, and the record says it is unmeasured."""
    identity = grader.identity() or {}
    found, source = cached(grader), "cache"
    if found is None:
        found, source = shipped(grader), "shipped"
    if found is None and not allow_weak:
        cases = load_cases()
        if notice:
            notice(f"measuring the judge {judge_label(identity)} on {len(cases)} labelled cases before "
                   f"its verdicts count (once per judge: the result is cached in {cache_path()})")
        found, source = check_judge(grader, cases, progress_lines(notice, len(cases)) if notice else None), "measured"
        remember(grader, found)
    tiny = identity.get("judge") == "local"
    record: dict[str, Any] = {"judge": identity, "floor": FLOOR, "allowed_by": OVERRIDE_FLAG if allow_weak else None}
    if found is None:
        return {**record, "measured": False}
    record.update(measured=True, source=source,
                  **{k: v for k, v in found.to_dict().items() if k != "disagreements"})
    if not found.meets_floor and not allow_weak:
        measured = (f" (measured {found.measured_at[:10]} and shipped with skillassay for this model, prompt and "
                    f"case set)" if source == "shipped" else "")
        raise InputError.one("--judge", str(identity.get("judge")), (
            f"the judge {judge_label(identity)} {found.sentence()}{measured}: the lower bound is below the floor of "
            f"{pct(FLOOR)}, so its verdicts would not be a grading{' (' + TINY_NOTE + ')' if tiny else ''}. "
            f"Choose a stronger judge (--judge openai or anthropic), write the expectations as typed assertions, "
            f"or pass {OVERRIDE_FLAG} to grade with it anyway (the report then says so); "
            f"`skillassay judge-check --judge {identity.get('judge')}` lists the cases it got wrong"))
    return record

