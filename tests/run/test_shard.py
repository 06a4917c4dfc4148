"""`run --shard I/N`: every planned trial in exactly one share, shares balanced across arms and
evals, the same split every time, and a shard run executes only its share (real CLI, echo)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from cli_runner import invoke

from skillassay.errors import InputError
from skillassay.run.plan import plan_trials
from skillassay.run.shard import Shard, parse_shard, shard_share
from skillassay.spec.skill import load_skill  # noqa: F401  (the package imports cleanly)


def _plan(tmp_path: Path, n_evals: int, trials: int) -> list:
    from skillassay.models import Eval

    evals = [Eval(id=i, prompt=f"p{i}", expected_output="x") for i in range(1, n_evals + 1)]
    return plan_trials(evals, ["with_skill", "without_skill"], trials, tmp_path, 0)


@pytest.mark.parametrize(("n_evals", "trials", "count"), [(8, 3, 4), (5, 1, 4), (3, 5, 2), (50, 3, 7), (2, 1, 5)])
def test_shares_partition_the_plan_and_are_balanced(tmp_path: Path, n_evals: int, trials: int, count: int) -> None:
    planned = _plan(tmp_path, n_evals, trials)
    shares = [shard_share(planned, ["with_skill", "without_skill"], trials, Shard(i, count))
              for i in range(1, count + 1)]
    keys = [(t.eval_slug, t.configuration, t.run_number) for share in shares for t in share]
    assert sorted(keys) == sorted((t.eval_slug, t.configuration, t.run_number) for t in planned)
    assert len(set(keys)) == len(keys)
    sizes = [len(s) for s in shares]
    assert max(sizes) - min(sizes) <= 1
    for arm in ("with_skill", "without_skill"):
        per_arm = [sum(t.configuration == arm for t in s) for s in shares]
        assert max(per_arm) - min(per_arm) <= 1, per_arm
    if trials >= count:  # each eval's trials spread over every shard
        for share in shares:
            assert {t.eval_slug for t in share} == {t.eval_slug for t in planned}
    again = shard_share(planned, ["with_skill", "without_skill"], trials, Shard(2, count))
    assert [t.run_dir for t in again] == [t.run_dir for t in shares[1]]  # deterministic


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0", "-1/3"])
def test_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(InputError, match="--shard"):
        parse_shard(text)


def test_bad_shard_on_the_command_line_exits_2(example_skill: Path, tmp_path: Path) -> None:
    result = invoke("run", example_skill, "--executor", "echo", "--workspace", tmp_path / "ws", "--shard", "5/4")
    assert result.code == 2 and "--shard" in result.flat and not result.crashed, result.output


def test_a_shard_runs_only_its_share(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    result = invoke("run", example_skill, "--executor", "echo", "--workspace", ws, "--trials", "3", "--shard", "3/4")
    assert result.code == 0, result.output
    assert "nothing gated" in result.flat and "merge" in result.flat
    it = ws / "iteration-1"
    runs = sorted(p for p in it.glob("eval-*/*/run-*") if (p / "grading.json").is_file())
    assert len(runs) == 8 * 2 * 3 // 4
    assert Counter(p.parent.name for p in runs) == {"with_skill": 6, "without_skill": 6}
    assert (it / "shard.json").is_file() and not (it / "benchmark.json").exists()
