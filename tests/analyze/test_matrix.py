"""The statistics across agents (analyze/matrix.py) on real benchmark.json files, written by
build_benchmark from runs with known outcomes (tests/iteration_factory.py)."""

from __future__ import annotations

import copy
import functools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from iteration_factory import write_iteration

from skillassay.analyze.matrix import AgentPart, summarize_matrix
from skillassay.errors import InputError
from skillassay.stats.paired import sign_flip_p_value

E = 8
HELPS = {i: ("PPPP", "PFFF") for i in range(1, E + 1)}  # +75 pts on every eval
HELPS_TOO = {i: ("PPPF", "PFFF") if i % 2 else ("PPPP", "FFFF") for i in range(1, E + 1)}  # +75 pts on average
NOTHING = {i: ("PFFF", "PFFF") for i in range(1, E + 1)}  # the skill does nothing: 25% either way
GATE = {"min_pass_rate": 0.6}


@functools.cache
def _bench_text(key: str) -> str:
    """benchmark.json of one (outcomes, thresholds) pair, built once per session: each call of
    build_benchmark costs ~0.2 s and the tests ask for the same few again and again."""
    evals, thresholds = json.loads(key)
    with tempfile.TemporaryDirectory() as tmp:
        it = write_iteration(Path(tmp), 1, {int(k): tuple(v) for k, v in evals.items()}, thresholds=thresholds)
        return (it / "benchmark.json").read_text(encoding="utf-8")


def bench(tmp_path: Path, name: str, evals: dict[int, tuple[str, str]],
          thresholds: dict[str, float] | None = None) -> dict[str, Any]:
    """A fresh copy of a real benchmark.json with these outcomes (name: only for the reader)."""
    data: dict[str, Any] = json.loads(_bench_text(json.dumps([evals, GATE if thresholds is None else thresholds],
                                                             sort_keys=True)))
    return data


def with_rates(data: dict[str, Any], rates: list[tuple[float, float]]) -> dict[str, Any]:
    """benchmark.json with its per-eval pass rates (with, without; 4 trials each) replaced: 20
    evals from build_benchmark cost seconds, and the heterogeneity test reads only these."""
    template = data["statistics"]["per_eval"][0]
    rows = []
    for i, (w, b) in enumerate(rates, start=1):
        row = copy.deepcopy(template)
        row.update(eval_id=i, eval_name=f"e{i}", difference=w - b)
        for cfg, rate in (("with_skill", w), ("without_skill", b)):
            row["configurations"][cfg].update(pass_rate=rate, passes=int(rate * 4), completed=4)
        rows.append(row)
    data["statistics"]["per_eval"] = rows
    return data


def part(name: str, data: dict[str, Any], required: bool = True) -> AgentPart:
    return AgentPart(name=name, required=required, executor="command", model=None, benchmark=data)


def test_agents_that_agree_are_pooled_and_pass(tmp_path: Path) -> None:
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS)), part("sonnet", bench(tmp_path, "b", HELPS_TOO))])
    h = s.heterogeneity
    assert not h.called and h.p_value == 1.0 and h.n_evals == E and h.significance_reachable
    assert [p.differs for p in h.pairs] == [False]
    assert s.pooled.effect == pytest.approx(0.75) and s.pooled.interval is not None
    assert s.pooled.interval[0] is not None and s.pooled.interval[0] > 0
    assert s.pooled.agents == ["haiku", "sonnet"] and "did not find" in s.pooled.reason
    # one test behind the pooled figure: the sign-flip test of each eval's mean over agents
    assert s.pooled.p_value == pytest.approx(sign_flip_p_value([0.75] * E)[0])
    assert s.pooled.reading == "evals like these"
    assert [a.verdict for a in s.agents] == ["PASS", "PASS"]
    assert s.verdict == "PASS" and s.exit_code == 0
    assert s.message.startswith("PASS") and "haiku, sonnet" in s.message


def test_the_agent_without_effect_is_found_and_fails_the_matrix(tmp_path: Path) -> None:
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS)), part("sonnet", bench(tmp_path, "b", HELPS_TOO)),
                          part("cmd", bench(tmp_path, "c", NOTHING))])
    h = s.heterogeneity
    assert h.called and h.p_value is not None and h.p_value <= 0.05
    assert {tuple(p.agents) for p in h.pairs if p.differs} == {("haiku", "cmd"), ("sonnet", "cmd")}
    assert s.pooled.effect is None and "differs between agents" in s.pooled.reason
    by = {a.name: a for a in s.agents}
    assert by["cmd"].effect == 0.0 and by["cmd"].effect_interval is not None
    assert by["cmd"].verdict == "FAIL" and "Holm" in by["cmd"].reasons[0]
    assert by["haiku"].verdict == by["sonnet"].verdict == "PASS"
    assert s.verdict == "FAIL" and s.exit_code == 1
    assert "fails its gate on cmd" in s.message and "passes on haiku, sonnet" in s.message
    # the effect is the agent's benchmark.json's, not recomputed
    paired = bench(tmp_path, "c2", NOTHING)["statistics"]["paired"]["pass_rate_difference"]
    assert by["cmd"].effect_interval == paired["interval"] and by["cmd"].effect_p_value == paired["p_value"]


