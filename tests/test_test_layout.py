"""The test tree's own shape: pytest imports test files by basename (no packages under tests/),
so two test files with one name in different folders stop collection for the whole suite."""

from __future__ import annotations

from collections import defaultdict

from repo_paths import REPO


def test_every_test_file_name_is_unique() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in (REPO / "tests").rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(REPO)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
