"""The trend chart's axes start at zero (issue 34): matplotlib scales an axis to its data, so
tokens going from 1,000 to 1,010 drew as a steep climb."""

from __future__ import annotations

from skillassay.report.charts import trend_figure


def test_every_trend_axis_starts_at_zero() -> None:
    points = [{"iteration": 1, "skill_pass_rate": 0.80, "base_pass_rate": 0.70, "tokens": 1000.0, "seconds": 30.0},
              {"iteration": 2, "skill_pass_rate": 0.82, "base_pass_rate": 0.71, "tokens": 1010.0, "seconds": 31.0}]
    fig = trend_figure(points)
    axes = fig.get_axes()
    assert len(axes) == 3
    for ax in axes:
        low, high = ax.get_ylim()
        assert low == 0 and high > 0, (ax.get_title(), low, high)


def test_an_axis_without_figures_still_starts_at_zero() -> None:
    points = [{"iteration": i, "skill_pass_rate": 0.5, "base_pass_rate": 0.5, "tokens": None, "seconds": None}
              for i in (1, 2)]
    for ax in trend_figure(points).get_axes():
        assert ax.get_ylim()[0] == 0, ax.get_title()
