"""What CI systems read: JUnit XML (one testcase per eval and per threshold) and a GitHub
Actions job summary. Eval names, expectation text and evidence come from users and agents, so
XML gets only legal characters (ElementTree escapes the rest) and markdown cells are escaped."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillassay.analyze.cost import cost_summary, extra_success_text
from skillassay.analyze.gate import INVALID, NOT_GATED, GateResult, ThresholdResult
from skillassay.models import Benchmark
from skillassay.report.charts import as_dict, as_interval, as_list, as_num, config_names
from skillassay.store.jsonio import atomic_write_text
from skillassay.store.redact import disk_redactor
from skillassay.wording import pct

# XML 1.0 forbids most control characters even when escaped; agent output is full of them.
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
STATUS_ICON = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "⚠️", INVALID: "⛔", NOT_GATED: "➖", "NOT MEASURED": "➖"}
VERDICT_ICON = {"PASS": "✅", "FAIL": "❌", "WARN": "⚠️"}


def xml_text(value: Any) -> str:
    return _XML_ILLEGAL.sub("\ufffd", str(value))


# --- loading -----------------------------------------------------------------------------------


# --- per-eval facts shared by both outputs -----------------------------------------------------


def _raw(bench: Benchmark) -> dict[str, Any]:
    return bench.model_dump(mode="json", by_alias=True)


def _comparison(raw: dict[str, Any]) -> dict[str, Any]:
    return as_dict(raw.get("comparison")) or as_dict(as_dict(raw.get("statistics")).get("comparison"))


def eval_facts(bench: Benchmark, comparison: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per eval: label, pass counts and interval of both arms, regression label, duration."""
    raw = _raw(bench)
    skill, base = config_names(raw)
    st = {str(as_dict(p).get("eval_id")): as_dict(as_dict(p).get("configurations"))
          for p in as_list(as_dict(raw.get("statistics")).get("per_eval"))}
    labels = {str(as_dict(r).get("eval_id")): str(as_dict(r).get("label") or "")
              for r in as_list(as_dict(comparison or _comparison(raw)).get("per_eval"))}
    seconds: dict[str, float] = {}
    for run in as_list(raw.get("runs")):
        t = as_num(as_dict(as_dict(run).get("result")).get("time_seconds"))
        seconds[str(as_dict(run).get("eval_id"))] = seconds.get(str(as_dict(run).get("eval_id")), 0.0) + (t or 0.0)
    facts = []
    for pe in raw.get("per_eval") or []:
        key = str(pe.get("eval_id"))
        name = f"eval-{key} ({pe['eval_name']})" if pe.get("eval_name") else f"eval-{key}"
        arms = {arm: _arm_counts(as_dict(pe.get(arm)), as_dict(st.get(key, {}).get(cfg)))
                for arm, cfg in (("with_skill", skill), ("baseline", base))}
        facts.append({"eval_id": key, "name": name, "arms": arms, "label": labels.get(key, ""),
                      "seconds": seconds.get(key, 0.0)})
    return facts


def _arm_counts(arm: dict[str, Any], stat: dict[str, Any]) -> dict[str, Any]:
    completed = stat.get("completed", arm.get("trials_completed"))
    rate = as_num(arm.get("pass_rate"))
    passes = stat.get("passes")
    if passes is None and rate is not None and isinstance(completed, int):
        passes = round(rate * completed)
    ungraded = stat.get("ungraded", arm.get("ungraded_trials")) or 0
    return {"passes": passes, "completed": completed, "pass_rate": rate, "interval": as_interval(stat.get("wilson")),
            "ungraded": ungraded if isinstance(ungraded, int) else 0}


def _counts_text(arm: dict[str, Any]) -> str:
    ungraded = f"{arm['ungraded']} ungraded" if arm.get("ungraded") else ""
    if arm["pass_rate"] is None:
        return f"no graded trial ({ungraded})" if ungraded else "no completed trial"
    text = f"{arm['passes']}/{arm['completed']} trials passed ({pct(arm['pass_rate'])}"
    if arm["interval"]:
        text += f", 95% CI {pct(arm['interval'][0])}..{pct(arm['interval'][1])}"
    return text + (f"; {ungraded})" if ungraded else ")")


