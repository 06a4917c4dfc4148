"""Advice that keeps its promise: the trials and evals the statistics recommend, how many trials
an iteration planned, and how fast the per-eval trials-to-call advice is."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iteration_factory import write_iteration
from scipy import stats as sps

from skillassay.analyze import numerics as stats
from skillassay.analyze.aggregate import aggregate_iteration
from skillassay.analyze.compare import _candidate_trials, add_trials_to_call, trials_to_call
from skillassay.analyze.statistics import compare_iterations
from skillassay.store.records import TrialRecord

# --- item 8: trials_requested is the iteration's, not the config's default --------------------


def test_trials_requested_comes_from_the_iteration_not_the_config_default(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPPPFFF", "PPPFFFFFFF") for e in range(1, 5)})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.5}}))  # no trials_per_eval
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10
    skill = st["configurations"]["with_skill"]
    assert set(skill["pass_at_k"]) == {"1", "2", "3", "5", "10"}
    assert skill["pass_at_k"]["10"] == 1.0


def test_trials_requested_without_iteration_json_is_what_ran(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPFFFFF", "PFFFFFFFFF") for e in range(1, 4)})
    (it / "iteration.json").unlink()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {}}))
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10


# --- item 9: the trials-to-call advice is fast and still exact ---------------------------------


def scan_trials_to_call(before: tuple[int, int], after: tuple[int, int], others: list[float | None],
                        index: int, q: float, regression: bool) -> int | None:
    """The reference: every candidate in turn, each with Boschloo and BH (the old, slow way)."""
    (cb, nb), (ca, na) = before, after
    rb, ra = cb / nb, ca / na
    if math.isclose(rb, ra) or (ra < rb) != regression:
        return None
    for k in _candidate_trials(max(nb, na) + 1):
        c1, c2 = round(rb * k), round(ra * k)
        if c1 == c2:
            continue
        p_reg, p_imp = stats.one_sided_exact_p(c1, k, c2, k, only_observed_direction=True)
        ps = list(others)
        ps[index] = p_reg if regression else p_imp
        adj = stats.bh_adjust(ps)[index]
        if adj is not None and adj <= q:
            return k
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=30), st.data(),
       st.sampled_from([0.05, 0.1, 0.2]))
def test_bh_call_threshold_is_the_largest_called_p(others: list[float | None], data: st.DataObject,
                                                   q: float) -> None:
    index = data.draw(st.integers(0, len(others) - 1))
    limit = stats.bh_call_threshold(others, index, q)

    def adjusted(x: float) -> float:
        ps = list(others)
        ps[index] = x
        return stats.bh_adjust(ps)[index]

    assert adjusted(limit * (1 - 1e-9)) <= q
    assert adjusted(min(1.0, limit * (1 + 1e-6) + 1e-12)) > q or limit >= 1


@pytest.mark.parametrize(("n", "m"), [(3, 0), (3, 6), (4, 9), (5, 3)])
def test_fast_trials_to_call_agrees_with_the_full_scan(n: int, m: int) -> None:
    for cb in range(n + 1):
        for ca in range(n + 1):
            for regression in (True, False):
                others: list[float | None] = [0.5] * (m // 2) + [1.0] * (m - m // 2) + [None]
                got = trials_to_call((cb, n), (ca, n), [*others, 1.0], len(others), 0.1, regression)
                want = scan_trials_to_call((cb, n), (ca, n), [*others, 1.0], len(others), 0.1, regression)
                assert got == want, (cb, ca, n, m, regression)


def k10_records(rates: np.ndarray, rng: np.random.Generator) -> list[TrialRecord]:
    return [TrialRecord(eval_id=e, eval_name=f"e{e}", configuration="with_skill", run_number=k + 1,
                        status="ok", passed=bool(rng.random() < p))
            for e, p in enumerate(rates, start=1) for k in range(10)]


def test_trials_to_call_for_20_evals_at_k10_asks_few_exact_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanning took 344 Boschloo tests (~7 s idle, ~30 s loaded) for this comparison."""
    rng = np.random.default_rng(3)
    true = rng.beta(2, 2, 20)
    result = compare_iterations(k10_records(true, rng), k10_records(true, rng), "with_skill")
    possible = sum(r["label"].startswith("possible") for r in result["per_eval"])
    assert possible >= 12
    calls = []
    real = sps.boschloo_exact
    monkeypatch.setattr(sps, "boschloo_exact", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    stats._boschloo.cache_clear()
    start = time.perf_counter()
    add_trials_to_call(result, 0.1)
    elapsed = time.perf_counter() - start
    assert len(calls) <= 3 * possible
    assert elapsed < 5  # ~0.5 s on an idle core; the bound leaves room for a loaded machine
    ps = {"possible regression": [r["p_regression"] for r in result["per_eval"]],
          "possible improvement": [r["p_improvement"] for r in result["per_eval"]]}
    for i, r in enumerate(result["per_eval"]):
        if r["label"].startswith("possible") and i % 4 == 0:  # a sample against the reference
            args = ((r["before"]["passes"], 10), (r["after"]["passes"], 10), ps[r["label"]], i, 0.1,
                    r["label"] == "possible regression")
            assert r["trials_per_arm_to_call"] == scan_trials_to_call(*args)
