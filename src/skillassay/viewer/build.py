"""Collecting what the viewer shows. The index lists runs from folder names and benchmark.json
alone (no output file is opened), so a workspace of thousands of runs opens at once; a run's
files are rendered only when that run is asked for."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skillassay.analyze.cost import extra_success_text
from skillassay.analyze.gate import GateResult
from skillassay.analyze.rate_intervals import reading_phrase
from skillassay.errors import InputError
from skillassay.models.checked import problem_at
from skillassay.models.cost import Cost
from skillassay.report.charts import (
    as_dict,
    as_interval,
    as_list,
    as_num,
    config_names,
    load_benchmark,
    per_eval_chart,
    per_eval_rows,
    trend_chart,
    trend_points,
)
from skillassay.store.bounded import LIST_CAP, list_files
from skillassay.store.discover import EVAL_DIR, discover
from skillassay.store.jsonio import load_json_lenient
from skillassay.store.layout import inside
from skillassay.viewer.agents import AGENTS_DIR, agent_names, matrix_view
from skillassay.viewer.render import TEXT_CAP, data_uri, markdown_html, render_file
from skillassay.viewer.turns import conversation, turn_rows

FIRST_FILES = ("answer.md",)  # the final answer leads; the rest follow by name
RENDER_CAP = 100  # files of one run rendered; the next ones are named (LIST_CAP), the rest counted
RUN_CHARS = 2_000_000  # characters of rendered files in one run's page
NOT_RENDERED = (f"not shown: a run's page renders at most {RENDER_CAP} files and {RUN_CHARS:,} characters "
                "(download it, or open it from the run's outputs/ folder)")


@dataclass
class RunRef:
    """Where one run lives and what benchmark.json says about it (no file contents)."""

    run_id: str  # e.g. eval-1-server-port/with_skill/run-1, relative to the iteration
    eval_dir: str
    eval_id: int | str
    configuration: str
    run_number: int
    eval_name: str = ""
    passed: int | None = None
    total: int | None = None
    agent: str | None = None  # a matrix iteration's agent (run_id then starts agents/<name>/)

    def summary(self) -> dict[str, Any]:
        return {"id": self.run_id, "eval_id": self.eval_id, "eval_name": self.eval_name,
                "configuration": self.configuration, "run_number": self.run_number,
                "passed": self.passed, "total": self.total, **({"agent": self.agent} if self.agent else {})}


@dataclass
class Index:
    iteration_dir: Path
    runs: list[RunRef] = field(default_factory=list)
    by_id: dict[str, RunRef] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)  # a matrix iteration's agents, in order; [] otherwise


def _subdirs(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return [e for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _bench_results(bench: dict[str, Any]) -> dict[tuple[str, str, Any], dict[str, Any]]:
    out = {}
    for run in as_list(bench.get("runs")):
        run = as_dict(run)
        number = run.get("run_number")
        if isinstance(number, dict | list):  # a damaged file's: matches no run folder (and is unhashable)
            continue
        key = (str(run.get("eval_id")), str(run.get("configuration")), number)
        out[key] = {"name": run.get("eval_name") or "", **as_dict(run.get("result"))}
    return out


class _LinkFree:
    """Paths under one folder with no symlink from it down: their place is their name, so the
    index of 20,000 runs needs a few lstat calls per folder instead of resolving every path
    (which was most of the time `view` took to start on such an iteration)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.normpath(root)
        self.known: dict[str, bool] = {self.root: True}

    def _free(self, path: str) -> bool:
        if path not in self.known:
            parent = os.path.dirname(path)
            self.known[path] = parent != path and self._free(parent) and not os.path.islink(path)
        return self.known[path]

    def relative(self, path: str) -> str | None:
        """The posix path relative to the root when `path` is under it with no symlink, else None."""
        path = os.path.normpath(path)
        if not path.startswith(self.root + os.sep) or ".." in path.split(os.sep) or not self._free(path):
            return None
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def build_index(iteration_dir: Path, bench: dict[str, Any] | None = None) -> Index:
    """Runs ordered by eval id, configuration, run number. Every layout `aggregate` reads is
    listed (documented run-K, legacy runs/, flat configuration folders), through the same
    discovery; a run folder that resolves outside the iteration (a symlink out) is not."""
    if agents := agent_names(iteration_dir):
        return _matrix_index(iteration_dir, agents)
    bench = load_benchmark(iteration_dir) if bench is None else bench
    results = _bench_results(bench)
    index = Index(iteration_dir.resolve())
    try:
        found = discover(iteration_dir).runs
    except InputError:
        found = []
    no_links = _LinkFree(os.fspath(iteration_dir))
    for run in found:
        fast_rel, fast_eval = no_links.relative(run.path), no_links.relative(run.eval.path)
        if fast_rel is not None and fast_eval is not None:  # no symlink below the iteration: inside it
            rel, eval_rel = fast_rel, fast_eval
        else:
            path, eval_path = Path(run.path), Path(run.eval.path)
            if path.is_symlink() or eval_path.is_symlink() or not inside(index.iteration_dir, path):
                continue
            rel = path.resolve().relative_to(index.iteration_dir).as_posix()
            eval_rel = eval_path.resolve().relative_to(index.iteration_dir).as_posix()
        ref = RunRef(rel, eval_rel, run.eval.eval_id, run.configuration, run.run_number)
        res = results.get((str(run.eval.eval_id), run.configuration, run.run_number), {})
        ref.eval_name = str(res.get("name") or run.eval.eval_name)
        ref.passed, ref.total = res.get("passed"), res.get("total")
        index.runs.append(ref)
    skill = config_names(bench)[0]
    index.runs.sort(key=lambda r: (str(r.eval_id).zfill(12), r.configuration != skill, r.configuration, r.run_number))
    index.by_id = {r.run_id: r for r in index.runs}
    return index


