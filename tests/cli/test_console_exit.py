"""The console script ends without the interpreter's teardown (console.exit_without_teardown),
and must still end exactly as `sys.exit` would: the same status, every byte of output
delivered, atexit handlers run, and a thread still at work joined. Real processes throughout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import repo_paths

from skillassay.cli.console import exit_status
from skillassay.errors import EXIT_BAD_INPUT

SRC = repo_paths.REPO / "src"


def _python(code: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})


def _script(prelude: str, argv: list[str]) -> str:
    """A process that runs `prelude`, then the console script's function with `argv`."""
    return (f"import sys\n{prelude}\nsys.argv = ['skillassay', *{argv!r}]\n"
            "from skillassay.cli.main import script\nscript()\n")


def test_teardown_is_skipped(tmp_path: Path) -> None:
    """A module-level object's finaliser runs only in the interpreter's teardown: the console
    script ends before it (the 0.2-0.3 s this saves is benchmarks/overhead.py's to show)."""
    marker = tmp_path / "finalised"
    prelude = (f"class Late:\n    def __del__(self, _open=open):\n        _open({str(marker)!r}, 'w').close()\n"
               "late = Late()")
    plain = _python(prelude + "\nimport sys\nsys.exit(0)\n", tmp_path)
    assert plain.returncode == 0 and marker.exists()  # the probe works: teardown runs the finaliser
    marker.unlink()
    proc = _python(_script(prelude, ["--help"]), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout
    assert not marker.exists()


def test_atexit_handlers_run_once_and_status_is_kept(tmp_path: Path) -> None:
    log = tmp_path / "atexit.log"
    prelude = f"import atexit\natexit.register(lambda: open({str(log)!r}, 'a').write('ran\\n'))"
    proc = _python(_script(prelude, ["validate", str(tmp_path / "missing.json")]), tmp_path)
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert "missing.json" in proc.stderr
    assert log.read_text() == "ran\n"


def test_a_thread_still_working_is_joined_before_the_atexit_handlers(tmp_path: Path) -> None:
    """As the normal exit does: the thread finishes, then the handlers close what it used."""
    done, seen = tmp_path / "thread-done", tmp_path / "atexit-saw"
    prelude = ("import atexit, os, threading, time\n"
               f"atexit.register(lambda: open({str(seen)!r}, 'w').write(str(os.path.exists({str(done)!r}))))\n"
               f"def work():\n    time.sleep(0.5)\n    open({str(done)!r}, 'w').close()\n"
               "threading.Thread(target=work).start()")
    proc = _python(_script(prelude, ["--help"]), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert done.exists()
    assert seen.read_text() == "True"


def test_large_output_through_a_pipe_is_delivered_whole(tmp_path: Path) -> None:
    """`skillassay schema` prints tens of kilobytes: all of it reaches the reader, as JSON."""
    proc = subprocess.run([sys.executable, "-m", "skillassay", "schema"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) > 10_000
    json.loads(proc.stdout)


@pytest.mark.parametrize(("code", "status", "printed"), [(None, 0, ""), (0, 0, ""), (3, 3, ""), (70, 70, ""),
                                                          ("stopped: no evals", 1, "stopped: no evals\n")])
def test_exit_status_matches_sys_exit(code: str | int | None, status: int, printed: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(code) == status
    assert capsys.readouterr().err == printed


@pytest.mark.parametrize(("argv", "status"), [(["validate", "missing.json"], EXIT_BAD_INPUT), (["executors"], 0)])
@pytest.mark.slow
def test_the_collector_is_paused_for_start_up_and_back_on_for_the_command(tmp_path: Path, argv: list[str],
                                                                          status: int) -> None:
    """The console script turns the collector off while it imports and on (start-up frozen)
    when a command begins: a command's work is never left without cyclic garbage collection."""
    seen = tmp_path / "gc.json"
    prelude = ("import atexit, gc, json\n"
               f"atexit.register(lambda: open({str(seen)!r}, 'w').write(json.dumps("
               "[gc.isenabled(), gc.get_freeze_count()])))")
    proc = _python(_script(prelude, argv), tmp_path)
    assert proc.returncode == status, proc.stderr
    enabled, frozen = json.loads(seen.read_text())
    assert enabled is True
    assert frozen > 10_000  # what start-up built: no later collection traverses it


def test_in_process_the_collector_is_left_as_the_caller_set_it() -> None:
    """Only the console script pauses the collector; a caller in-process (a test, a notebook)
    that turned it off itself keeps it off."""
    import gc

    from skillassay.cli.console import end_startup

    gc.disable()
    try:
        end_startup(("json",))
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
