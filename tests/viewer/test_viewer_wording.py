"""The viewer writes a percentage by the rule the console and the reports use
(skillassay.wording.pct, issue 34: 12% in one, 13% in the other). The viewer's own `pct`,
taken from viewer.js, runs under node on every k/n up to 200 trials, and on small negative
differences (where toFixed alone writes "-0%")."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from fractions import Fraction

import pytest
import repo_paths

from skillassay.wording import pct

NODE = shutil.which("node")
VIEWER_JS = repo_paths.SRC / "skillassay" / "viewer" / "assets" / "viewer.js"


def viewer_function(name: str) -> str:
    """The one-line arrow function `const NAME = ...;` of viewer.js."""
    found = re.search(rf"^\s*const {name} = \(.*;$", VIEWER_JS.read_text(encoding="utf-8"), re.M)
    assert found, f"viewer.js defines no one-line `const {name} = (...) => ...;`"
    return found.group(0).strip()


def fractions() -> list[float]:
    values = {float(Fraction(k, n)) for n in range(1, 201) for k in range(0, n + 1)}
    values |= {-v for v in values} | {-0.004, -0.005, 0.004, 0.005, -0.0049, 1e-9, -1e-9}
    return sorted(values)


@pytest.mark.skipif(NODE is None, reason="node is not installed: the viewer's JavaScript cannot run here")
def test_the_viewer_rounds_every_percentage_as_the_reports_do() -> None:
    xs = fractions()
    script = f"{viewer_function('pct')}\nconst xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" \
             "process.stdout.write(JSON.stringify([...xs.map(pct), pct(null), pct(undefined)]));"
    done = subprocess.run([str(NODE), "-e", script], input=json.dumps(xs), capture_output=True, text=True,
                          timeout=60, check=True)
    shown = json.loads(done.stdout)
    python = [pct(x) for x in xs] + ["n/a", "n/a"]
    differ = [(x, js, py) for x, js, py in zip([*xs, None, None], shown, python, strict=True) if js != py]
    assert not differ, f"{len(differ)} of {len(xs)} differ, e.g. {differ[:5]}"
