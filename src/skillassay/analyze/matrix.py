"""The statistics across the agents of one iteration (issue 37), from each agent's benchmark.json:
the skill's effect per agent (copied, so each figure keeps the one interval its test gives), a
test of whether that effect differs between agents, the effect pooled over agents only when it
does not, and the agents' gates held together family-wise. Pure: plain data in, a
MatrixSummary out; the caller reads and writes the files. Method notes: docs/matrix.md."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skillassay.analyze import paired_intervals
from skillassay.analyze.gate import GATE_FAIL_ALPHA, measurement_problems
from skillassay.analyze.gate_stats import GATE_DIRECTIONS
from skillassay.analyze.matrix_gates import NOT_MEASURED, decide_agent, hold_family, regression_row
from skillassay.analyze.rate_intervals import READING_PHRASE
from skillassay.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_PASS, InputError, Problem
from skillassay.models.benchmark import Benchmark
from skillassay.models.matrix import (
    AgentPair,
    AgentSummary,
    AgentThreshold,
    Heterogeneity,
    MatrixSummary,
    PooledEffect,
)
from skillassay.stats.heterogeneity import (
    InteractionTest,
    holm_adjust,
    informative_blocks,
    interaction_test,
    significance_reachable,
)
from skillassay.stats.means import binomial_floor_se
from skillassay.stats.paired import sign_flip_p_value
from skillassay.stats.sign_flip import MONTE_CARLO_RESAMPLES
from skillassay.store.jsonio import parse_model
from skillassay.wording import points_text as _pts

EFFECT_READING = READING_PHRASE["population"]  # the paired intervals' reading (docs/statistics.md)
HETEROGENEITY_METHOD = ("within-eval permutation test of the agent x skill interaction (agent labels permuted "
                        "within each eval; statistic: variance of the agents' mean effects)")
PAIR_METHOD = "exact sign-flip test on the per-eval difference of the two effects, Holm across pairs"
_EXIT = {"PASS": EXIT_PASS, "NOT GATED": EXIT_PASS, "FAIL": EXIT_FAIL, "INCONCLUSIVE": EXIT_INCONCLUSIVE}


@dataclass(frozen=True)
class AgentPart:
    """One agent of the matrix, with its benchmark.json as written (agents/<name>/benchmark.json)."""

    name: str
    required: bool
    executor: str
    model: str | None
    benchmark: Mapping[str, Any]
    # Its comparison with its own previous iteration (comparison_previous.json), when there is one:
    # its regression check joins the family as in a one-agent gate.
    comparison: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class _EvalRates:
    with_rate: float
    base_rate: float
    with_n: int
    base_n: int


def _file(part: AgentPart) -> str:
    return f"agents/{part.name}/benchmark.json"


def _bad(part: AgentPart, where: str, what: str) -> InputError:
    return InputError.one(_file(part), where, what)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _iv(value: Any) -> list[float | None] | None:
    if isinstance(value, list | tuple) and len(value) == 2 and all(v is None or _num(v) is not None for v in value):
        return [None if v is None else float(v) for v in value]
    return None


def _statistics(part: AgentPart) -> dict[str, Any]:
    st = part.benchmark.get("statistics")
    if not isinstance(st, dict):
        raise _bad(part, "statistics", "missing: the matrix needs the statistics `skillassay aggregate` writes")
    return st


def eval_rates(part: AgentPart) -> dict[str, _EvalRates | None]:
    """eval id (as text) -> its with-skill and baseline pass rates, None where an arm completed
    nothing. Refuses a per_eval that is missing or malformed, naming the file and the field."""
    st = _statistics(part)
    skill = str(st.get("skill_configuration") or "with_skill")
    base = str(st.get("baseline_configuration") or "without_skill")
    rows = st.get("per_eval")
    if not isinstance(rows, list) or not rows:
        raise _bad(part, "statistics.per_eval", "missing or empty: the per-eval results are needed to compare agents")
    out: dict[str, _EvalRates | None] = {}
    for i, row in enumerate(rows):
        where = f"statistics.per_eval[{i}]"
        if not isinstance(row, dict) or row.get("eval_id") is None:
            raise _bad(part, where, "expected an object with an eval_id")
        key = str(row["eval_id"])
        if key in out:
            raise _bad(part, f"{where}.eval_id", f"eval {key} appears twice")
        cfgs = _dict(row.get("configurations"))
        arms = []
        for cfg in (skill, base):
            arm = cfgs.get(cfg)
            if not isinstance(arm, dict):
                raise _bad(part, f"{where}.configurations.{cfg}", "missing")
            rate, n = arm.get("pass_rate"), arm.get("completed")
            if rate is not None and (_num(rate) is None or not 0 <= rate <= 1):
                raise _bad(part, f"{where}.configurations.{cfg}.pass_rate", f"expected a rate in [0, 1], got {rate!r}")
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise _bad(part, f"{where}.configurations.{cfg}.completed", f"expected a count, got {n!r}")
            arms.append((None if rate is None or n == 0 else float(rate), n))
        (wr, wn), (br, bn) = arms
        out[key] = None if wr is None or br is None else _EvalRates(wr, br, wn, bn)
    return out


# --- per agent ---------------------------------------------------------------------------------


def effect_words(effect: float | None, interval: list[float | None] | None, p: float | None) -> str:
    if effect is None:
        return "no effect could be measured (no eval completed trials in both arms)"
    iv = "" if not interval or None in interval else f" (95% CI {_pts(interval[0])} to {_pts(interval[1])}, {EFFECT_READING})"
    sure = "" if p is None else ("; the sign-flip test confirms a difference" if p < 0.05 else
                                 "; the sign-flip test cannot confirm a difference")
    return f"the skill changes the pass rate by {_pts(effect)}{iv}{sure}"


def _threshold_rows(part: AgentPart, gates: dict[str, Any]) -> list[AgentThreshold]:
    rows = []
    for key in GATE_DIRECTIONS:
        g = gates.get(key)
        if not isinstance(g, dict):
            continue
        decision = g.get("decision")
        value = _num(g.get("value"))
        if value is None and key != "min_improvement_ratio":
            decision = NOT_MEASURED  # this executor records no such figure: no trials would decide it
        elif decision not in ("PASS", "FAIL", "INCONCLUSIVE"):
            raise _bad(part, f"statistics.gates.{key}.decision", f"expected PASS, FAIL or INCONCLUSIVE, got {decision!r}")
        fail_p = _num(g.get("fail_p_value"))
        rows.append(AgentThreshold(
            key=key, threshold=_num(g.get("threshold")), value=value, interval=_iv(g.get("interval")),
            unbounded=g.get("unbounded") is True,
            recorded_decision=g.get("decision") if isinstance(g.get("decision"), str) else None,
            decision=str(decision or "INCONCLUSIVE"),
            fail_p_value=(0.0 if fail_p is None else fail_p) if decision == "FAIL" else None))
    return rows


def _spread_mean(cfg: dict[str, Any], key: str) -> float | None:
    return _num(_dict(cfg.get(key)).get("mean"))


def _agent(part: AgentPart) -> AgentSummary:
    st = _statistics(part)
    data = dict(part.benchmark)
    if isinstance(data.get("runs"), list):  # validity asks only whether runs exist: 20,000 need no validating
        data["runs"] = data["runs"][:1]
    bench = parse_model(data, Benchmark, _file(part))
    skill = str(st.get("skill_configuration") or "with_skill")
    base = str(st.get("baseline_configuration") or "without_skill")
    cfgs = _dict(st.get("configurations"))
    ws, bs = _dict(cfgs.get(skill)), _dict(cfgs.get(base))
    paired = _dict(st.get("paired"))
    diff = _dict(paired.get("pass_rate_difference"))
    effect, interval, p = _num(diff.get("mean")), _iv(diff.get("interval")), _num(diff.get("p_value"))
    if not paired.get("n_evals"):
        effect = None
    cost = _dict(_dict(part.benchmark.get("cost")).get("configurations"))
    return AgentSummary(
        name=part.name, executor=part.executor, model=part.model, required=part.required,
        verdict="NOT GATED", n_evals=paired.get("n_evals") if isinstance(paired.get("n_evals"), int) else None,
        with_skill_pass_rate=_num(ws.get("pass_rate")), with_skill_interval=_iv(ws.get("pass_rate_interval")),
        baseline_pass_rate=_num(bs.get("pass_rate")), baseline_interval=_iv(bs.get("pass_rate_interval")),
        effect=effect, effect_interval=interval if effect is not None else None, effect_p_value=p,
        effect_reading=EFFECT_READING, effect_words=effect_words(effect, interval, p),
        cost_usd=_num(_dict(cost.get(skill)).get("mean_per_trial_usd")),
        baseline_cost_usd=_num(_dict(cost.get(base)).get("mean_per_trial_usd")),
        tokens=_spread_mean(ws, "avg_tokens"), baseline_tokens=_spread_mean(bs, "avg_tokens"),
        duration_seconds=_spread_mean(ws, "avg_duration_seconds"),
        baseline_duration_seconds=_spread_mean(bs, "avg_duration_seconds"),
        thresholds=_threshold_rows(part, _dict(st.get("gates"))) + _regression(part),
        problems=measurement_problems(bench))


def _regression(part: AgentPart) -> list[AgentThreshold]:
    if part.comparison is None:
        return []
    rows = part.comparison.get("per_eval")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError.one(f"agents/{part.name}/comparison_previous.json", "per_eval", "expected a list of objects")
    return [regression_row(part.comparison)]


# --- heterogeneity and pooling ------------------------------------------------------------------


def _common_evals(parts: Sequence[AgentPart]) -> tuple[list[str], list[str], dict[str, dict[str, _EvalRates | None]]]:
    rates = {p.name: eval_rates(p) for p in parts}
    first = parts[0]
    ids = list(rates[first.name])
    for p in parts[1:]:
        if set(rates[p.name]) != set(ids):
            missing = sorted(set(ids) - set(rates[p.name]))
            extra = sorted(set(rates[p.name]) - set(ids))
            raise _bad(p, "statistics.per_eval", (
                f"the agents did not run the same evals (vs {first.name}: missing {', '.join(missing) or 'none'}; "
                f"extra {', '.join(extra) or 'none'}); every agent must run every eval"))
    used, excluded = [], []
    for e in ids:
        lacking = [n for n, r in rates.items() if r[e] is None]
        if lacking:
            excluded.append(f"eval {e}: no completed trials in an arm on {', '.join(lacking)}")
        else:
            used.append(e)
    return used, excluded, rates


def _pairs(names: list[str], d: np.ndarray, called: bool, alpha: float) -> list[AgentPair]:
    combos = list(itertools.combinations(range(len(names)), 2))
    raw = []
    for i, j in combos:
        p, _ = sign_flip_p_value(d[:, i] - d[:, j]) if d.shape[0] else (None, "")
        raw.append(1.0 if p is None else p)
    adjusted = holm_adjust(raw)
    return [AgentPair(agents=[names[i], names[j]],
                      difference=round(float(d[:, i].mean() - d[:, j].mean()), 6) if d.shape[0] else None,
                      p_value=round(raw[k], 8), p_adjusted=round(adjusted[k], 8),
                      differs=called and adjusted[k] <= alpha)
            for k, (i, j) in enumerate(combos)]


def _difference(r: _EvalRates | None) -> float:
    if r is None:  # _common_evals keeps only evals every agent measured in both arms
        raise ValueError("an eval without a difference reached the heterogeneity test")
    return r.with_rate - r.base_rate


def _heterogeneity(parts: Sequence[AgentPart], alpha: float) -> tuple[Heterogeneity, np.ndarray, list[str]]:
    used, excluded, rates = _common_evals(parts)
    names = [p.name for p in parts]
    d = np.array([[_difference(rates[n][e]) for n in names] for e in used], dtype=float).reshape(
        len(used), len(names))
    base: dict[str, Any] = {"method": HETEROGENEITY_METHOD, "n_evals": len(used), "evals_excluded": excluded, "alpha": alpha}
    if len(names) < 2:
        return Heterogeneity(**base, called=False, reason="one agent: nothing to compare",
                             explanation="one agent: nothing to compare"), d, used
    if len(used) < 2:
        why = f"{len(used)} eval(s) measured in both arms on every agent: at least 2 are needed"
        return Heterogeneity(**base, called=False, reason=why, explanation=why,
                             pairs=_pairs(names, d, False, alpha)), d, used
    if len(names) == 2:
        # Two agents: the test is the sign-flip test of their difference, so the one pair's p is
        # used for both, never two Monte-Carlo draws of one p that could disagree (beyond 15 evals).
        p_pair, method = sign_flip_p_value(d[:, 0] - d[:, 1])
        exact = method.startswith("exact")
        base["method"] = f"{HETEROGENEITY_METHOD}; with two agents, the {method} test of their difference"
        m = informative_blocks(d)
        test = InteractionTest(float(np.var(d.mean(axis=0))), 1.0 if p_pair is None else p_pair, exact,
                               2**m if exact else MONTE_CARLO_RESAMPLES, len(used), m,
                               significance_reachable(2, m, alpha))
    else:
        test = interaction_test(d, alpha=alpha)
    called = test.p_value <= alpha
    pairs = _pairs(names, d, called, alpha)
    differing = [f"{p.agents[0]} vs {p.agents[1]}" for p in pairs if p.differs]
    if called:
        words = (f"the skill's effect differs between agents (p {test.p_value:.3g} <= {alpha:g})"
                 + (f"; the pairs that differ after Holm: {', '.join(differing)}" if differing else
                    "; no single pair differs after Holm, so where it differs is not pinned down"))
    elif not test.significance_reachable:
        words = (f"not called (p {test.p_value:.3g}), and {test.n_informative} eval(s) where the agents' effects "
                 f"differ are too few for this test ever to reach {alpha:g}: it cannot tell whether the agents agree")
    else:
        words = (f"no evidence that the skill's effect differs between agents (p {test.p_value:.3g} > {alpha:g}); "
                 "this does not prove they are equal")
    return Heterogeneity(**base, statistic=round(test.statistic, 8), p_value=round(test.p_value, 8),
                         exact=test.exact, permutations=test.permutations, n_informative=test.n_informative,
                         significance_reachable=test.significance_reachable, called=called, pairs=pairs,
                         explanation=words), d, used


def _pooled(parts: Sequence[AgentPart], het: Heterogeneity, used: list[str]) -> PooledEffect:
    names = [p.name for p in parts]
    if het.called:
        return PooledEffect(agents=names, reason=(
            "not pooled: the skill's effect differs between agents, so no single figure describes them; "
            "read each agent's effect"))
    if not used:
        return PooledEffect(agents=names, reason="not pooled: no eval was measured in both arms on every agent")
    rates = {p.name: eval_rates(p) for p in parts}
    cells = [[rates[n][e] for n in names] for e in used]
    pa = [float(np.mean([c.with_rate for c in row if c])) for row in cells]
    pb = [float(np.mean([c.base_rate for c in row if c])) for row in cells]
    # The binomial noise floor of the pooled rates: each eval's trials over all agents.
    fa = binomial_floor_se(pa, [sum(c.with_n for c in row if c) for row in cells], pseudo=1.0)
    fb = binomial_floor_se(pb, [sum(c.base_n for c in row if c) for row in cells], pseudo=1.0)
    pd = paired_intervals.inverted_difference(pa, pb, seed=0, floor_se=math.hypot(fa, fb))
    why = ("pooled over every agent, as the heterogeneity test did not find their effects to differ"
           if het.significance_reachable or len(names) < 2 else
           "pooled over every agent, but the heterogeneity test had too few evals to detect a difference: "
           "read each agent's effect too")
    return PooledEffect(effect=round(pd.mean, 6), interval=_iv(None if pd.interval is None else list(pd.interval)),
                        p_value=pd.p_value, n_evals=len(used), agents=names, reading=EFFECT_READING, reason=why)


# --- the summary ------------------------------------------------------------------------------


def _verdict(agents: list[AgentSummary]) -> str:
    gated = [a for a in agents if a.required and a.verdict != "NOT GATED"]
    if not gated:
        return "NOT GATED"
    verdicts = {a.verdict for a in gated}
    if "FAIL" in verdicts:
        return "FAIL"
    if verdicts == {"PASS"}:
        return "PASS"
    return "INCONCLUSIVE"


def _names(agents: list[AgentSummary]) -> str:
    return ", ".join(a.name for a in agents)


def matrix_message(verdict: str, agents: list[AgentSummary]) -> str:
    """One sentence naming the agents by their verdict."""
    by = {v: [a for a in agents if a.verdict == v] for v in ("FAIL", "INVALID", "INCONCLUSIVE", "PASS", "NOT GATED")}
    parts = []
    if by["FAIL"]:
        parts.append(f"the skill fails its gate on {_names(by['FAIL'])}")
    if by["INVALID"]:
        parts.append(f"the measurement is invalid on {_names(by['INVALID'])}")
    if by["INCONCLUSIVE"]:
        parts.append(f"undecided on {_names(by['INCONCLUSIVE'])}")
    if by["PASS"]:
        parts.append(f"passes on {_names(by['PASS'])}")
    if by["NOT GATED"]:
        parts.append(f"not gated on {_names(by['NOT GATED'])}")
    lead = {"PASS": "the skill passes its gate on every required agent",
            "NOT GATED": "no required agent was gated"}.get(verdict)
    body = "; ".join(parts)
    if verdict == "PASS":
        body = f"{lead} ({_names(by['PASS'])})" + (f"; not gated on {_names(by['NOT GATED'])}" if by["NOT GATED"] else "")
    elif verdict == "NOT GATED":
        body = f"{lead} ({body})" if body else str(lead)
    return f"{verdict}: {body} (gates held family-wise across agents)."


def summarize_matrix(parts: Sequence[AgentPart], *, alpha: float = GATE_FAIL_ALPHA) -> MatrixSummary:
    """The matrix's statistics from each agent's benchmark.json (see the module's docstring).
    Raises InputError naming agents/<name>/benchmark.json and the field for data it cannot use."""
    if not parts:
        raise InputError([Problem("matrix", "agents", "no agents to summarise")])
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise InputError([Problem("matrix", "agents", f"agent names repeat: {', '.join(names)}")])
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    het, _, used = _heterogeneity(parts, alpha)  # first: it checks each per_eval, naming the field
    agents = [_agent(p) for p in parts]
    family = hold_family(agents, alpha)
    for a in agents:
        decide_agent(a, family.checks if family else 0)
    verdict = _verdict(agents)
    return MatrixSummary(alpha=alpha, agents=agents, heterogeneity=het, pooled=_pooled(parts, het, used),
                         family=family, verdict=verdict, exit_code=_EXIT[verdict],  # type: ignore[arg-type]
                         message=matrix_message(verdict, agents))