def test_a_not_required_agent_is_reported_and_never_decides(tmp_path: Path) -> None:
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS)),
                          part("cmd", bench(tmp_path, "c", NOTHING), required=False)])
    cmd = s.agents[1]
    assert cmd.verdict == "NOT GATED" and cmd.thresholds[0].decision == "FAIL"  # shown, not gated
    assert s.heterogeneity.called  # reported for every agent, required or not
    assert s.verdict == "PASS" and "not gated on cmd" in s.message
    assert s.family is not None and s.family.checks == 1  # only the required agent's threshold
    only = summarize_matrix([part("cmd", bench(tmp_path, "c3", NOTHING), required=False)])
    assert only.verdict == "NOT GATED" and only.exit_code == 0 and only.family is None


def test_two_agents_heterogeneity_is_the_sign_flip_test_of_their_difference(tmp_path: Path) -> None:
    a, c = bench(tmp_path, "a", HELPS), bench(tmp_path, "c", NOTHING)
    s = summarize_matrix([part("haiku", a), part("cmd", c)])
    p, method = sign_flip_p_value([0.75] * E)
    assert method.startswith("exact") and s.heterogeneity.p_value == pytest.approx(p)  # 2/2**8
    assert s.heterogeneity.called and s.heterogeneity.exact and s.heterogeneity.pairs[0].differs
    assert s.heterogeneity.permutations == 2**E


def test_two_agents_beyond_exact_enumeration_agree_with_their_pair(tmp_path: Path) -> None:
    """20 evals: the within-eval permutations are sampled; the omnibus and the one pair are the
    same test and must give the same p, so "called" and "this pair differs" never disagree."""
    many = [(0.75, 0.25) if i % 3 else (0.5, 0.5) for i in range(1, 21)]
    flat = [(0.5, 0.25) if i % 2 else (0.25, 0.25) for i in range(1, 21)]
    s = summarize_matrix([part("haiku", with_rates(bench(tmp_path, "a", HELPS, {}), many)),
                          part("cmd", with_rates(bench(tmp_path, "c", HELPS, {}), flat))])
    h = s.heterogeneity
    assert h.n_informative > 15 and not h.exact and h.p_value == h.pairs[0].p_value
    assert h.called == h.pairs[0].differs


def test_fail_calls_are_held_family_wise_across_agents(tmp_path: Path) -> None:
    """A FAIL at its own one-sided 2.5% that Holm over 3 agents' checks does not confirm is
    INCONCLUSIVE in the matrix (its own benchmark.json still records FAIL)."""
    c = bench(tmp_path, "c", NOTHING)
    gate = c["statistics"]["gates"]["min_pass_rate"]
    assert gate["decision"] == "FAIL"
    weak = copy.deepcopy(c)
    weak["statistics"]["gates"]["min_pass_rate"]["fail_p_value"] = 0.02  # < 0.025, > 0.05 / 3
    parts = [part("haiku", bench(tmp_path, "a", HELPS)), part("sonnet", bench(tmp_path, "b", HELPS_TOO))]
    s = summarize_matrix([*parts, part("cmd", weak)])
    cmd = s.agents[2]
    assert cmd.thresholds[0].recorded_decision == "FAIL" and cmd.thresholds[0].decision == "INCONCLUSIVE"
    assert cmd.thresholds[0].holm_level == pytest.approx(0.05 / 3)
    assert cmd.verdict == "INCONCLUSIVE" and "not at the Holm level" in cmd.reasons[0]
    assert s.verdict == "INCONCLUSIVE" and s.exit_code == 3
    assert s.family is not None and s.family.checks == 3 and s.family.confirmed_levels == {}
    # the same p with one agent alone is confirmed (Holm over one check: its own 2.5%)
    alone = summarize_matrix([part("cmd", weak)])
    assert alone.agents[0].verdict == "FAIL" and alone.verdict == "FAIL"


def test_a_threshold_the_agent_cannot_measure_is_left_out(tmp_path: Path) -> None:
    c = bench(tmp_path, "c", HELPS, {"min_pass_rate": 0.6, "max_avg_tokens": 1000})
    c["statistics"]["gates"]["max_avg_tokens"].update(value=None, interval=None, decision="INCONCLUSIVE")
    s = summarize_matrix([part("cmd", c)])
    assert [t.decision for t in s.agents[0].thresholds] == ["PASS", "NOT MEASURED"]
    assert s.agents[0].verdict == "PASS" and s.family is not None and s.family.checks == 1