def _matrix_index(iteration_dir: Path, agents: list[str]) -> Index:
    """Every agent's runs, each agent's folder indexed as the iteration it is, its ids prefixed
    with agents/<name>/ so one feedback.json and one page cover the matrix."""
    index = Index(iteration_dir.resolve(), agents=agents)
    for name in agents:
        for ref in build_index(iteration_dir / AGENTS_DIR / name).runs:
            ref.run_id, ref.eval_dir = f"{AGENTS_DIR}/{name}/{ref.run_id}", f"{AGENTS_DIR}/{name}/{ref.eval_dir}"
            ref.agent = name
            index.runs.append(ref)
    index.by_id = {r.run_id: r for r in index.runs}
    return index


def read_feedback(iteration_dir: Path) -> dict[str, Any]:
    """feedback.json as {"reviews": {run_id: text}, "status": ...}; unreadable means empty."""
    data = as_dict(load_json_lenient(iteration_dir / "feedback.json"))
    reviews = {str(as_dict(r).get("run_id")): str(as_dict(r).get("feedback", "")) for r in as_list(data.get("reviews"))}
    return {"reviews": reviews, "status": str(data.get("status") or "in_progress")}


def index_payload(index: Index, bench: dict[str, Any], mode: str) -> dict[str, Any]:
    fb = read_feedback(index.iteration_dir)
    if index.agents and not bench:  # a matrix iteration: its skill and number are in every agent's file
        bench = load_benchmark(index.iteration_dir / AGENTS_DIR / index.agents[0])
    return {"mode": mode, "skill_name": bench.get("skill_name") or as_dict(bench.get("metadata")).get("skill_name") or "",
            "iteration": bench.get("iteration"), "runs": [r.summary() for r in index.runs],
            "feedback": fb["reviews"], "status": fb["status"], **({"agents": index.agents} if index.agents else {})}


# --- one run ------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    return as_dict(load_json_lenient(path))


def safe_child(base: Path, relative: str) -> Path | None:
    """The path under base, or None when it escapes (.., absolute, symlink pointing out)."""
    if not relative or "\x00" in relative or relative.startswith("/"):
        return None
    candidate = (base / relative).resolve()
    try:
        candidate.relative_to(base.resolve())
    except ValueError:
        return None
    return candidate


