"""`skillassay triggers --agent ...` with two or more agents (issue 37): the trigger eval of each
agent (its own executor, model and options) in `triggers/agents/<name>/` (its own triggers.json
and triggers.md, as a one-agent trigger eval writes them), and one `triggers/triggers.json`
holding every agent's recall and false-trigger rate (`agents`), the figures pooled over the agents
and the agents' gates together: FAIL if any agent fails, PASS only if every one passes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillassay.analyze.gate import NOT_GATED, GateResult
from skillassay.executors import Executor
from skillassay.models.agents import AgentConfig
from skillassay.models.triggers import AgentTriggers, QueryResult, TriggerGate, TriggerReport, TriggerRun
from skillassay.spec.skill import load_skill
from skillassay.store.agents_layout import AGENTS_DIR, agent_dir
from skillassay.store.jsonio import atomic_write_text, write_json
from skillassay.store.lock import WorkspaceLock
from skillassay.triggers import figures
from skillassay.triggers.gate import headline
from skillassay.triggers.measure import (
    TriggerRequest,
    build_report,
    evaluate,
    load_others,
    make_executor,
    triggers_folder,
)
from skillassay.triggers.queries import default_queries_path, load_queries
from skillassay.triggers.report_md import fmt_rate, md_cell, render_triggers_md
from skillassay.triggers.runner import RunSpec

PASS, FAIL = "PASS", "FAIL"
EXIT_CODES = {PASS: 0, NOT_GATED: 0, FAIL: 1}


def agent_trigger_request(req: TriggerRequest, agent: AgentConfig) -> TriggerRequest:
    return replace(req, executor=agent.executor, model=agent.model or req.model, options={**req.options,
                                                                                         **agent.options})


def combined_gate(gates: list[tuple[str, GateResult]]) -> TriggerGate:
    """The agents' gates together, each agent's verdict named."""
    statuses = [g.status for _, g in gates]
    status = (FAIL if FAIL in statuses else NOT_GATED if all(s == NOT_GATED for s in statuses)
              else PASS if all(s in (PASS, NOT_GATED) for s in statuses) else "INCONCLUSIVE")
    words = "; ".join(f"{name}: {headline(g)}" for name, g in gates)
    return TriggerGate(status=status, exit_code=EXIT_CODES.get(status, 3), headline=f"{status} over the agents ({words})",
                       thresholds=[{"agent": name, **t} for name, g in gates for t in g.to_dict()["thresholds"]],
                       problems=[f"{name}: {p}" for name, g in gates for p in g.problems])


def pooled_queries(parts: list[tuple[str, list[QueryResult]]], queries: list[Any], skill_name: str
                   ) -> list[QueryResult]:
    """Each query over every agent's runs (their records relative to the top triggers.json)."""
    out = []
    for i, query in enumerate(queries):
        runs: list[TriggerRun] = []
        for name, results in parts:
            runs += [r.model_copy(update={"record": f"{AGENTS_DIR}/{name}/{r.record}"}) for r in results[i].runs]
        out.append(figures.query_result(i, query, runs, skill_name))
    return out


def render_agents_md(report: TriggerReport) -> str:
    rows = ["| Agent | Recall | False-trigger rate | Gate |", "|---|---|---|---|"]
    rows += [f"| {md_cell(a.name)} | {fmt_rate(a.recall)} | {fmt_rate(a.false_trigger_rate)} | "
             f"{a.gate.status if a.gate else 'n/a'} |" for a in report.agents or []]
    gate = report.gate.headline if report.gate else ""
    return (f"# Trigger evals over {len(report.agents or [])} agents: {md_cell(report.skill_name)}\n\n"
            f"**{md_cell(gate)}**\n\n" + "\n".join(rows) + "\n\nEach agent's own figures: `agents/<name>/triggers.md`. "
            "Below: every query over all the agents' runs together.\n\n" + render_triggers_md(report))


def measure_agent_triggers(req: TriggerRequest, agents: list[AgentConfig],
                           on_done: Callable[[RunSpec, dict[str, Any], bool], None] | None = None,
                           ) -> tuple[TriggerReport, Path, int]:
    """Returns (the pooled report with `agents`, the folder written to, the exit code)."""
    skill = load_skill(Path(req.skill_dir))
    others = load_others(req.with_skills, skill)
    queries_path = Path(req.queries_path) if req.queries_path else default_queries_path(req.skill_dir)
    queries = load_queries(queries_path)
    executors: list[Executor] = []
    try:
        for agent in agents:  # every agent checked before any run (exit 2)
            executors.append(make_executor(agent_trigger_request(req, agent)))
        folder = triggers_folder(req, skill)
        folder.mkdir(parents=True, exist_ok=True)
        with WorkspaceLock(folder, "triggers"):
            parts: list[tuple[str, list[QueryResult]]] = []
            summaries = []
            gates = []
            for agent, executor in zip(agents, executors, strict=True):
                store = agent_dir(folder, agent.name)
                store.mkdir(parents=True, exist_ok=True)
                areq = agent_trigger_request(req, agent)
                results = evaluate(executor, (skill, *others), queries, range(len(queries)), req.runs, req.seed,
                                   store, req.concurrency, on_done, req.fail_fast)
                report, gate = build_report(skill, others, queries_path, executor, req.runs, req.seed, results, areq)
                write_json(store / "triggers.json", report)
                atomic_write_text(store / "triggers.md", render_triggers_md(report))
                parts.append((agent.name, results))
                gates.append((agent.name, gate))
                summaries.append(AgentTriggers(
                    name=agent.name, executor=executor.identity(), recall=report.recall,
                    false_trigger_rate=report.false_trigger_rate, precision=report.precision,
                    accuracy=report.accuracy, runs_completed=report.runs_completed, runs_failed=report.runs_failed,
                    misses=report.misses, false_triggers=report.false_triggers, gate=report.gate,
                    report=f"{AGENTS_DIR}/{agent.name}/triggers.json"))
            pooled = pooled_queries(parts, queries, skill.name)
            top, _ = build_report(skill, others, queries_path, executors[0], req.runs, req.seed, pooled, req)
            together = combined_gate(gates)
            top = top.model_copy(update={"executor": {"agents": [s.executor for s in summaries]},
                                         "agents": summaries, "gate": together})
            write_json(folder / "triggers.json", top)
            atomic_write_text(folder / "triggers.md", render_agents_md(top))
    finally:
        for executor in executors:
            executor.close()
    return top, folder, together.exit_code