def eval_message(fact: dict[str, Any]) -> str:
    text = f"with skill {_counts_text(fact['arms']['with_skill'])}; baseline {_counts_text(fact['arms']['baseline'])}"
    if fact["label"]:
        text += f"; vs previous iteration: {fact['label']}"
    return text


def eval_verdict(fact: dict[str, Any], gate_result: GateResult) -> tuple[str, list[str]]:
    """(FAIL | WARN | PASS, reasons). An eval fails when it regressed or a failing threshold
    names it; a possible regression or an inconclusive threshold naming it is a warning."""
    fails, warns = [], []
    if fact["label"] == "regressed":
        fails.append("regressed against the previous iteration")
    elif fact["label"] == "possible regression":
        warns.append("possible regression against the previous iteration")
    for arm, counts in fact["arms"].items():
        if counts.get("ungraded"):
            warns.append(f"{counts['ungraded']} {arm} trials ungraded (an expectation has no verdict; "
                         "excluded from pass rates)")
    for t in gate_result.thresholds:
        if fact["name"] in t.evals:
            (fails if t.status == "FAIL" else warns).append(f"named by {t.status.lower()} threshold {t.key}")
    if fails:
        return "FAIL", fails + warns
    return ("WARN", warns) if warns else ("PASS", [])


# --- JUnit ---------------------------------------------------------------------------------------


def _suite(parent: ET.Element, name: str, cases: list[ET.Element],
           properties: Mapping[str, str] | None = None) -> None:
    failures = sum(1 for c in cases if c.find("failure") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    total_time = sum(float(c.get("time", "0")) for c in cases)
    suite = ET.SubElement(parent, "testsuite", name=name, tests=str(len(cases)), failures=str(failures),
                          errors="0", skipped=str(skipped), time=f"{total_time:.3f}")
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=key, value=xml_text(value))
    suite.extend(cases)


def cost_properties(bench: Benchmark) -> dict[str, str]:
    """The cost figures as JUnit properties (cost.<configuration>.<figure>, USD), and the
    skill's cost effect in words; empty when nothing was recorded."""
    cost = bench.cost
    if not cost:
        return {}
    out = {f"cost.{cfg}.{key}": "" if value is None else str(value)
           for cfg, arm in (cost.get("configurations") or {}).items()
           for key, value in arm.items() if key in ("total_usd", "mean_per_trial_usd", "per_passing_trial_usd",
                                                    "trials_unknown")}
    out["cost.skill_effect"] = extra_success_text(cost)
    return out


def _eval_case(fact: dict[str, Any], gate_result: GateResult, suite: str) -> ET.Element:
    case = ET.Element("testcase", name=xml_text(fact["name"]), classname=suite, time=f"{fact['seconds']:.3f}")
    message = xml_text(eval_message(fact))
    verdict, reasons = eval_verdict(fact, gate_result)
    if verdict == "FAIL":
        failure = ET.SubElement(case, "failure", message=xml_text("; ".join(reasons)) + ": " + message, type="EvalFailed")
        failure.text = message
    ET.SubElement(case, "system-out").text = message + "".join(f"\n{xml_text(r)}" for r in reasons)
    return case


def _threshold_case(t: ThresholdResult, gate_result: GateResult, suite: str) -> ET.Element:
    case = ET.Element("testcase", name=t.key, classname=suite, time="0.000")
    line = xml_text(t.line())
    if t.status == "FAIL" or (t.status == "INCONCLUSIVE" and gate_result.status == "FAIL"):
        ET.SubElement(case, "failure", message=line, type=f"Threshold{t.status.title()}").text = line
    elif t.status in ("INCONCLUSIVE", "NOT MEASURED"):
        ET.SubElement(case, "skipped", message=line)
    ET.SubElement(case, "system-out").text = line
    return case


def _gate_case(gate_result: GateResult, suite: str) -> ET.Element | None:
    """A testcase for what no threshold says: an invalid measurement fails (a CI reading only
    JUnit must not see all green); nothing gated is skipped, never passed."""
    if not gate_result.problems and gate_result.status != NOT_GATED:
        return None
    case = ET.Element("testcase", name="measurement" if gate_result.problems else "gate", classname=suite,
                      time="0.000")
    line = xml_text(gate_result.headline())
    if gate_result.problems:
        ET.SubElement(case, "failure", message=line, type="MeasurementInvalid").text = line
    else:
        ET.SubElement(case, "skipped", message=line)
    ET.SubElement(case, "system-out").text = line
    return case


