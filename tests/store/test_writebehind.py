"""The write-behind process (store/writebehind.py) with real processes and real files: what it
writes is what direct writing writes, checks that open the run folder find its files, a file it
cannot write stops the run with that file's name, and a run killed with it loses no committed
trial (tests/run/test_engine.py kills a run and its writer)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import cli

from skillassay.store.writebehind import MIN_TRIALS, WriteBehind, WriteBehindError, trial_file_sink

# What differs between two runs of the same trials: clock readings and durations.
_VOLATILE = [(re.compile(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z'), b"<time>"),
             (re.compile(rb'"(\w*duration\w*|\w*seconds\w*)": [-0-9.e]+'), rb'"\1": <n>')]


def run_echo(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    result = cli(["run", str(skill), "--executor", "echo", "--workspace", str(ws), *extra])
    return result.exit_code, result.output


def trial_files(it: Path) -> dict[str, bytes]:
    """Every file of every trial (and every run folder, as an entry), clock readings masked."""
    out: dict[str, bytes] = {}
    for path in sorted(it.glob("eval-*/*/run-*/**/*")):
        rel = str(path.relative_to(it))
        if path.is_dir():
            out[rel + "/"] = b""
            continue
        data = path.read_bytes()
        for pattern, repl in _VOLATILE:
            data = pattern.sub(repl, data)
        out[rel] = data
    return out


def test_write_behind_writes_exactly_what_direct_writing_does(example_skill: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Same trials (same seeds), once written in this process and once by the child: the same
    folders, the same files, the same bytes apart from clock readings."""
    seen = {}
    for mode in ("0", "1"):
        monkeypatch.setenv("SKILLASSAY_WRITE_BEHIND", mode)
        ws = tmp_path / f"ws-{mode}"
        code, out = run_echo(example_skill, ws, "--trials", "2")
        assert code in (0, 1, 3), out
        seen[mode] = trial_files(ws / "iteration-1")
    assert len([k for k in seen["1"] if k.endswith("grading.json")]) == 32
    assert seen["0"].keys() == seen["1"].keys()
    assert [k for k in seen["0"] if seen["0"][k] != seen["1"][k]] == []


def test_checks_that_open_the_run_folder_find_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """file_contains reads outputs/answer.md from disk: with the write-behind child the trial's
    files are written before such a check runs (a missing sync would fail every trial here)."""
    skill = tmp_path / "disk-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: disk-skill\ndescription: Disk.\n---\nSay 4433.\n")
    evals = [{"id": i, "prompt": f"Port {i}: 4433.",
              "expectations": [{"type": "file_contains", "path": "answer.md", "value": "4433"},
                               {"type": "contains", "value": "4433"}]} for i in (1, 2, 3)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "disk-skill", "evals": evals}))
    monkeypatch.setenv("SKILLASSAY_WRITE_BEHIND", "1")
    code, out = run_echo(skill, tmp_path / "ws", "--trials", "3")
    assert code in (0, 1, 3), out
    gradings = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "iteration-1").glob("eval-*/*/run-*/grading.json")]
    assert len(gradings) == 18
    verdicts = [e["passed"] for g in gradings for e in g["expectations"] if "answer.md" in e["text"]]
    assert verdicts == [True] * 18, [e for g in gradings for e in g["expectations"]]


def test_a_file_the_child_cannot_write_is_an_error_that_names_it(tmp_path: Path) -> None:
    """A write that fails (here a folder that is a file) stops the child; the run is told at the
    next hand-over, the file's path in the message, and the files before it are written."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a run folder should be")
    good = tmp_path / "good.json"
    sink = WriteBehind()
    sink.submit([(str(good), b"{}", True)])
    sink.submit([(f"{blocker}/run-1/grading.json", b"{}", True)])
    with pytest.raises(WriteBehindError, match="not-a-folder/run-1"):
        sink.sync()
    assert good.read_bytes() == b"{}"
    with pytest.raises(WriteBehindError, match="not-a-folder/run-1"):
        sink.submit([(str(tmp_path / "later.json"), b"{}", False)])
    with pytest.raises(WriteBehindError):
        sink.close()


def test_leaving_the_sink_writes_everything_sent_and_small_runs_write_directly(tmp_path: Path) -> None:
    """close() returns once the child has written every file (grading.json atomically, no temp
    name left); below MIN_TRIALS no child is started."""
    with trial_file_sink(MIN_TRIALS) as sink:
        assert isinstance(sink, WriteBehind)
        for i in range(500):
            sink.submit([(f"{tmp_path}/r{i}/a.txt", b"x" * 3000, False), (f"{tmp_path}/r{i}/g.json", b"{}", True)])
    assert len(list(tmp_path.glob("r*/a.txt"))) == len(list(tmp_path.glob("r*/g.json"))) == 500
    assert not list(tmp_path.rglob("*.tmp"))
    with trial_file_sink(MIN_TRIALS - 1) as sink:
        assert not isinstance(sink, WriteBehind)