def output_files(run_dir: Path, iteration_dir: Path) -> tuple[list[tuple[str, Path | None]], int]:
    """(name relative to outputs/, resolved path or None when it points outside the iteration)
    for the first LIST_CAP files by name (the answer and metrics.json always among them), and
    how many files there are in all."""
    outputs = run_dir / "outputs"
    listing = list_files(outputs, LIST_CAP, links=True)
    names = set(listing.names) | {n for n in (*FIRST_FILES, "metrics.json") if os.path.lexists(outputs / n)}
    found = [(rel, safe_child(iteration_dir, os.path.relpath(outputs / rel, iteration_dir))) for rel in names]
    found.sort(key=lambda f: (f[0] not in FIRST_FILES, f[0] == "metrics.json", f[0]))
    return found[:LIST_CAP], max(listing.total, len(names))


def file_href(run_id: str, name: str) -> str:
    return f"api/file?run={quote(run_id, safe='')}&name={quote(name, safe='')}"


def render_outputs(run_dir: Path, iteration_dir: Path, run_id: str, served: bool,
                   deadline: float | None = None) -> list[dict[str, Any]]:
    """The first files rendered while RENDER_CAP files, RUN_CHARS characters and the caller's
    `deadline` (time.monotonic) last; the next ones up to LIST_CAP named (served: with a download
    link); the rest counted in a last entry. A run's page costs the same at 200,000 files."""
    files, total = output_files(run_dir, iteration_dir)
    out: list[dict[str, Any]] = []
    chars = 0
    for n, (name, path) in enumerate(files):
        if path is None or not path.is_file():
            out.append({"name": name, "kind": "skipped", "size": None, "truncated": False,
                        "note": "not shown: it points outside the iteration folder"})
        elif n < RENDER_CAP and chars < RUN_CHARS and (deadline is None or time.monotonic() < deadline):
            out.append(render_file(path, name, file_href(run_id, name) if served else None))
            chars += sum(len(out[-1].get(k) or "") for k in ("html", "src", "href"))
        else:
            href = file_href(run_id, name) if served else None
            out.append({"name": name, "kind": "binary" if served else "listed", "size": path.stat().st_size,
                        "truncated": True, "href": href, "note": NOT_RENDERED})
    if total > len(files):
        out.append({"name": f"[{total - len(files):,} more files]", "kind": "listed", "size": None, "truncated": True,
                    "note": f"not listed: a run's page lists the first {LIST_CAP:,} files by name"})
    return out


def _transcript_html(run_dir: Path) -> str:
    path = run_dir / "transcript.md"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:TEXT_CAP]
    except OSError:
        return ""
    return markdown_html(text)


def _grading(run_dir: Path) -> dict[str, Any]:
    g = _read_json(run_dir / "grading.json")
    exps = [{"text": str(as_dict(e).get("text", "")), "passed": as_dict(e).get("passed"),
             "evidence": str(as_dict(e).get("evidence", "")),
             **({"turn": as_dict(e).get("turn")} if "turn" in as_dict(e) else {})}  # a conversation's
            for e in as_list(g.get("expectations"))]
    return {"expectations": exps, "summary": as_dict(g.get("summary"))}


def _metrics(run_dir: Path) -> dict[str, Any]:
    m, t = _read_json(run_dir / "outputs" / "metrics.json"), _read_json(run_dir / "timing.json")
    return {"status": m.get("status"), "error": m.get("error"), "tokens": t.get("total_tokens"),
            "seconds": t.get("total_duration_seconds"), "tool_calls": m.get("total_tool_calls")}


def _prompt(iteration_dir: Path, ref: RunRef) -> dict[str, Any]:
    meta = _read_json(iteration_dir / ref.eval_dir / "eval_metadata.json")
    return {"prompt": str(meta.get("prompt", "")), "expected_output": str(meta.get("expected_output") or "")}


def previous_run_dir(previous: Path, ref: RunRef) -> Path | None:
    """The same eval (matched by id, since names may change), configuration and run number."""
    for ev in _subdirs(previous):
        m = EVAL_DIR.fullmatch(ev.name)
        if m and int(m.group(1)) == ref.eval_id:
            cand = safe_child(previous, f"{ev.name}/{ref.configuration}/run-{ref.run_number}")
            return cand if cand is not None and cand.is_dir() else None
    return None


