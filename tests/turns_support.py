"""The talker skill the command-executor multi-turn tests run (tests/turns_agent.py answers it):
one 3-turn eval whose every turn expects its own prompt back."""

from __future__ import annotations

import json
from pathlib import Path

PROMPTS = ("first question", "second question", "third question")


def write_skill(root: Path) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: talker\ndescription: Talks. Use when asked.\n---\nTalk.\n")
    evals = [{"id": 1, "name": "talk", "turns": [{"prompt": p, "expectations": [{"type": "contains", "value": p}]}
                                                 for p in PROMPTS]}]
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "talker", "evals": evals}))
    return root
