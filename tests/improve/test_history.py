"""history.json: a progression with a known winner, a tie and a known loser, built by editing
the skill between real `run`s on the echo executor (whose answer is the skill text, so which
facts the skill holds decides which evals pass)."""

from __future__ import annotations

import json
import multiprocessing
import time
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path

import pytest
from cli_runner import cli
from filelock import FileLock

from skillassay.errors import InputError
from skillassay.improve.history import (
    LOCK_FILE,
    EvalRate,
    VersionFacts,
    build_history,
    history_lock,
    load_history,
    record_after_run,
    record_iteration,
)
from skillassay.models.improve import History
from skillassay.run.engine import RunRequest, run_benchmark
from skillassay.store.records import TrialRecord

FACTS = """
The Acme VPN server uses port 4433.
The Acme VPN hostname is vpn.acme.example.
The Acme VPN uses the WireGuard protocol.
The Acme VPN help desk email is netops@acme.example.
Each Acme employee may connect at most 3 devices to the Acme VPN.
The Acme VPN client for Linux is called acmeguard.
"""


def set_body(skill: Path, body: str) -> None:
    md = skill / "SKILL.md"
    head = md.read_text().split("---", 2)
    md.write_text(f"---{head[1]}---\n# Acme VPN\n{body}")


def run(skill: Path, ws: Path) -> Path:
    return run_benchmark(RunRequest(skill_dir=skill, executor="echo", workspace=ws, trials=1)).iteration_dir


