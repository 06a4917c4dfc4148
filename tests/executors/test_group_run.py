"""A shell command (a tool call, the `command` agent) runs through the one process-group runner:
its output exactly as printed, and the command's end is its end, even when it leaves a
background child holding the output pipe (the runner ends the group, as it does for agent CLIs)."""

from __future__ import annotations

import time
from pathlib import Path

from process_support import alive

from skillassay.executors.group_run import run_in_group


def test_a_background_child_does_not_turn_a_finished_command_into_a_timeout(tmp_path: Path) -> None:
    started = time.monotonic()
    code, out, err = run_in_group(["bash", "-c", "sleep 60 & echo $!; echo done"], tmp_path, timeout=20)
    assert (code, err) == (0, ""), (code, out, err)
    assert time.monotonic() - started < 10
    child, last = out.split()
    assert last == "done"
    deadline = time.monotonic() + 5
    while alive(int(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(int(child))


def test_output_is_kept_exactly_and_a_timeout_keeps_what_was_printed(tmp_path: Path) -> None:
    assert run_in_group(["printf", "a\\r\\nb\\xff"], tmp_path, timeout=10) == (0, "a\r\nb\ufffd", "")
    code, out, _ = run_in_group(["bash", "-c", "echo partial; sleep 30"], tmp_path, timeout=1)
    assert (code, out) == (None, "partial\n")
