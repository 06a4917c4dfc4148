"""One significance level for the regression gate, stated the same way everywhere (issue 34):
the design line said "0.025 family-wise" while the gate's message said "0.01 family-wise (Holm...)"."""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze.gate import REGRESSION_GATE_LEVEL, regression_level_words


def test_every_output_states_the_one_regression_level(tmp_path: Path) -> None:
    same = {i: ("PPP", "FFF") for i in range(4, 9)}
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "FFF"), 3: ("PPP", "FFF"), **same},
                    thresholds={"min_pass_rate": 0.1, "max_avg_tokens": 5000})
    write_iteration(tmp_path, 2, {1: ("FFF", "FFF"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), **same},
                    thresholds={"min_pass_rate": 0.1, "max_avg_tokens": 5000})
    it = tmp_path / "iteration-2"
    compared = cli(["compare", str(it)])
    assert compared.exit_code == 0, compared.output
    gated = cli(["gate", str(it)])
    reported = cli(["report", str(it)])
    assert reported.exit_code == 0, reported.output
    outputs = {"compare": compared.output, "gate": gated.output, "report.md": (it / "report.md").read_text()}
    if (it / "benchmark.md").exists():
        outputs["benchmark.md"] = (it / "benchmark.md").read_text()
    phrase = regression_level_words()
    assert phrase.startswith(f"{REGRESSION_GATE_LEVEL:g} false discovery rate")  # BH: not family-wise
    for name in ("compare", "gate", "report.md"):
        assert phrase in outputs[name], (name, outputs[name])
    for name, text in outputs.items():
        levels = set(re.findall(r"(\d[\d.]*) family-wise", text))
        # The one regression level; the thresholds' Holm share is stated as "a family-wise 0.04".
        assert levels <= {f"{REGRESSION_GATE_LEVEL:g}"}, (name, levels, text)
