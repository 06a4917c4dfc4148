"""The smallest valid skill (one eval, one typed check), written into a test's folder: for tests
about the files around a skill (its folder, its workspace), not about what it does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def make_skill(root: Path, config: dict[str, Any] | None = None) -> Path:
    skill = root / "greeter"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets. Use when asked to greet.\n---\n"
                                    "Say hello.\n", encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "greeter", "evals": [
        {"id": 1, "prompt": "Say hello", "expectations": [{"type": "contains", "value": "hello"}]}]}),
        encoding="utf-8")
    if config is not None:
        (skill / "evals" / "benchmark_config.json").write_text(json.dumps(config), encoding="utf-8")
    return skill
