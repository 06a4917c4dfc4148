"""`run --shard I/N`: a deterministic, balanced share of an iteration's planned trials, so N CI
jobs can run one plan between them and `merge` can put the shares back together.

The share is a pure function of the plan (eval order, arms, trials per arm), never of timing
or of which trials finished: every shard computes the same split, and `merge` recomputes it to
know which shard owns each trial. Trials are dealt round-robin in (arm, eval, trial number)
order, so every shard gets the same number of trials (give or take one) of each arm, and an
eval's trials spread across shards instead of landing on one slow machine."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillassay.errors import InputError
from skillassay.run.plan import Trial
from skillassay.store.jsonio import write_json

SHARD_FILE = "shard.json"
# What must be equal for two shards to belong to one plan; `merge` names the first that differs.
PLAN_KEYS = ("skill", "evals", "settings", "seed", "trials_per_eval", "configurations", "baseline_type", "count")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as written on the command line
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard | None:
    """`I/N` with 1 <= I <= N; anything else is bad input naming --shard."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise InputError.one("--shard", text, "expected I/N with 1 <= I <= N, e.g. --shard 2/4")
    return Shard(int(m.group(1)), int(m.group(2)))


def owner(position: int, count: int) -> int:
    """The shard (1-based) that runs the trial at this position of the canonical order."""
    return position % count + 1


def canonical_order(slugs: Sequence[str], configurations: Sequence[str], trials: int) -> list[tuple[str, str, int]]:
    """Every planned trial as (eval slug, arm, trial number), arm-major: the order trials are dealt in."""
    return [(slug, config, k) for config in configurations for slug in slugs for k in range(1, trials + 1)]


def owners(slugs: Sequence[str], configurations: Sequence[str], trials: int, count: int) -> dict[tuple[str, str, int], int]:
    return {key: owner(i, count) for i, key in enumerate(canonical_order(slugs, configurations, trials))}


def shard_share(planned: list[Trial], configurations: Sequence[str], trials: int, shard: Shard | None) -> list[Trial]:
    """The planned trials this shard runs (all of them without --shard), in plan order."""
    if shard is None:
        return planned
    slugs = list(dict.fromkeys(t.eval_slug for t in planned))
    who = owners(slugs, configurations, trials, shard.count)
    return [t for t in planned if who[(t.eval_slug, t.configuration, t.run_number)] == shard.index]


def shard_record(shard: Shard, fingerprint: dict[str, str], *, seed: int, trials: int,
                 configurations: list[str], baseline_type: str, evals: list[tuple[int, str]],
                 iteration: int, ran: int) -> dict[str, Any]:
    """shard.json: the plan this share belongs to (what `merge` checks) and the evals in plan order."""
    return {"schema_version": 1, "index": shard.index, "count": shard.count, "iteration": iteration,
            "skill": fingerprint.get("skill"), "evals": fingerprint.get("evals"),
            "settings": fingerprint.get("settings"), "seed": seed, "trials_per_eval": trials,
            "configurations": list(configurations), "baseline_type": baseline_type,
            "eval_order": [{"id": eval_id, "slug": slug} for eval_id, slug in evals], "trials_in_share": ran}


def write_shard_record(it_dir: Path, record: dict[str, Any]) -> Path:
    write_json(it_dir / SHARD_FILE, record)
    return it_dir / SHARD_FILE


def refuse_adaptive(shard: Shard | None, adaptive: object) -> None:
    """Adaptive rounds decide the next round from every result so far; a share cannot."""
    if shard is not None and adaptive is not None:
        raise InputError.one("--shard", str(shard), "cannot be combined with an adaptive design (each round "
                             "needs every trial's result): drop --adaptive / the config's `adaptive` block")