def test_progression_won_tie_lost(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    set_body(example_skill, "Answer questions about the VPN.\n")  # v0: knows nothing
    run(example_skill, ws)
    set_body(example_skill, FACTS)  # v1: all six facts -> six evals go 0 -> 1
    run(example_skill, ws)
    set_body(example_skill, FACTS + "\nBe concise.\n")  # v2: same facts, cosmetic edit
    run(example_skill, ws)
    set_body(example_skill, "Ask the help desk.\n")  # v3: facts gone again
    it4 = run(example_skill, ws)

    data = json.loads((ws / "history.json").read_text())
    History.model_validate(data)
    entries = data["iterations"]
    assert [e["version"] for e in entries] == ["v0", "v1", "v2", "v3"]
    assert [e["grading_result"] for e in entries] == ["baseline", "won", "tie", "lost"]
    # Everything after v1 is derived from (and compared with) the best so far, v1.
    assert [e["parent"] for e in entries] == [None, "v0", "v1", "v1"]
    assert [e["comparison"]["against"] for e in entries[1:]] == ["v0", "v1", "v1"]
    assert data["current_best"] == "v1"
    assert [e["is_current_best"] for e in entries] == [False, True, False, False]
    # Only the spec's keys are required; the evidence rides along as extra fields.
    won = entries[1]["comparison"]
    assert won["p_value"] <= 0.05 and won["interval"][0] > 0 and won["n_paired_evals"] == 8
    assert entries[3]["comparison"]["interval"][1] < 0
    assert entries[2]["comparison"]["mean_difference"] == 0
    assert entries[1]["expectation_pass_rate"] > entries[0]["expectation_pass_rate"]
    assert data["skill_name"] == "acme-vpn"

    # Recording an iteration again replaces its entry instead of appending a fifth.
    again = record_iteration(ws, it4)
    assert again.model_dump(mode="json") == History.model_validate(data).model_dump(mode="json")

    result = cli(["history", str(ws)])
    assert result.exit_code == 0, result.output
    assert "current best: v1 (iteration-2): better than v0" in result.output
    assert "1 tie, 1 lost" in result.output


def rates(*values: float) -> tuple[EvalRate, ...]:
    return tuple(EvalRate(i, f"e{i}", v, 3) for i, v in enumerate(values, 1))


def facts(n: int, *values: float) -> VersionFacts:
    return VersionFacts(n, f"iteration-{n}", None, "s", None, None, rates(*values))


def test_an_improvement_on_too_few_evals_is_a_tie() -> None:
    """Every one of 5 evals improved, but 5 sign flips cannot reach p < 0.05 (smallest p is
    1/16): the data cannot tell this from luck, so it does not replace the best."""
    h = build_history([facts(1, 0, 0, 0, 0, 0), facts(2, 1, 1, 1, 1, 1)])
    entry = h.iterations[1]
    assert entry.grading_result == "tie"
    assert h.current_best == "v0"
    assert entry.model_extra["comparison"]["significance_reachable"] is False
    assert "unreachable" in entry.model_extra["comparison"]["reason"]


def test_versions_follow_iteration_order_even_when_recorded_late() -> None:
    h = build_history([facts(3, *[1] * 8), facts(1, *[0] * 8)])
    assert [(e.version, e.model_extra["iteration"], e.grading_result) for e in h.iterations] == [
        ("v0", 1, "baseline"), ("v1", 3, "won")]


def test_a_broken_history_never_breaks_the_run(tmp_path: Path) -> None:
    assert record_after_run(tmp_path, tmp_path / "iteration-1") is None  # no such iteration: logged only


def test_history_record_command(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    it = run(example_skill, ws)
    (ws / "history.json").unlink()
    result = cli(["history", "record", str(it)])
    assert result.exit_code == 0, result.output
    assert json.loads((ws / "history.json").read_text())["current_best"] == "v0"


def counted(n: int, *passes: int) -> VersionFacts:
    """K = 3 trials per eval, with trial pass counts (what the per-eval exact tests use)."""
    per_eval = tuple(EvalRate(i, f"e{i}", c / 3, 3, c) for i, c in enumerate(passes, 1))
    return VersionFacts(n, f"iteration-{n}", None, "s", None, None, per_eval)


def test_clear_per_eval_regressions_lose_even_when_the_suite_test_cannot_reach_significance() -> None:
    """3 of 8 evals go 3/3 -> 0/3, the rest unchanged: only 3 evals differ, so the suite-level
    sign-flip test cannot reach p < 0.05, but the per-eval exact tests (BH, q = 0.10) call the
    three regressions, as `compare` and the gate do; history must agree with them."""
    h = build_history([counted(1, 3, 3, 3, 3, 3, 1, 2, 3), counted(2, 0, 0, 0, 3, 3, 1, 2, 3)])
    entry = h.iterations[1]
    assert entry.model_extra["comparison"]["significance_reachable"] is False
    assert entry.grading_result == "lost"
    assert entry.model_extra["comparison"]["evals_regressed"] == [1, 2, 3]
    assert h.current_best == "v0"
    won = build_history([counted(1, 0, 0, 0, 3, 3, 1, 2, 3), counted(2, 3, 3, 3, 3, 3, 1, 2, 3)])
    assert won.iterations[1].grading_result == "won" and won.current_best == "v1"


def test_a_one_trial_flip_is_still_a_tie() -> None:
    h = build_history([counted(1, 3, 3, 3, 3), counted(2, 2, 3, 3, 3)])
    assert h.iterations[1].grading_result == "tie"


# ------------------------------------------------------------------ concurrent runs

WORKERS, ROUNDS = 4, 6


def trial_records(n: int) -> list[TrialRecord]:
    """Two evals' with-skill trials, expectation rates 0 or 1/2 by n. No trial passes whole, so
    the per-eval exact tests short-circuit and recording stays cheap (the test times the lock)."""
    return [TrialRecord(e, f"e{e}", "with_skill", 1, "ok", False, (n + e) % 2, 2) for e in (1, 2)]


def hammer(workspace: str, worker: int, start: Barrier) -> None:
    """One OS process recording its own iterations back to back, as a finishing `run` does."""
    ws = Path(workspace)
    start.wait()
    for k in range(ROUNDS):
        n = 1 + worker + k * WORKERS
        record_iteration(ws, ws / f"iteration-{n}", records=trial_records(n))


def read_until(workspace: str, start: Barrier, stop: Event) -> None:
    """Parse history.json as fast as possible while the writers run: it must never be torn."""
    path = Path(workspace) / "history.json"
    start.wait()
    while not stop.is_set():
        if path.exists():
            History.model_validate(json.loads(path.read_text(encoding="utf-8")))


def test_concurrent_runs_lose_no_history_entry(tmp_path: Path) -> None:
    """Several processes (a CI matrix on one workspace) record at once: without the lock they
    read the same old file and the last write drops the others' entries."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")  # fork: no re-import, fast
    ws = tmp_path / "acme-vpn-workspace"
    ws.mkdir()
    start, stop = ctx.Barrier(WORKERS + 1), ctx.Event()
    writers = [ctx.Process(target=hammer, args=(str(ws), w, start)) for w in range(WORKERS)]
    reader = ctx.Process(target=read_until, args=(str(ws), start, stop))
    for p in [*writers, reader]:
        p.start()
    deadline = time.monotonic() + 30
    for p in writers:
        p.join(max(0.1, deadline - time.monotonic()))
    stop.set()
    reader.join(10)
    for p in [*writers, reader]:
        if p.is_alive():
            p.kill()
    assert [p.exitcode for p in writers] == [0] * WORKERS, "a writer failed or hung (traceback above)"
    assert reader.exitcode == 0, "history.json was unreadable while being written"

    history = load_history(ws)
    assert history is not None
    expected = list(range(1, WORKERS * ROUNDS + 1))
    recorded = sorted(e.model_extra["iteration"] for e in history.iterations)
    assert recorded == expected, f"lost entries for iterations {sorted(set(expected) - set(recorded))}"
    assert [e.version for e in history.iterations] == [f"v{i}" for i in range(WORKERS * ROUNDS)]
    # Only history.json and its lock (kept on Unix, removed on Windows): no temp file left behind.
    assert {p.name for p in ws.iterdir()} <= {"history.json", LOCK_FILE}


def test_a_stuck_lock_holder_is_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    """Another holder (here a second lock object: its own descriptor, so flock blocks us)."""
    with (FileLock(str(tmp_path / LOCK_FILE)), pytest.raises(InputError, match="still locked after 0.2 s"),
          history_lock(tmp_path, timeout=0.2)):
        pass
    with history_lock(tmp_path, timeout=0.2):  # released: free again
        pass