def test_an_invalid_measurement_is_never_a_pass(tmp_path: Path) -> None:
    errored = {i: ("EEEE", "PFFF") for i in range(1, E + 1)}
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS)), part("broken", bench(tmp_path, "b", errored))])
    broken = s.agents[1]
    assert broken.verdict in ("INVALID", "FAIL") and broken.problems
    assert s.verdict != "PASS" and s.exit_code != 0
    assert s.heterogeneity.n_evals == 0 and len(s.heterogeneity.evals_excluded) == E
    assert "on broken" in s.heterogeneity.evals_excluded[0]


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda b: b.pop("statistics"), "statistics"),
    (lambda b: b["statistics"].pop("per_eval"), "statistics.per_eval"),
    (lambda b: b["statistics"]["per_eval"][0]["configurations"].pop("without_skill"),
     "statistics.per_eval[0].configurations.without_skill"),
    (lambda b: b["statistics"]["per_eval"][1]["configurations"]["with_skill"].update(pass_rate="high"),
     "statistics.per_eval[1].configurations.with_skill.pass_rate"),
    (lambda b: b["statistics"]["per_eval"].pop(), "statistics.per_eval"),  # not the same evals
    (lambda b: b["statistics"]["gates"]["min_pass_rate"].update(decision="maybe"),
     "statistics.gates.min_pass_rate.decision"),
])
def test_bad_per_agent_data_is_an_input_error_naming_file_and_field(tmp_path: Path, mutate: Any, where: str) -> None:
    good, bad = bench(tmp_path, "a", HELPS), bench(tmp_path, "b", HELPS)
    mutate(bad)
    with pytest.raises(InputError) as caught:
        summarize_matrix([part("haiku", good), part("sonnet", bad)])
    problem = caught.value.problems[0]
    assert problem.file == "agents/sonnet/benchmark.json" and problem.location == where, str(caught.value)


def test_repeated_names_are_refused(tmp_path: Path) -> None:
    b = bench(tmp_path, "a", HELPS)
    with pytest.raises(InputError, match="repeat"):
        summarize_matrix([part("x", b), part("x", b)])


def test_nothing_gated_is_not_a_pass_and_an_invalid_agent_never_exits_0(tmp_path: Path) -> None:
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS, {})), part("cmd", bench(tmp_path, "c", NOTHING, {}))])
    assert [a.verdict for a in s.agents] == ["NOT GATED", "NOT GATED"] and s.family is None
    assert s.verdict == "NOT GATED" and s.exit_code == 0 and s.message.startswith("NOT GATED")
    errored = {i: ("EEEE", "PFFF") for i in range(1, E + 1)}
    s = summarize_matrix([part("haiku", bench(tmp_path, "a", HELPS, {})), part("broken", bench(tmp_path, "b", errored, {}))])
    assert s.agents[1].verdict == "INVALID" and s.verdict == "INCONCLUSIVE" and s.exit_code == 3
    assert "invalid on broken" in s.message


def comparison(p_adjusted: float) -> dict[str, Any]:
    """comparison_previous.json with eval 1 called regressed at this BH-adjusted p."""
    return {"per_eval": [{"eval_id": 1, "eval_name": "e1", "label": "regressed", "counts": "4/4 -> 0/4",
                          "p_regression_adjusted": p_adjusted}], "regressed": [1]}


def test_regression_checks_share_the_gates_level_across_agents(tmp_path: Path) -> None:
    """As one agent's gate holds its regression check at 0.01 beside the thresholds' 0.04, the
    matrix shares the 0.01 between the agents compared: 0.004 fails one agent alone, and two
    compared agents (0.005 each); 0.008 fails one agent alone, but not among two."""
    a, b = bench(tmp_path, "a", HELPS), bench(tmp_path, "b", HELPS_TOO)
    alone = summarize_matrix([AgentPart("haiku", True, "command", None, a, comparison(0.008))])
    assert alone.agents[0].verdict == "FAIL" and alone.verdict == "FAIL"
    row = alone.agents[0].thresholds[-1]
    assert row.key == "no_regressions" and row.evals == ["eval-1 (e1)"] and row.holm_level == pytest.approx(0.01)
    assert alone.family is not None and alone.family.thresholds_alpha == pytest.approx(0.04)
    held = summarize_matrix([AgentPart("haiku", True, "command", None, a, comparison(0.008)),
                             AgentPart("sonnet", True, "command", None, b, comparison(0.5))])
    haiku = held.agents[0]
    assert haiku.verdict == "INCONCLUSIVE" and "0.005" in haiku.reasons[0] and held.verdict == "INCONCLUSIVE"
    assert held.family is not None and held.family.regression_level == pytest.approx(0.005)
    assert held.family.checks == 4  # two thresholds and two regression checks
    clear = summarize_matrix([AgentPart("haiku", True, "command", None, a, comparison(0.004)),
                              AgentPart("sonnet", True, "command", None, b, comparison(0.5))])
    assert clear.agents[0].verdict == "FAIL" and clear.verdict == "FAIL"
    assert clear.family is not None and clear.family.confirmed_levels == {"haiku/no_regressions": 0.005}
    with pytest.raises(InputError, match="comparison_previous.json"):
        summarize_matrix([AgentPart("haiku", True, "command", None, a, {"per_eval": "none"})])
