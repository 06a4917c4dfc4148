"""A small run of benchmarks/matrix_calibration.py: the heterogeneity test calls agents that
share one effect no more often than alpha (within Monte-Carlo error), finds the agent the skill
does nothing for, and the check would catch a test that is miscalibrated."""

from __future__ import annotations

import sys

import pytest
import repo_paths

sys.path.insert(0, str(repo_paths.REPO / "benchmarks"))
import matrix_calibration as cal  # noqa: E402

from skillassay.stats import heterogeneity  # noqa: E402

pytestmark = pytest.mark.sim  # Monte-Carlo checks of a statistical promise

ALPHA = 0.05


@pytest.mark.parametrize("scenario", ["identical", "levels", "spread"])
def test_agents_with_one_effect_are_called_at_most_alpha(scenario: str) -> None:
    cell = cal.run_cell(cal.Cell(scenario, 3, 10, 3), replicates=300, resamples=500, alpha=ALPHA, seed=7)
    assert cal.check([cell], ALPHA) == [], f"{cell.calls}/{cell.n} called"


def test_the_agent_without_effect_is_found() -> None:
    cell = cal.run_cell(cal.Cell("one agent without effect", 3, 20, 10), replicates=100, resamples=500,
                        alpha=ALPHA, seed=7)
    assert cell.rate() >= 0.8, f"{cell.calls}/{cell.n} called"


def test_a_miscalibrated_test_would_fail_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same harness on a test whose p-values are a third of the true ones (calling at about
    15% when it promises 5%) reports the A/A cell above alpha."""
    real = heterogeneity.interaction_test

    def shrunk(*args: object, **kwargs: object) -> heterogeneity.InteractionTest:
        t = real(*args, **kwargs)  # type: ignore[arg-type]
        return heterogeneity.InteractionTest(t.statistic, t.p_value / 3, t.exact, t.permutations, t.n_blocks,
                                             t.n_informative, t.significance_reachable)

    monkeypatch.setattr(cal, "interaction_test", shrunk)
    cell = cal.run_cell(cal.Cell("identical", 3, 10, 3), replicates=300, resamples=500, alpha=ALPHA, seed=7)
    assert cal.check([cell], ALPHA), f"{cell.calls}/{cell.n} called"
