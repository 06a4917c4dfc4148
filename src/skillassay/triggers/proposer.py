"""Proposers of a better description, for `optimize-description`.

A proposer sees what skill-creator's improve step sees: the skill's name, its current
description, the train queries it missed and those it fired on wrongly (with their rates), and
the earlier attempts; it answers with one new description. The built-ins are executors used as
plain models (`local`: the embedded model, `openai`, `anthropic`): one trial without a skill,
whose final answer is the proposal. `scripted` replays descriptions from a JSON list, so the
selection rule can be tested, and a loop replayed, without a model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from skillassay import plugins
from skillassay.errors import InputError
from skillassay.executors import Executor, ExecutorSettings, TrialRequest, check_executor, load_executor_class
from skillassay.spec.skillmd import DESCRIPTION_MAX
from skillassay.store.jsonio import read_json


@dataclass(frozen=True)
class QueryScore:
    query: str
    fired: int
    runs: int


@dataclass(frozen=True)
class ProposalContext:
    skill_name: str
    description: str
    misses: Sequence[QueryScore]
    false_triggers: Sequence[QueryScore]
    earlier: Sequence[str] = field(default_factory=tuple)
    round: int = 1


class Proposer(Protocol):
    name: str

    def propose(self, context: ProposalContext) -> str: ...

    def close(self) -> None: ...


def proposal_prompt(ctx: ProposalContext) -> str:
    """skill-creator's improve prompt, in our words: the description is all the agent sees
    before deciding to load the skill."""
    lines = [f'You are improving the description of an agent skill named "{ctx.skill_name}". An agent sees only '
             "the name and the description of each skill and loads a skill when its description matches the "
             "user's request.", "", f"Current description: {ctx.description}", ""]
    if ctx.misses:
        lines.append("It FAILED TO TRIGGER on these requests, which it should handle:")
        lines += [f'- "{q.query}" (loaded {q.fired}/{q.runs} times)' for q in ctx.misses]
        lines.append("")
    if ctx.false_triggers:
        lines.append("It TRIGGERED WRONGLY on these requests, which it should not handle:")
        lines += [f'- "{q.query}" (loaded {q.fired}/{q.runs} times)' for q in ctx.false_triggers]
        lines.append("")
    if ctx.earlier:
        lines.append("Earlier attempts (do not repeat them):")
        lines += [f"- {d}" for d in ctx.earlier]
        lines.append("")
    lines.append(f"Write a better description: what the skill does and when to use it, at most {DESCRIPTION_MAX} "
                 "characters, no angle brackets. Generalise from the requests; do not list them. Reply with the "
                 "new description only, between <new_description> and </new_description>.")
    return "\n".join(lines)


_TAGGED = re.compile(r"<new_description>(.*?)(?:</new_description>|$)", re.DOTALL)


def extract_description(text: str) -> str:
    """The text between the tags (or the whole answer without them), whitespace collapsed."""
    found = _TAGGED.search(text)
    body = found.group(1) if found else text
    return " ".join(body.split()).strip().strip('"').strip()


def spec_problems(description: str) -> list[str]:
    """The Agent Skills limits every proposal must respect before it is even measured."""
    out = []
    if not description.strip():
        out.append("empty")
    if len(description) > DESCRIPTION_MAX:
        out.append(f"{len(description)} characters, over the {DESCRIPTION_MAX} limit")
    if "<" in description or ">" in description:
        out.append("contains < or >")
    return out


class ExecutorProposer:
    """An executor used as a plain model: one trial, no skill, the answer is the proposal."""

    def __init__(self, executor: Executor, seed: int) -> None:
        self.executor = executor
        self.name = executor.name
        self.seed = seed

    @classmethod
    def make(cls, name: str, request: ProposerRequest) -> ExecutorProposer:
        """The executor of the same name (local, openai, anthropic), checked before any round."""
        executor = load_executor_class(name)(ExecutorSettings(model=request.model, temperature=request.temperature,
                                                              max_tokens=request.max_tokens,
                                                              options=dict(request.options)))
        check_executor(executor)
        return cls(executor, request.seed)

    def propose(self, context: ProposalContext) -> str:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="skillassay-proposer-") as work:
            result = self.executor.run(TrialRequest(prompt=proposal_prompt(context), workdir=Path(work), skill=None,
                                                    seed=self.seed + context.round, settings=self.executor.settings))
        if result.status != "ok":
            raise RuntimeError(f"the {self.name} proposer failed: {result.error}")
        return extract_description(result.final_text)

    def close(self) -> None:
        self.executor.close()


class ScriptedProposer:
    """Proposes the given descriptions in order; fails loudly when they run out."""

    name = "scripted"

    def __init__(self, descriptions: Sequence[str]) -> None:
        self.descriptions = list(descriptions)
        self.calls: list[ProposalContext] = []

    @classmethod
    def make(cls, name: str, request: ProposerRequest) -> ScriptedProposer:
        if request.proposals is None:
            raise InputError.one("--proposer scripted", "", "needs --proposals FILE (a JSON list of descriptions)")
        return cls(load_proposals(request.proposals))

    def propose(self, context: ProposalContext) -> str:
        self.calls.append(context)
        if len(self.calls) > len(self.descriptions):
            raise RuntimeError(f"scripted proposer: no description left for round {context.round}")
        return self.descriptions[len(self.calls) - 1]

    def close(self) -> None:
        return None


def load_proposals(path: Path) -> list[str]:
    data = read_json(path)
    if not isinstance(data, list) or not all(isinstance(d, str) for d in data):
        raise InputError.one(path, "", "expected a JSON list of description strings")
    return data


@dataclass(frozen=True)
class ProposerRequest:
    """What `--proposer NAME` and its options ask of a `skillassay.proposers` plugin: a class
    whose `make(name, request)` returns a Proposer."""

    model: str | None
    options: dict
    proposals: Path | None
    seed: int
    temperature: float = 0.8
    max_tokens: int = 300


def make_proposer(name: str, *, model: str | None, options: dict, proposals: Path | None, seed: int,
                  temperature: float = 0.8, max_tokens: int = 300) -> Proposer:
    """The proposer plugin of that name (plugins.py), built."""
    if plugins.find("proposers", name) is None:
        raise InputError.one("--proposer", name, plugins.unknown("proposers", name))
    request = ProposerRequest(model, options, proposals, seed, temperature, max_tokens)
    proposer: Proposer = plugins.load("proposers", name).make(name, request)
    return proposer


__all__ = ["ExecutorProposer", "ProposalContext", "Proposer", "QueryScore", "ScriptedProposer",
           "ProposerRequest", "extract_description", "make_proposer", "proposal_prompt", "spec_problems"]
