"""A matrix iteration on disk (issue 37): the summary across agents (matrix.json) and the top
report.md from each agent's benchmark.json, for `run` after its trials and for `aggregate`,
`report` and `gate` given a matrix iteration folder. Each agent's folder is an iteration of its
own, so everything per agent is the one-agent workflow run on it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.analyze.gate import measurement_problems
from skillassay.analyze.matrix import AgentPart, summarize_matrix
from skillassay.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_PASS, InputError
from skillassay.models import Benchmark
from skillassay.models.matrix import MatrixSummary
from skillassay.report.ci_outputs import md_cell
from skillassay.report.matrix_md import render_matrix_md, write_matrix_chart
from skillassay.store.agents_layout import agent_dir, recorded_agents
from skillassay.store.iteration_files import find_config, load_config
from skillassay.store.jsonio import atomic_write_text, read_json, write_json
from skillassay.store.lock import WorkspaceLock
from skillassay.workflows.gate_iteration import for_thresholds

MATRIX_FILE = "matrix.json"
REPORT_FILE = "report.md"


@dataclass
class MatrixResult:
    summary: MatrixSummary
    matrix_path: Path
    report_path: Path
    exit_code: int  # follows summary.verdict; never 0 on a required agent's invalid measurement
    invalid: list[str]  # "agent: why its measurement is invalid", for the required agents


def agents_of(top: Path) -> list[dict[str, Any]]:
    agents = recorded_agents(top)
    if agents is None:
        raise InputError.one(top / "iteration.json", "$.agents", "not a matrix iteration (no agents recorded)")
    return agents


def read_benchmark(folder: Path) -> dict[str, Any]:
    path = folder / "benchmark.json"
    if not path.is_file():
        raise InputError.one(path, "", "missing: aggregate the iteration first (`skillassay aggregate`)")
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError.one(path, "$", "expected a benchmark object")
    return data


def matrix_parts(top: Path, config: Path | None = None) -> tuple[list[AgentPart], list[str]]:
    """Each recorded agent with its benchmark.json, its gates recomputed for the thresholds of
    --config or its recorded config when they differ from those it was aggregated for (as
    `gate` does for one agent), and the required agents' reasons their measurement is invalid."""
    parts = []
    invalid = []
    for entry in agents_of(top):
        folder = agent_dir(top, entry["name"])
        data = read_benchmark(folder)
        bench = Benchmark.model_validate(data)
        thresholds = load_config(find_config(folder, config)).thresholds
        gated = for_thresholds(bench, thresholds, folder)
        if gated is not bench:
            data = {**data, **gated.to_json_dict(), "runs": data.get("runs", [])}
        required = entry.get("required") is not False
        parts.append(AgentPart(name=entry["name"], required=required, executor=str(entry.get("executor") or ""),
                               model=entry.get("model") if isinstance(entry.get("model"), str) else None,
                               benchmark=data))
        if required:
            invalid += [f"{entry['name']}: {problem}" for problem in measurement_problems(gated)]
    return parts, invalid


def verdict_code(summary: MatrixSummary, invalid: list[str]) -> int:
    """The exit code of the matrix verdict, as a one-agent gate's: an invalid measurement of a
    required agent is never a pass."""
    code = summary.exit_code if summary.exit_code in (EXIT_PASS, EXIT_FAIL, EXIT_INCONCLUSIVE) else EXIT_INCONCLUSIVE
    return EXIT_INCONCLUSIVE if invalid and code == EXIT_PASS else code


def gate_matrix(top: Path, config: Path | None = None, *, alpha: float = 0.05) -> MatrixResult:
    """The matrix verdict from the agents' benchmark.json files; nothing written (`gate`)."""
    parts, invalid = matrix_parts(top, config)
    summary = summarize_matrix(parts, alpha=alpha)
    return MatrixResult(summary, top / MATRIX_FILE, top / REPORT_FILE, verdict_code(summary, invalid), invalid)


def summarize_and_write(top: Path, config: Path | None = None, *, alpha: float = 0.05) -> MatrixResult:
    """The matrix across the recorded agents, written to matrix.json and the top report.md."""
    result = gate_matrix(top, config, alpha=alpha)
    write_json(result.matrix_path, result.summary)
    write_matrix_report(top, result.summary)
    return result


_HEADING = re.compile(r"^(#{1,4}) ", re.MULTILINE)
_LOCAL_LINK = re.compile(r"\]\((?!https?:|#|/)([^)\s]+)\)")


def agent_section(top: Path, name: str) -> str:
    """An agent's report.md under its own heading: its headings one level down, its relative
    links (charts) rebased onto its folder."""
    path = agent_dir(top, name) / REPORT_FILE
    body = path.read_text(encoding="utf-8") if path.is_file() else "(no report: run `skillassay report` on it)\n"
    body = _HEADING.sub(lambda m: "##" + m.group(1) + " ", body)  # its title under "## Agent <name>"
    body = _LOCAL_LINK.sub(lambda m: f"](agents/{name}/{m.group(1)})", body)
    return f"## Agent {name}\n\nFolder: `agents/{name}/` (a skill-creator iteration of its own).\n\n{body}"


def write_matrix_report(top: Path, summary: MatrixSummary) -> Path:
    """report.md: the matrix first (the verdict and the agent where the skill does not help, in
    its first lines), then each agent's report."""
    record = read_json(top / "iteration.json")
    skill = record.get("skill_name") if isinstance(record, dict) else None
    title = f"# Matrix report: {md_cell(skill or 'skill')}, {top.name} ({len(summary.agents)} agents)\n\n"
    chart = write_matrix_chart(top, summary)
    parts = [title + render_matrix_md(summary, chart.relative_to(top).as_posix() if chart else None).rstrip() + "\n"]
    parts += [agent_section(top, agent.name) for agent in summary.agents]
    out = top / REPORT_FILE
    atomic_write_text(out, "\n\n".join(parts))
    return out


def aggregate_matrix(top: Path, config_path: Path | None = None, *, skill_name: str | None = None,
                     skill_path: str | None = None) -> tuple[list[Any], MatrixResult]:
    """`skillassay aggregate` on a matrix iteration: each agent's folder aggregated as an
    iteration of its own (under the workspace's lock, as `run` holds it), then the matrix."""
    from skillassay.workflows.aggregate import aggregate_locked

    results = []
    with WorkspaceLock(top.parent, "aggregate"):
        for entry in agents_of(top):
            results.append(aggregate_locked(agent_dir(top, entry["name"]), skill_name, skill_path, config_path,
                                            None, None, None))
        return results, summarize_and_write(top, config_path)


def report_matrix(top: Path, config: Path | None = None, *, strict: bool = False,
                  point_estimate: bool = False) -> Path:
    """`skillassay report` on a matrix iteration: each agent's report.md, then the top one."""
    from skillassay.workflows.report_iteration import write_report

    for entry in agents_of(top):
        write_report(agent_dir(top, entry["name"]), config, strict=strict, point_estimate=point_estimate)
    return summarize_and_write(top, config).report_path