def _previous(previous: Path | None, ref: RunRef) -> dict[str, Any] | None:
    if previous is None:
        return None
    run_dir = previous_run_dir(previous, ref)
    if run_dir is None:
        return None
    prev_id = run_dir.relative_to(previous.resolve()).as_posix()
    answer = safe_child(previous, f"{prev_id}/outputs/answer.md")
    files = [render_file(answer, "answer.md", None)] if answer is not None and answer.is_file() else []
    return {"run_id": prev_id, "files": files, "grading": _grading(run_dir),
            "feedback": read_feedback(previous)["reviews"].get(prev_id)}


def run_payload(index: Index, run_id: str, previous: Path | None, served: bool,
                deadline: float | None = None) -> dict[str, Any] | None:
    ref = index.by_id.get(run_id)
    if ref is None:
        return None
    run_dir = index.iteration_dir / ref.run_id
    return {**ref.summary(), **_prompt(index.iteration_dir, ref), "metrics": _metrics(run_dir),
            "files": render_outputs(run_dir, index.iteration_dir, ref.run_id, served, deadline),
            "grading": _grading(run_dir), "transcript_html": _transcript_html(run_dir),
            "turns": conversation(run_dir), "previous": _previous(previous, ref)}


# --- benchmark tab ---------------------------------------------------------------------------


def _metric_row(label: str, st_cfgs: dict[str, Any], skill: str, base: str, key: str,
                ws: dict[str, Any], bs: dict[str, Any], spec_key: str) -> dict[str, Any]:
    def one(cfg: str, arm: dict[str, Any]) -> dict[str, Any]:
        entry = as_dict(st_cfgs.get(cfg))
        iv = as_interval(entry.get("pass_rate_interval")) if key == "pass_rate" else as_interval(as_dict(entry.get(key)).get("interval"))
        return {"value": as_num(arm.get(spec_key)), "interval": iv}
    return {"label": label, "kind": key, "skill": one(skill, ws), "base": one(base, bs)}


def summary_rows(bench: dict[str, Any]) -> list[dict[str, Any]]:
    summary = as_dict(bench.get("summary"))
    if not summary:
        return []
    skill, base = config_names(bench)
    st_cfgs = as_dict(as_dict(bench.get("statistics")).get("configurations"))
    ws, bs = as_dict(summary.get("with_skill")), as_dict(summary.get("baseline"))
    return [_metric_row("pass rate", st_cfgs, skill, base, "pass_rate", ws, bs, "pass_rate"),
            _metric_row("avg tokens", st_cfgs, skill, base, "avg_tokens", ws, bs, "avg_tokens"),
            _metric_row("avg seconds", st_cfgs, skill, base, "avg_duration_seconds", ws, bs, "avg_duration_seconds"),
            *cost_rows(as_dict(bench.get("cost")), skill, base)]


def cost_rows(cost: dict[str, Any], skill: str, base: str) -> list[dict[str, Any]]:
    """benchmark.json's `cost` (analyze/cost.py) as summary rows: USD, kinds the page formats as dollars."""
    cfgs = as_dict(cost.get("configurations"))
    if not cfgs:
        return []

    def row(label: str, kind: str, key: str, iv_key: str | None = None) -> dict[str, Any]:
        def one(cfg: str) -> dict[str, Any]:
            arm = as_dict(cfgs.get(cfg))
            return {"value": as_num(arm.get(key)), "interval": as_interval(arm.get(iv_key)) if iv_key else None}
        return {"label": label, "kind": kind, "skill": one(skill), "base": one(base)}

    return [row("cost per trial (USD)", "cost_mean", "mean_per_trial_usd", "mean_per_trial_interval"),
            row("cost per passing trial (USD)", "cost_per_pass", "per_passing_trial_usd"),
            row("total cost (USD)", "cost_total", "total_usd")]


def headline(bench: dict[str, Any]) -> list[dict[str, Any]]:
    """Improvement ratio and pass-rate difference, each with its interval when statistics has one."""
    summary, paired = as_dict(bench.get("summary")), as_dict(as_dict(bench.get("statistics")).get("paired"))
    ratio, diff = as_dict(paired.get("improvement_ratio")), as_dict(paired.get("pass_rate_difference"))
    out = [{"label": "improvement ratio", "value": as_num(summary.get("improvement_ratio")),
            "interval": as_interval(ratio.get("interval")), "note": str(ratio.get("undefined_reason") or "")}]
    if diff:
        out.append({"label": "pass-rate difference", "value": as_num(diff.get("mean")),
                    "interval": as_interval(diff.get("interval")), "note": str(diff.get("explanation") or "")})
    cost = as_dict(bench.get("cost"))
    # The sentence reads the section as its schema types it; read leniently here, a damaged one is left out.
    if as_dict(cost.get("effect")) and problem_at(Cost, cost) is None:
        out.append({"label": "the skill's cost", "value": None, "interval": None, "note": "",
                    "text": extra_success_text(cost)})
    return out


