"""benchmark.md: the short human summary written beside benchmark.json."""

from __future__ import annotations

from functools import cache

import jinja2

from skillassay.analyze.cost import cost_arms, extra_success_text, usd, usd_interval
from skillassay.analyze.gate import GateResult
from skillassay.models import Benchmark
from skillassay.store.templates import template_bytecode_cache
from skillassay.wording import improvement_text, pct, points, signed_points


def num(x: float | None, nd: int = 2) -> str:
    return "n/a" if x is None else f"{x:,.{nd}f}"


def ratio(x: float | None) -> str:
    return "n/a (undefined)" if x is None else f"{x:.2f}x"


def cost_ratio(x: float | None, unit: str) -> str:
    """The spec's `token_savings_ratio` / `time_savings_ratio` are skill / baseline, so above 1
    they are a cost, not a saving: the ratio is shown with what it means, signed by direction."""
    if x is None:
        return "n/a (undefined)"
    change = points(x - 1)
    if change == "0":
        return f"{x:.2f}x (the same {unit} with the skill)"
    return f"{x:.2f}x ({change}% {'more' if x > 1 else 'less'} {unit} with the skill)"


def ci(iv: list[float] | None) -> str:
    """A rate's interval as whole percentages after its estimate; nothing when there is none."""
    return "" if not iv else f" [{pct(iv[0])}, {pct(iv[1])}]"


def pts(x: float | None) -> str:
    """A difference of rates in percentage points, signed."""
    return "n/a" if x is None else f"{signed_points(x)} pts"


def pts_ci(iv: list[float] | None) -> str:
    return "" if not iv else f" [{signed_points(iv[0])}, {signed_points(iv[1])}]"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("skillassay", "templates"),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False,  # markdown, not HTML
                             bytecode_cache=template_bytecode_cache())
    env.globals.update(pct=pct, num=num, ratio=ratio, cost_ratio=cost_ratio, improvement=improvement_text,
                       usd=usd, usd_ci=usd_interval, cost_effect=extra_success_text, cost_arms=cost_arms,
                       ci=ci, pts=pts, pts_ci=pts_ci)
    return env


def render_benchmark_md(bench: Benchmark, gate: GateResult | None = None) -> str:
    return environment().get_template("benchmark.md.j2").render(b=bench, gate=gate)
