"""The report's PNG charts, drawn in a child process.

matplotlib adds ~45 MB of resident memory to whoever imports it and draws, and about a CPU
second to import; `run` keeps its own footprint flat by letting a short-lived child do it.
`skillassay report` starts the child and waits for it (draw_report_charts). `run` starts its
child before the trials (ChartDrawer), so the import happens while they run, and at the end
hands it the data and waits for the drawing: the charts are on disk when `run` returns.

Not a detached child that outlives the command: that one wrote charts/*.png after `run` had
returned, so a workspace deleted right after the run came back as a phantom iteration-1/charts/
(and the next run started iteration 2). Nothing writes into a workspace after the command that
owns it has returned (issue 40)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def draw_report_charts(iteration_dir: Path, data: dict[str, Any] | None = None, timeout: float = 120) -> list[Path]:
    """Paths of the PNGs written under <iteration>/charts/; raises RuntimeError on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "skillassay.report.report_charts", str(iteration_dir)],
        input=json.dumps(data) if data is not None else "", capture_output=True, text=True, timeout=timeout,
    )
    return _drawn(proc.returncode, proc.stdout, proc.stderr)


def _drawn(returncode: int | None, stdout: str, stderr: str) -> list[Path]:
    if returncode != 0:
        tail = (stderr or "").strip().splitlines()[-1:] or ["no detail"]
        raise RuntimeError(f"chart process exited {returncode}: {tail[0]}")
    return [Path(line) for line in stdout.splitlines() if line.strip()]


class ChartDrawer:
    """A chart process started early: it imports matplotlib at once, then waits for one JSON
    document on its input ({"iteration": path, "data": benchmark without runs}). `draw` sends it
    and waits for the PNGs; `close` without a draw ends it having written nothing (a run that
    stopped before its report). Either way the child is gone when the caller returns."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillassay.report.report_charts", "--wait"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", close_fds=True)

    def draw(self, iteration_dir: Path, data: dict[str, Any] | None, timeout: float = 120) -> list[Path]:
        """Paths of the PNGs written under <iteration>/charts/; raises RuntimeError on failure."""
        document = json.dumps({"iteration": str(iteration_dir), "data": data}) if isinstance(data, dict) else str(data)
        try:
            out, err = self.proc.communicate(document, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            raise RuntimeError(f"chart process took more than {timeout:g}s") from None
        except (BrokenPipeError, ValueError) as exc:  # it died early (import failed): its stderr says why
            out, err = "", f"{type(exc).__name__}: {exc}"
            self.proc.wait()
        return _drawn(self.proc.returncode, out, err)

    def close(self) -> None:
        """Without a draw the child has written nothing (it writes only once sent the data):
        killed, not waited for, so a stopped run is not held by matplotlib's import."""
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.communicate(timeout=10)


def wait_main() -> int:
    """The child of ChartDrawer: import first (that is the slow part), then draw what it is sent."""
    from skillassay.report.charts import write_report_charts

    raw = sys.stdin.read()
    if not raw.strip():
        return 0
    try:
        request = json.loads(raw)
        iteration, data = Path(request["iteration"]), request["data"]
    except (ValueError, KeyError, TypeError) as exc:
        print(f"not a chart request: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    for path in write_report_charts(iteration, data):
        print(path)
    return 0


def main() -> None:
    if sys.argv[1:] == ["--wait"]:
        sys.exit(wait_main())
    from skillassay.report.charts import write_report_charts

    raw = sys.stdin.read()
    for path in write_report_charts(Path(sys.argv[1]), json.loads(raw) if raw.strip() else None):
        print(path)


if __name__ == "__main__":
    main()