def junit_xml(bench: Benchmark, gate_result: GateResult, comparison: dict[str, Any] | None = None) -> str:
    skill = bench.skill_name or (bench.metadata.skill_name if bench.metadata else "skill")
    prefix = f"skillassay.{xml_text(skill)}"
    root = ET.Element("testsuites", name=f"{prefix} iteration {bench.iteration or '?'}")
    _suite(root, f"{prefix}.evals", [_eval_case(f, gate_result, f"{prefix}.evals") for f in eval_facts(bench, comparison)])
    gate_case = _gate_case(gate_result, f"{prefix}.thresholds")
    _suite(root, f"{prefix}.thresholds",
           ([gate_case] if gate_case is not None else [])
           + [_threshold_case(t, gate_result, f"{prefix}.thresholds") for t in gate_result.thresholds],
           cost_properties(bench))
    suites = root.findall("testsuite")
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, benchmark: Benchmark, gate_result: GateResult,
                comparison: dict[str, Any] | None = None) -> Path:
    """`comparison` (comparison_previous.json) adds each eval's regression status; without it
    a comparison section inside benchmark.json is used when present."""
    atomic_write_text(path, junit_xml(benchmark, gate_result, comparison))
    return path


# --- GitHub job summary ------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>#!~])")


def md_cell(value: Any) -> str:
    """Text safe in a markdown table cell: specials backslash-escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def _pct(x: float | None) -> str:
    return pct(x)


def _fmt(x: float | None, digits: int) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def github_step_summary(benchmark: Benchmark, gate_result: GateResult,
                        comparison: dict[str, Any] | None = None) -> str:
    skill = benchmark.skill_name or (benchmark.metadata.skill_name if benchmark.metadata else "skill")
    lines = [f"## {STATUS_ICON.get(gate_result.status, '')} skillassay: {md_cell(skill)}, iteration "
             f"{benchmark.iteration or '?'}: {gate_result.status}", ""]
    if gate_result.status != gate_result.headline():  # INVALID, NOT_GATED or a fail on an invalid measurement
        lines += [f"**{md_cell(gate_result.headline())}**", ""]
    s = benchmark.summary
    if s is not None:
        ratio = "n/a" if s.improvement_ratio is None else f"{s.improvement_ratio:.2f}x"
        lines += ["| | With skill | Baseline |", "|---|---|---|",
                  f"| Pass rate | {_pct(s.with_skill.pass_rate)} | {_pct(s.baseline.pass_rate)} |",
                  f"| Avg tokens | {_fmt(s.with_skill.avg_tokens, 0)} | {_fmt(s.baseline.avg_tokens, 0)} |",
                  f"| Avg seconds | {_fmt(s.with_skill.avg_duration_seconds, 2)} | {_fmt(s.baseline.avg_duration_seconds, 2)} |",
                  "", f"Improvement ratio: **{ratio}**", ""]
    if benchmark.cost:
        lines += [f"**Cost**: {md_cell(cost_summary(benchmark.cost).removeprefix('cost: '))}", ""]
    if gate_result.thresholds:
        lines += ["### Thresholds", ""]
        lines += [f"- {STATUS_ICON.get(t.status, '')} {md_cell(t.line())}" for t in gate_result.thresholds]
        lines.append("")
    facts = eval_facts(benchmark, comparison)
    if facts:
        lines += ["### Evals", "", "| Eval | With skill | Baseline | vs previous | Result |", "|---|---|---|---|---|"]
        for f in facts:
            verdict, reasons = eval_verdict(f, gate_result)
            result = " ".join([VERDICT_ICON[verdict], md_cell("; ".join(reasons))]).strip()
            lines.append(f"| {md_cell(f['name'])} | {md_cell(_counts_text(f['arms']['with_skill']))} | "
                         f"{md_cell(_counts_text(f['arms']['baseline']))} | {md_cell(f['label'] or '-')} | {result} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def append_step_summary(text: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Append to $GITHUB_STEP_SUMMARY when set (GitHub Actions); otherwise do nothing."""
    target = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as fh:  # appended, so not through jsonio: masked here
        fh.write(disk_redactor().text(text))
    return path
