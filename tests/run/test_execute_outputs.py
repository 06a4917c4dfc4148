"""What the trial loop finds in outputs/ after the agent (run/execute.tidy_outputs): the files
created or changed with their sizes, the agent folders removed, in one walk of the folder (a
second listing of 200,000 files was most of the tool's own time in such a run: issue 40)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skillassay.run.execute import snapshot, tidy_outputs


def _outputs(tmp_path: Path) -> Path:
    out = tmp_path / "outputs"
    (out / "sub" / "deeper").mkdir(parents=True)
    (out / "answer.txt").write_text("hello")
    (out / "sub" / "a.csv").write_text("1,2\n")
    (out / "sub" / "deeper" / "b.bin").write_bytes(b"\0" * 10)
    (out / ".claude" / "skills" / "x").mkdir(parents=True)
    (out / ".claude" / "skills" / "x" / "SKILL.md").write_text("installed for discovery")
    (out / "sub" / ".agents").mkdir()  # only the top-level agent folders are the executor's
    (out / "sub" / ".agents" / "kept.txt").write_text("k")
    (tmp_path / "elsewhere").mkdir()
    (out / "link-to-dir").symlink_to(tmp_path / "elsewhere")
    return out


def test_created_files_sizes_and_agent_folders_removed(tmp_path: Path) -> None:
    out = _outputs(tmp_path)
    (out / "input.txt").write_text("given")
    before = snapshot(out)
    (out / "input.txt").touch()  # unchanged content, same mtime below: dropped as an input copy
    os.utime(out / "input.txt", ns=(before["input.txt"][1], before["input.txt"][1]))
    found = tidy_outputs(out, {"input.txt": before["input.txt"]})
    assert found == {"answer.txt": (5, found["answer.txt"][1]), "sub/a.csv": (4, found["sub/a.csv"][1]),
                     "sub/deeper/b.bin": (10, found["sub/deeper/b.bin"][1])}
    assert list(found) == sorted(found)
    assert not (out / ".claude").exists() and not (out / "input.txt").exists()
    assert (out / "sub" / ".agents" / "kept.txt").is_file() and (out / "link-to-dir").is_symlink()


def test_outputs_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _outputs(tmp_path)
    real = os.scandir
    listed: list[str] = []

    def counting(path: Any) -> Any:
        if not isinstance(path, int):  # shutil.rmtree lists by file descriptor
            listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    tidy_outputs(out, {})
    monkeypatch.undo()
    tops = [p for p in listed if Path(p) == out]
    assert len(tops) == 1, f"outputs/ was listed {len(tops)} times: {listed}"
    assert not any(".claude" in p for p in listed)  # the installed skill is removed, not walked
