"""The install instructions point at something that exists: skillassay is not on the Python
package index, so a bare `pip install skillassay` (or `skillassay[extra]`) in the docs would
install nothing, or someone else's package of that name."""

from __future__ import annotations

import re

import repo_paths

DOCS = repo_paths.REPO
# `pip install skillassay` / `pip install "skillassay[agents]"` not followed by ` @ <source>`
BARE = re.compile(r"""pip install\s+["']?skillassay(\[[a-z,]+\])?["']?(?!\s*@)(\s|$)""")


def test_no_document_installs_skillassay_from_the_package_index() -> None:
    files = [DOCS / "README.md", *sorted((DOCS / "docs").glob("*.md"))]
    found = [f"{path.name}:{n}: {line.strip()}" for path in files
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if BARE.search(line)]
    assert not found, found


def test_ci_workflow_installs_from_the_repository() -> None:
    text = (DOCS / "docs" / "ci.md").read_text(encoding="utf-8")
    assert re.search(r'pip install "skillassay @ \$SKILLASSAY_SOURCE"', text)
    assert "SKILLASSAY_SOURCE: git+https://" in text
