"""The LLM judge: grades plain-language expectations against what a run produced.

One request per run covers all its plain expectations (E1..En) and also yields the spec's
`claims`, `user_notes_summary` and optional `eval_feedback`. The reply is constrained to a
JSON schema by the backend (grammar-constrained decoding on the embedded model, structured
output on OpenAI, a forced tool on Anthropic) and validated again with pydantic, because a
schema-constrained reply can still be cut short. Invalid replies are retried; a judge that
still fails leaves its expectations ungraded (passed null, reason in evidence), never
silently passed or failed. Each verdict quotes the output that decides it, and the program
checks the quote really occurs there (`evidence`): a verdict without a real quote does not
count. With K samples the verdict is a majority vote of the counted ones; ties are ungraded."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel, ConfigDict, ValidationError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from skillassay.assertions.base import RunView
from skillassay.grade.evidence import MIN_QUOTE_CHARS, Sources, quote_parts, too_short
from skillassay.grade.fence import fence_for
from skillassay.models import ExpectationResult
from skillassay.models.runfiles import Claim, EvalFeedback, EvalSuggestion, UserNotesSummary
from skillassay.store.bounded import (
    decode_text,
    file_digest,
    join_head_tail,
    list_files,
    read_head_tail,
    read_text_capped,
)
from skillassay.store.layout import ANSWER_FILE, USER_NOTES_FILE
from skillassay.store.redact import disk_redactor

TRANSCRIPT_FILE = "transcript.md"
BOOKKEEPING_FILES = {ANSWER_FILE, "metrics.json", USER_NOTES_FILE}
TOOL_NAME = "record_grading"


class JudgeError(Exception):
    """The judge could not be asked (auth, bad model, network after the SDK's own retries)."""


class JudgeOutputError(JudgeError):
    """The judge answered, but not with valid JSON in the schema: worth asking again."""


# ------------------------------------------------------------------ what the judge sees


@dataclass(frozen=True)
class Caps:
    """Character budgets per section. The embedded model is tiny and slow (and decodes its
    prompt one token at a time where batching crashes, see executors.local), so its budget is
    small; hosted models get more."""

    prompt: int = 4000
    answer: int = 8000
    file_each: int = 4000
    files_total: int = 16000
    transcript: int = 8000
    notes: int = 3000
    evidence: int = 400
    claims: int = 5
    feedback: bool = True  # ask for eval_feedback at all (a 135M model's advice is noise, and slow)


LOCAL_CAPS = Caps(prompt=300, answer=500, file_each=200, files_total=400, transcript=0, notes=200,
                  evidence=80, claims=1, feedback=False)


def cap(text: str, limit: int) -> str:
    """Head and tail survive (answers conclude at the end; transcripts fail at the end)."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n…[{len(text) - limit} chars cut]…\n{text[-tail:] if tail else ''}"


@dataclass(frozen=True)
class OutputFile:
    name: str
    size: int
    text: str | None
    note: str = ""


MAX_FILES_SHOWN = 50  # output files named in the judge's prompt; the rest are counted


def read_text_or_none(path: Path, limit: int) -> tuple[str | None, int]:
    """(text, size): the file's head and tail within `limit` characters when it decodes as
    UTF-8 without NUL bytes, else None (binary). Reads at most about 4 * limit bytes, so a
    2 GiB output costs what a small one does; the text says how much was cut."""
    head_n, tail_n = max(limit * 4 * 2 // 3, 4096), max(limit * 4 // 3, 1024)
    head, tail, size = read_head_tail(path, head_n, tail_n)
    first = decode_text(head, at_end=not tail and size <= len(head))
    if first is None:
        return None, size
    if not tail:
        return cap(first, limit), size
    last = decode_text(tail, at_start=False)
    if last is None:
        return None, size
    return join_head_tail(first, last, limit, size), size


def output_files(outputs: Path, caps: Caps) -> list[OutputFile]:
    """Output files except our bookkeeping: text inlined (capped, head and tail, the secrets the
    run masked masked here too: the agent's own file is never masked on disk), binary described;
    at most MAX_FILES_SHOWN of them, the others counted in a last entry. Files past the
    characters budget are named, not read."""
    if not outputs.is_dir():
        return []
    listing = list_files(outputs, MAX_FILES_SHOWN + len(BOOKKEEPING_FILES))
    names = [n for n in listing.names if n not in BOOKKEEPING_FILES]
    bookkeeping = sum(os.path.isfile(outputs / n) and not os.path.islink(outputs / n) for n in BOOKKEEPING_FILES)
    out, budget, mask = [], caps.files_total, disk_redactor().text
    for rel in names[:MAX_FILES_SHOWN]:
        path = outputs / rel
        if budget <= 0:
            out.append(OutputFile(rel, path.stat().st_size, None, "not shown: the judge's budget for files is used up"))
            continue
        limit = min(caps.file_each, budget)
        text, size = read_text_or_none(path, limit)
        if text is None:
            digest = file_digest(path)
            described = f"sha256 {digest[:12]}" if digest else "too large to hash"
            out.append(OutputFile(rel, size, None, f"binary{suffix_note(path)}, {described}, not shown"))
            continue
        shown_all = len(text.encode("utf-8")) >= size
        text = mask(text)
        budget -= len(text)
        out.append(OutputFile(rel, size, text, "" if shown_all else
                              f"excerpt: truncated to {limit:,} characters, head and tail"))
    rest = listing.total - bookkeeping - min(len(names), MAX_FILES_SHOWN)
    if rest > 0:
        out.append(OutputFile(f"[{rest:,} more files]", 0, None,
                              f"not listed: the judge is shown at most {MAX_FILES_SHOWN} output files"))
    return out


_PLAIN_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")


def suffix_note(path: Path) -> str:
    """" PNG" for chart.png: the kind of a binary file, in its header outside the fence. The
    name is the agent's, so only a plain short suffix is shown there (a name may hold line
    breaks and a section of its own); the whole name stays inside the fence."""
    return f" {path.suffix[1:].upper()}" if _PLAIN_SUFFIX.fullmatch(path.suffix) else ""


READ_CAP = 1_000_000  # characters of a file read whole for a prompt (SKILL.md, a transcript)


def read_optional(path: Path, limit: int = READ_CAP) -> str:
    """A text file's content within `limit` characters (head and tail), "" when absent."""
    return read_text_capped(path, limit)[0] if path.is_file() else ""


@dataclass(frozen=True)
class JudgeInputs:
    prompt: str
    answer: str
    files: list[OutputFile]
    transcript: str
    user_notes: str


def gather(view: RunView, caps: Caps) -> JudgeInputs:
    return JudgeInputs(
        prompt=cap(view.prompt, caps.prompt),
        answer=cap(view.final_text, caps.answer),
        files=output_files(view.outputs_dir, caps),
        transcript=read_optional(view.run_dir / TRANSCRIPT_FILE, caps.transcript),
        user_notes=disk_redactor().text(read_optional(view.outputs_dir / USER_NOTES_FILE, caps.notes)),
    )


@cache
def templates() -> Environment:
    return Environment(loader=PackageLoader("skillassay", "templates"), undefined=StrictUndefined,
                       keep_trailing_newline=True, autoescape=False)


def render_prompts(inputs: JudgeInputs, expectations: list[str], caps: Caps) -> tuple[str, str]:
    """The graded material goes inside a fence it cannot forge (grade/fence.py)."""
    env = templates()
    fence = fence_for([inputs.prompt, inputs.answer, inputs.transcript, inputs.user_notes,
                       *(f"{f.name}\n{f.text or ''}" for f in inputs.files)])
    system = env.get_template("judge_system.j2").render(max_claims=caps.claims, feedback=caps.feedback,
                                                        has_notes=bool(inputs.user_notes.strip()), fence=fence)
    user = env.get_template("judge_user.j2").render(
        prompt=inputs.prompt, answer=inputs.answer, files=inputs.files, transcript=inputs.transcript,
        user_notes=inputs.user_notes, expectations=expectations, fence=fence)
    return system, user


def templates_hash() -> str:
    """Part of the judge identity: editing a prompt template re-judges cached results."""
    folder = Path(__file__).parent.parent / "templates"
    h = hashlib.sha256()
    for p in sorted(folder.glob("judge_*.j2")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------ the reply


def _string(bounded: bool, limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit} if bounded else {"type": "string"}


def _object(props: dict[str, Any]) -> dict[str, Any]:
    """Every property required and no others: what OpenAI's strict mode demands, and it
    makes a grammar for a small model leave nothing to chance."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _array(items: dict[str, Any], bounded: bool, limit: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "maxItems": limit} if bounded else {"type": "array", "items": items}


def reply_schema(n: int, caps: Caps, bounded: bool, with_notes: bool = True) -> dict[str, Any]:
    """The JSON schema for n expectations. `bounded` adds maxLength/maxItems so a grammar-
    constrained small model cannot ramble past max_tokens (hosted strict modes reject them).
    Without user notes there is nothing to summarise, so the field is not asked for at all."""
    ev, most = caps.evidence, caps.claims
    # The quote comes first: a model that must copy the deciding text before it decides is
    # less likely to decide from the expectation's wording alone.
    verdict = _object({"quote": _string(bounded, ev), "passed": {"type": "boolean"}, "evidence": _string(bounded, ev)})
    claim = _object({"claim": _string(bounded, ev), "type": {"type": "string", "enum": ["factual", "process", "quality"]},
                     "verified": {"type": "boolean"}, "evidence": _string(bounded, ev)})
    notes = _object({k: _array(_string(bounded, ev), bounded, most) for k in ("uncertainties", "needs_review", "workarounds")})
    suggestion = _object({"assertion": _string(bounded, ev), "reason": _string(bounded, ev)})
    feedback = _object({"suggestions": _array(suggestion, bounded, most), "overall": _string(bounded, ev)})
    props: dict[str, Any] = {
        "expectations": _object({f"E{i}": verdict for i in range(1, n + 1)}),
        "claims": _array(claim, bounded, most),
    }
    if with_notes:
        props["user_notes_summary"] = notes
    if caps.feedback:
        props["eval_feedback"] = {"anyOf": [feedback, {"type": "null"}]}
    return _object(props)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgedVerdict(_Strict):
    quote: str  # text copied from the output that decides it; "" only for a fail
    passed: bool
    evidence: str


class JudgedClaim(_Strict):
    claim: str
    type: Literal["factual", "process", "quality"]
    verified: bool
    evidence: str


class JudgedNotes(_Strict):
    uncertainties: list[str]
    needs_review: list[str]
    workarounds: list[str]


class JudgedSuggestion(_Strict):
    assertion: str
    reason: str


class JudgedFeedback(_Strict):
    suggestions: list[JudgedSuggestion]
    overall: str


class JudgeReply(_Strict):
    expectations: dict[str, JudgedVerdict]
    claims: list[JudgedClaim]
    user_notes_summary: JudgedNotes | None = None  # asked for only when there are notes
    eval_feedback: JudgedFeedback | None = None  # not asked of judges with caps.feedback off


def parse_reply(data: Any, n: int) -> JudgeReply:
    """Validate a reply; JudgeOutputError (retryable) when it does not fit."""
    try:
        reply = JudgeReply.model_validate(data)
    except ValidationError as exc:
        raise JudgeOutputError(f"reply does not match the schema: {exc.errors(include_url=False)[:3]}") from None
    expected = {f"E{i}" for i in range(1, n + 1)}
    if set(reply.expectations) != expected:
        raise JudgeOutputError(f"reply graded {sorted(reply.expectations)}, expected {sorted(expected)}")
    return reply


def parse_json_text(text: str | None) -> Any:
    if not text:
        raise JudgeOutputError("empty reply")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeOutputError(f"reply is not JSON ({exc.msg} at char {exc.pos}): {text[:120]!r}") from None


# ------------------------------------------------------------------ backends


class Judge(Protocol):
    """A backend that returns one JSON object in the given schema. A judge plugin (entry-point
    group `skillassay.judges`) is a class with `make(model, temperature)` returning one."""

    caps: Caps
    bounded: bool

    def identity(self) -> dict[str, Any]: ...

    def complete_json(self, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]: ...


def make_judge(name: str | None, model: str | None = None, samples: int = 1) -> Judge | None:
    """None/"none" -> no judge; else the judge plugin of that name (plugins.py). K > 1 samples
    need some randomness to be worth asking."""
    if name in (None, "", "none"):
        return None
    from skillassay import plugins
    from skillassay.errors import InputError

    if plugins.find("judges", name) is None:
        raise InputError.one("--judge", name, f"unknown judge; choose one of: none, {', '.join(plugins.names('judges'))}")
    factory = plugins.load("judges", name)
    judge: Judge = factory.make(model, 0.0 if samples <= 1 else 0.7)
    return judge


# ------------------------------------------------------------------ asking and voting


@dataclass(frozen=True)
class JudgePolicy:
    samples: int = 1
    attempts: int = 3
    # Invalid output is not load: retry soon. Rate limits and 5xx are the SDKs' own retries.
    wait_initial: float = 0.2
    wait_max: float = 2.0


def ask(judge: Judge, system: str, user: str, schema: dict[str, Any], n: int, policy: JudgePolicy) -> JudgeReply:
    """One sample, retried while the reply is invalid; JudgeError with the last reason after."""
    attempts = 0
    try:
        for attempt in Retrying(stop=stop_after_attempt(policy.attempts),
                                wait=wait_exponential(multiplier=policy.wait_initial, max=policy.wait_max),
                                retry=retry_if_exception_type(JudgeOutputError), reraise=True):
            with attempt:
                attempts += 1
                return parse_reply(judge.complete_json(system, user, schema), n)
    except JudgeOutputError as exc:
        raise JudgeError(f"invalid judge output after {attempts} attempts: {exc}") from None
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class JudgeOutcome:
    results: list[ExpectationResult]
    claims: list[Claim] | None = None
    user_notes_summary: UserNotesSummary | None = None
    eval_feedback: EvalFeedback | None = None
    errors: list[str] = field(default_factory=list)


def unsupported_reason(v: JudgedVerdict, sources: Sources) -> str | None:
    """Why a verdict cannot count, None when it can. A pass must quote the output (burden of
    proof); a fail may quote nothing (nothing in the output meets it); any quote given must
    really occur in the answer, an output file or the transcript."""
    quote = v.quote.strip()
    if not quote:
        return "the judge passed it without quoting the output" if v.passed else None
    if too_short(quote):
        return f"the judge's quote {quote!r} is too short to show anything"
    if sources.find(quote) is None:
        if len(parts := quote_parts(quote)) > 1 and min(map(len, parts)) < MIN_QUOTE_CHARS:
            return (f"the judge's quote {quote!r} stitches pieces shorter than {MIN_QUOTE_CHARS} "
                    "characters: a quote must be a span of the output")
        if sources.quotes_task(quote):
            return f"the judge quoted the task ({quote!r}), not the output"
        return f"the judge's quote {quote!r} does not occur in the answer, output files or transcript"
    return None


def vote(text: str, verdicts: list[JudgedVerdict], samples: int, failures: list[str],
         sources: Sources) -> ExpectationResult:
    """Majority of the samples whose verdict counts (see unsupported_reason); a tie, or no
    sample that counts, leaves the expectation ungraded with the reason."""
    counted = [v for v in verdicts if unsupported_reason(v, sources) is None]
    yes = sum(v.passed for v in counted)
    no = len(counted) - yes
    unquoted = len(verdicts) - len(counted)
    extras = {"judge_votes": {"passed": yes, "failed": no, "unquoted": unquoted, "invalid": len(failures)},
              "judge_agreement": round(max(yes, no) / samples, 4) if samples else 0.0}
    if not verdicts:
        reason = failures[-1] if failures else "no reply"
        return ExpectationResult(text=text, passed=None, evidence=f"Ungraded: judge failed: {reason}", **extras)
    if not counted:
        why = unsupported_reason(verdicts[0], sources)
        return ExpectationResult(text=text, passed=None, evidence=f"Ungraded: {why}", **extras)
    if yes == no:
        also = f", {unquoted} without a real quote" if unquoted else ""
        return ExpectationResult(text=text, passed=None,
                                 evidence=f"Ungraded: judge samples split {yes} pass / {no} fail{also}", **extras)
    passed = yes > no
    chosen = next(v for v in counted if v.passed == passed)
    evidence = chosen.evidence.strip() or "(no explanation given)"
    if quote := chosen.quote.strip():
        evidence += f' (quoted from {sources.find(quote)}: "{quote}")'
    prefix = f"judge {max(yes, no)}/{samples} agree: " if samples > 1 else ""
    return ExpectationResult(text=text, passed=passed, evidence=prefix + evidence, **extras)


def quote_sources(view: RunView, inputs: JudgeInputs) -> Sources:
    """What the judge was shown of the run's output (the full answer; files and transcript as
    excerpted for it): its quotes must come from there, never from the task or expectations."""
    return Sources.of([(ANSWER_FILE, view.final_text),
                       *((f"outputs/{f.name}", f"{f.name}\n{f.text or ''}") for f in inputs.files),
                       (TRANSCRIPT_FILE, inputs.transcript)], task=view.prompt, echoing=[TRANSCRIPT_FILE])


def to_spec_extras(reply: JudgeReply, has_notes: bool) -> tuple[list[Claim], UserNotesSummary, EvalFeedback | None]:
    claims = [Claim(claim=c.claim, type=c.type, verified=c.verified, evidence=c.evidence)
              for c in reply.claims if c.claim.strip()]
    n = reply.user_notes_summary if has_notes else None
    notes = (UserNotesSummary(uncertainties=n.uncertainties, needs_review=n.needs_review, workarounds=n.workarounds)
             if n is not None else UserNotesSummary(uncertainties=[], needs_review=[], workarounds=[]))
    fb = reply.eval_feedback
    feedback = None
    if fb is not None and (fb.suggestions or fb.overall.strip()):
        feedback = EvalFeedback(
            suggestions=[EvalSuggestion(assertion=s.assertion or None, reason=s.reason) for s in fb.suggestions],
            **({"overall": fb.overall} if fb.overall.strip() else {}))
    return claims, notes, feedback


def judge_expectations(judge: Judge, expectations: list[str], view: RunView,
                       policy: JudgePolicy = JudgePolicy()) -> JudgeOutcome:
    """Ask K samples about all expectations at once; vote per expectation."""
    caps = judge.caps
    inputs = gather(view, caps)
    system, user = render_prompts(inputs, expectations, caps)
    schema = reply_schema(len(expectations), caps, judge.bounded, with_notes=bool(inputs.user_notes.strip()))
    replies, failures = [], []
    for _ in range(max(1, policy.samples)):
        try:
            replies.append(ask(judge, system, user, schema, len(expectations), policy))
        except JudgeError as exc:
            failures.append(str(exc))
        except Exception as exc:  # a backend bug must not lose the run: it becomes the reason
            failures.append(f"{type(exc).__name__}: {exc}")
    samples = max(1, policy.samples)
    sources = quote_sources(view, inputs)
    results = [vote(text, [r.expectations[f"E{i}"] for r in replies], samples, failures, sources)
               for i, text in enumerate(expectations, 1)]
    outcome = JudgeOutcome(results=results, errors=failures)
    if replies:
        outcome.claims, outcome.user_notes_summary, outcome.eval_feedback = to_spec_extras(
            replies[0], bool(inputs.user_notes.strip()))
    return outcome
