"""Which configuration of an iteration is the skill under test and which is its baseline.

Decided by name (and the benchmark config's baseline_type), never by alphabetical order, so
every delta reads skill - baseline. Every stage that pairs the two arms asks here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SKILL_CONFIGS = ("with_skill", "new_skill")
BASELINE_CONFIGS = ("without_skill", "old_skill", "baseline", "no_skill")


@dataclass(frozen=True)
class Arms:
    """Which configuration is the skill under test and which the baseline: decided by name
    (and the benchmark config), never by alphabetical order, so deltas are skill - baseline."""

    skill: str
    baseline: str


def pick_arms(configurations: Iterable[str], baseline_type: str | None = None) -> Arms:
    configs = list(dict.fromkeys(configurations))
    skill = next((c for c in SKILL_CONFIGS if c in configs), None)
    preferred = ("old_skill",) if baseline_type == "previous_version" else BASELINE_CONFIGS
    baseline = next((c for c in preferred + BASELINE_CONFIGS if c in configs), None)
    rest = [c for c in configs if c not in {skill, baseline}]
    if skill is None and rest:
        skill = rest.pop(0)
    if baseline is None and rest:
        baseline = rest.pop(0)
    return Arms(skill or "with_skill", baseline or "without_skill")