def iteration_gate(iteration_dir: Path) -> GateResult | None:
    """Exactly what `skillassay gate` decides for the iteration; None without a config to gate on
    or when its files cannot be read (the tab then falls back to thresholds_met)."""
    from skillassay.workflows.gate_iteration import check_iteration

    try:
        check = check_iteration(iteration_dir)
    except InputError:
        return None
    return check.result if check.config_path is not None or check.comparison else None


def iteration_comparison(iteration_dir: Path, bench: dict[str, Any]) -> dict[str, Any] | None:
    """comparison_previous.json, else a comparison section in benchmark.json. A damaged file
    only hides the section: a review page should open whatever state the folder is in."""
    data = load_json_lenient(iteration_dir / "comparison_previous.json")
    found = as_dict(data) or as_dict(bench.get("comparison")) or as_dict(as_dict(bench.get("statistics")).get("comparison"))
    return found or None


def gate_view(iteration_dir: Path, bench: dict[str, Any]) -> dict[str, Any] | None:
    """The gate as `skillassay gate` decides it (thresholds from the iteration's config,
    statistics' decisions when present); only the spec's thresholds_met when no config is found."""
    result = iteration_gate(iteration_dir)
    if result is not None:
        # to_dict: an unbounded ratio's value is null in JSON (its line says ∞)
        rows = [{"key": r.key, "status": r.status, "value": t["value"], "threshold": r.threshold,
                 "interval": as_interval(r.interval), "line": r.line()}
                for r, t in zip(result.thresholds, result.to_dict()["thresholds"], strict=True)]
        return {"status": result.status, "headline": result.headline(), "thresholds": rows}
    met = as_dict(bench.get("thresholds_met"))
    if not met:
        return None
    # A file with estimate_meets holds the gate's decisions in thresholds_met: false there is
    # "not passed" (failed or undecided), not FAIL; an older file holds the plain comparison.
    miss = "NOT_PASSED" if "estimate_meets" in bench else "FAIL"
    rows = [{"key": k, "status": "PASS" if v else miss, "value": None, "threshold": None, "interval": None,
             "line": f"{'PASS' if v else miss}: {k} (from thresholds_met)"} for k, v in met.items()]
    return {"status": miss if not all(met.values()) else "PASS", "thresholds": rows}


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "sd": None, "min": None, "max": None}
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else None
    return {"mean": mean, "sd": sd, "min": min(values), "max": max(values)}


def _trial_passed(run: dict[str, Any]) -> bool | None:
    """A trial passes when every expectation passed; one failed fails it; else a missing verdict
    leaves it ungraded (store.records.trial_verdict's rule, read from benchmark.json's runs)."""
    verdicts = [as_dict(e).get("passed") for e in as_list(run.get("expectations"))]
    if not verdicts or False in verdicts:
        return False if verdicts else None
    return True if all(v is True for v in verdicts) else None


