"""What the judge is shown of a run's outputs stays bounded whatever the agent wrote: a 1 GiB
output costs a few kilobytes of reading (peak memory measured in a child process), the prompt
says the file was cut, and a folder of thousands of files is listed up to a stated number with
the rest counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import repo_paths

from skillassay.grade import judge
from skillassay.grade.judge import Caps, JudgeInputs, output_files, render_prompts

SRC = repo_paths.SRC
GIB = 1 << 30


def sparse_text(path: Path, size: int) -> None:
    """A text head and tail around a hole: cheap on disk, but `size` bytes to a whole-file read."""
    with path.open("wb") as fh:
        fh.write(b"HEAD line of the report\n" * 4000)
        fh.seek(size - 96_000)
        fh.write(b"TAIL: the port is 4433.\n" * 4000)


def in_child(code: str, *args: str) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON object, to which its peak RSS is added."""
    wrapper = (code + "\nimport resource, json as _j\n"
               "out['peak_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\nprint(_j.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_1_gib_output_is_read_in_bounded_memory_and_said_to_be_cut(tmp_path: Path) -> None:
    outputs = tmp_path / "run-1" / "outputs"
    outputs.mkdir(parents=True)
    sparse_text(outputs / "report.txt", GIB)
    (outputs / "blob.bin").open("wb").truncate(GIB)  # all NUL bytes: binary
    baseline = in_child("out = {}")
    code = ("import sys, time; from pathlib import Path\n"
            "from skillassay.grade.judge import Caps, gather, render_prompts\n"
            "from skillassay.grade.judge_cache import run_content_hash\n"
            "from skillassay.assertions.base import RunView\n"
            "from skillassay.models import Metrics, Timing\n"
            "run = Path(sys.argv[1]); t = time.perf_counter()\n"
            "view = RunView(final_text='4433', outputs_dir=run / 'outputs', metrics=Metrics(), timing=Timing(), run_dir=run)\n"
            "inputs = gather(view, Caps())\n"
            "system, user = render_prompts(inputs, ['says the port'], Caps())\n"
            "key = run_content_hash(run, 'q')\n"
            "out = {'user': user, 'seconds': time.perf_counter() - t}\n")
    out = in_child(code, str(tmp_path / "run-1"))
    assert out["peak_mb"] - baseline["peak_mb"] < 100, out["peak_mb"]  # a whole-file read costs over 1,000 MB
    assert out["seconds"] < 20
    user = out["user"]
    assert len(user) < 40_000  # Caps().files_total and the rest, not a gigabyte
    assert "HEAD line" in user and "TAIL: the port is 4433." in user  # head and tail both shown
    assert "truncated" in user and "bytes cut" in user  # and the prompt says so
    # each file's heading, then its name inside the prompt's data fence (grade/fence.py)
    assert f"({GIB} bytes, binary BIN, too large to hash, not shown)" in user and "name: blob.bin" in user


def test_thousands_of_output_files_are_listed_up_to_the_cap_and_counted(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for i in range(2_000):
        (outputs / f"f{i:05d}.txt").write_text(f"file {i}\n")
    (outputs / "metrics.json").write_text("{}")  # bookkeeping: never shown, never counted
    files = output_files(outputs, Caps())
    shown = judge.MAX_FILES_SHOWN
    assert len(files) == shown + 1
    assert [f.name for f in files[:2]] == ["f00000.txt", "f00001.txt"]
    assert files[-1].name == f"[{2_000 - shown:,} more files]"
    inputs = JudgeInputs(prompt="q", answer="a", files=files, transcript="", user_notes="")
    _, user = render_prompts(inputs, ["x"], Caps())
    assert f"(0 bytes, not listed: the judge is shown at most {shown} output files)" in user
    assert "name: [1,950 more files]" in user
    assert "f00999.txt" not in user


def test_files_past_the_budget_are_named_not_read(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (outputs / name).write_text(name[0] * 3_000)
    files = output_files(outputs, Caps(file_each=2_000, files_total=3_000))
    assert [len(f.text or "") > 0 for f in files] == [True, True, False]
    assert files[0].note == "excerpt: truncated to 2,000 characters, head and tail"
    assert files[2].note == "not shown: the judge's budget for files is used up"


def test_a_huge_user_notes_file_is_summarised_from_a_bounded_read(tmp_path: Path) -> None:
    outputs = tmp_path / "run" / "outputs"
    outputs.mkdir(parents=True)
    with (outputs / "user_notes.md").open("wb") as fh:
        fh.write(b"## Uncertainties\n- the port may be 4433\n")
        fh.truncate(GIB)
    baseline = in_child("out = {}")
    code = ("import sys; from pathlib import Path\n"
            "from skillassay.grade.grader import Grader, run_view\n"
            "from skillassay.models import Metrics, Timing\n"
            "view = run_view(Path(sys.argv[1]), Metrics(), Timing(), final_text='')\n"
            "notes = Grader.notes_of(view)\n"
            "out = {'uncertainties': notes.uncertainties}\n")
    out = in_child(code, str(tmp_path / "run"))
    assert out["peak_mb"] - baseline["peak_mb"] < 100, out["peak_mb"]
    assert out["uncertainties"][:1] == ["the port may be 4433"]
