"""`skillassay merge`: four shard workspaces (real `run --shard I/4` with the echo executor,
whose outcomes are deterministic) make the iteration an unsharded run makes; shards of
different plans, a missing shard or an unfinished trial are refused with exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runner import invoke


def _shards(skill: Path, root: Path, *extra: str, count: int = 4) -> list[Path]:
    out = []
    for i in range(1, count + 1):
        ws = root / f"shard-{i}"
        result = invoke("run", skill, "--executor", "echo", "--workspace", ws, "--trials", "3",
                        "--shard", f"{i}/{count}", *extra)
        assert result.code == 0, result.output
        out.append(ws)
    return out


def _without_clock(bench: dict) -> dict:
    bench = dict(bench)
    bench.pop("timestamp", None)
    bench["metadata"] = {k: v for k, v in bench["metadata"].items() if k != "timestamp"}
    return bench


def test_four_shards_merge_into_the_unsharded_benchmark(example_skill: Path, tmp_path: Path) -> None:
    shards = _shards(example_skill, tmp_path)
    merged_ws = tmp_path / "merged"
    result = invoke("merge", *shards, "--workspace", merged_ws)
    assert result.code == 0, result.output
    assert "merged 4 shards (48 trials)" in result.flat
    merged = json.loads((merged_ws / "iteration-1" / "benchmark.json").read_text())

    # An unsharded run: the same outcomes (echo is deterministic); its wall-clock timings differ.
    single = tmp_path / "single"
    assert invoke("run", example_skill, "--executor", "echo", "--workspace", single, "--trials", "3").code == 0
    alone = json.loads((single / "iteration-1" / "benchmark.json").read_text())
    assert merged["per_eval"] and [
        (e["eval_id"], e["with_skill"]["pass_rate"], e["baseline"]["pass_rate"]) for e in merged["per_eval"]
    ] == [(e["eval_id"], e["with_skill"]["pass_rate"], e["baseline"]["pass_rate"]) for e in alone["per_eval"]]
    assert merged["summary"]["with_skill"]["pass_rate"] == alone["summary"]["with_skill"]["pass_rate"]
    assert (merged["statistics"]["paired"]["pass_rate_difference"]
            == alone["statistics"]["paired"]["pass_rate_difference"])

    # The very same trial files in the unsharded workspace: resuming it re-aggregates them, and
    # its benchmark.json is the merged one, field for field (the clock's timestamp aside).
    for run in (merged_ws / "iteration-1").glob("eval-*/*/run-*"):
        target = single / "iteration-1" / run.relative_to(merged_ws / "iteration-1")
        shutil.rmtree(target)
        shutil.copytree(run, target)
    assert invoke("run", example_skill, "--executor", "echo", "--workspace", single, "--trials", "3").code == 0
    resumed = json.loads((single / "iteration-1" / "benchmark.json").read_text())
    assert _without_clock(resumed) == _without_clock(merged)
    for name in ("benchmark.md", "report.md", "iteration.json"):
        assert (merged_ws / "iteration-1" / name).is_file()


def test_shards_of_different_plans_are_refused(example_skill: Path, tmp_path: Path) -> None:
    shards = _shards(example_skill, tmp_path / "a", count=2)
    other_seed = _shards(example_skill, tmp_path / "b", "--seed", "7", count=2)
    result = invoke("merge", shards[0], other_seed[1], "--workspace", tmp_path / "m")
    assert result.code == 2 and not result.crashed, result.output
    assert "shard.json" in result.flat and "different plans" in result.flat
    assert not (tmp_path / "m" / "iteration-1" / "benchmark.json").exists()

    (example_skill / "SKILL.md").write_text((example_skill / "SKILL.md").read_text() + "\nOne more line.\n")
    changed = _shards(example_skill, tmp_path / "c", count=2)
    result = invoke("merge", shards[0], changed[1], "--workspace", tmp_path / "m")
    assert result.code == 2 and "skill" in result.flat, result.output


def test_a_missing_shard_or_an_unfinished_trial_is_refused(example_skill: Path, tmp_path: Path) -> None:
    shards = _shards(example_skill, tmp_path, count=2)
    result = invoke("merge", shards[0], "--workspace", tmp_path / "m")
    assert result.code == 2 and "2/2 missing" in result.flat, result.output
    result = invoke("merge", shards[0], shards[0], "--workspace", tmp_path / "m")
    assert result.code == 2 and "more than once" in result.flat, result.output
    victim = next((shards[1] / "iteration-1").glob("eval-*/*/run-*/grading.json"))
    victim.unlink()
    result = invoke("merge", *shards, "--workspace", tmp_path / "m")
    assert result.code == 2 and "run that shard again" in result.flat, result.output