def variance_rows(bench: dict[str, Any]) -> list[dict[str, Any]]:
    """Spread across runs per eval and configuration, from benchmark.json's runs: the pass rate
    per trial (as everywhere else) beside skill-creator's per-run expectation pass rate."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for run in as_list(bench.get("runs")):
        run = as_dict(run)
        res = as_dict(run.get("result"))
        key = (str(run.get("eval_id")), str(run.get("configuration")))
        g = groups.setdefault(key, {"eval_id": run.get("eval_id"), "eval_name": run.get("eval_name") or "",
                                    "configuration": key[1], "pass": [], "tokens": [], "seconds": [], "trials": []})
        if (verdict := _trial_passed(run)) is not None:
            g["trials"].append(verdict)
        for name, field_name in (("pass", "pass_rate"), ("tokens", "tokens"), ("seconds", "time_seconds")):
            if as_num(res.get(field_name)) is not None:
                g[name].append(float(res[field_name]))
    rows = []
    for g in groups.values():
        rows.append({"eval_id": g["eval_id"], "eval_name": g["eval_name"], "configuration": g["configuration"],
                     "runs": len(g["pass"]), "pass": _spread(g["pass"]), "tokens": _spread(g["tokens"]),
                     "trials": {"passed": sum(g["trials"]), "graded": len(g["trials"]),
                                "rate": sum(g["trials"]) / len(g["trials"]) if g["trials"] else None},
                     "seconds": _spread(g["seconds"])})
    return rows


def comparison_view(iteration_dir: Path, bench: dict[str, Any]) -> dict[str, Any] | None:
    comp = as_dict(iteration_comparison(iteration_dir, bench))
    if not comp:
        return None
    rows = [{"eval_id": as_dict(r).get("eval_id"), "eval_name": str(as_dict(r).get("eval_name") or ""),
             "counts": str(as_dict(r).get("counts") or ""), "label": str(as_dict(r).get("label") or "")}
            for r in as_list(comp.get("per_eval"))]
    lists = {k: [str(x) for x in as_list(comp.get(k))] for k in
             ("regressed", "possible_regressions", "improved", "possible_improvements")}
    return {"rows": rows, **lists}


def ungraded_view(bench: dict[str, Any]) -> dict[str, int]:
    """Trials left out of the pass rates because an expectation has no verdict, per arm."""
    summary = as_dict(bench.get("summary"))
    counts = {arm: as_dict(summary.get(arm)).get("ungraded_trials") for arm in ("with_skill", "baseline")}
    return {arm: n if type(n) is int and n > 0 else 0 for arm, n in counts.items()}


def _svg_uri(svg: bytes | None) -> str | None:
    return data_uri("image/svg+xml", svg) if svg else None


def triggers_view(iteration_dir: Path) -> dict[str, Any] | None:
    """The workspace's trigger evals (WORKSPACE/triggers/triggers.json, from `skillassay
    triggers`), for the Triggers tab; None when there are none or the file is unreadable (it
    only adds a tab, so damage hides the tab instead of breaking the page)."""
    from pydantic import ValidationError

    from skillassay.models.triggers import TriggerReport

    data = load_json_lenient(iteration_dir.parent / "triggers" / "triggers.json")
    try:
        report = TriggerReport.model_validate(data)
    except ValidationError:
        return None

    def rate(r: Any) -> dict[str, Any]:
        return {"value": r.value, "interval": r.interval, "numerator": r.numerator, "denominator": r.denominator}

    return {"skill_name": report.skill_name, "description": report.description,
            "executor": str(report.executor.get("executor", "")), "model": str(report.executor.get("model") or ""),
            "runs_per_query": report.runs_per_query, "other_skills": report.other_skills,
            "figures": [{"label": label, **rate(r)} for label, r in (
                ("recall", report.recall), ("false-trigger rate", report.false_trigger_rate),
                ("precision", report.precision), ("accuracy", report.accuracy))],
            "gate": {"status": report.gate.status, "headline": report.gate.headline} if report.gate else None,
            "queries": [{"index": q.index, "query": q.query, "should_trigger": q.should_trigger,
                         "outcome": q.outcome, "others": q.other_skills_fired, **rate(q.trigger_rate)}
                        for q in report.queries],
            "shadowed_by": report.shadowed_by}


def benchmark_payload(iteration_dir: Path, bench: dict[str, Any]) -> dict[str, Any]:
    rows = per_eval_rows(bench)
    trend = trend_points(iteration_dir)
    return {"summary": summary_rows(bench), "reading": reading_phrase(as_dict(bench.get("statistics")).get("interval_reading")),
            "headline": headline(bench), "gate": gate_view(iteration_dir, bench),
            "per_eval": rows, "per_eval_chart": _svg_uri(per_eval_chart(rows)), "variance": variance_rows(bench),
            "comparison": comparison_view(iteration_dir, bench), "notes": [str(n) for n in as_list(bench.get("notes"))],
            "ungraded": ungraded_view(bench), "triggers": triggers_view(iteration_dir), "turns": turn_rows(bench),
            "trend": trend, "trend_chart": _svg_uri(trend_chart(trend)), "matrix": matrix_view(iteration_dir)}
