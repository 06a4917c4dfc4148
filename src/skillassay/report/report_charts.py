"""The report's PNG charts, drawn in a child process.

matplotlib adds ~45 MB of resident memory to whoever imports it and draws, and about a CPU
second to import; `run` keeps its own footprint flat by letting a short-lived child do it.
`skillassay report` waits for the child (draw_report_charts). `run` does not: it learns from
the plain data which charts report.md links (report_chart_names, no matplotlib), starts the
child in the background (start_report_charts) and exits, so a run's start-up and end do not
carry the import; the PNGs appear in <iteration>/charts/ about a second later, each written
atomically. A background drawing that fails leaves charts/chart_error.txt saying why, and
`skillassay report ITERATION` draws them again in the foreground."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ERROR_FILE = "chart_error.txt"


def draw_report_charts(iteration_dir: Path, data: dict[str, Any] | None = None, timeout: float = 120) -> list[Path]:
    """Paths of the PNGs written under <iteration>/charts/; raises RuntimeError on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "skillassay.report.report_charts", str(iteration_dir)],
        input=json.dumps(data) if data is not None else "", capture_output=True, text=True, timeout=timeout,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no detail"]
        raise RuntimeError(f"chart process exited {proc.returncode}: {tail[0]}")
    return [Path(line) for line in proc.stdout.splitlines() if line.strip()]


def start_report_charts(iteration_dir: Path, data: dict[str, Any] | None = None) -> list[Path]:
    """The PNGs report.md links, drawn by a detached child this process does not wait for.
    The data goes through a temp file (the child deletes it once read): a pipe would hold this
    process until the child had started and read it. The child's output goes nowhere (it must
    not keep a caller's pipe open after we exit); its failures go to charts/chart_error.txt."""
    from skillassay.report.charts import load_benchmark, report_chart_names

    names = report_chart_names(iteration_dir, data if data is not None else load_benchmark(iteration_dir))
    if not names:
        return []
    out_dir = iteration_dir / "charts"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out_dir / ERROR_FILE)  # an earlier drawing's; this one reports its own
    fd, data_path = tempfile.mkstemp(prefix="skillassay-charts-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    try:
        subprocess.Popen(  # noqa: S603 - our own module, run by this interpreter
            [sys.executable, "-m", "skillassay.report.report_charts", str(iteration_dir), "--background", data_path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError:
        os.unlink(data_path)
        raise
    return [out_dir / n for n in names]


def background_main(iteration_dir: Path, data_path: str) -> None:
    """The detached child: draw, or leave the reason where the charts would be."""
    from skillassay.store.jsonio import atomic_write_text

    try:
        try:
            with open(data_path, encoding="utf-8") as fh:
                raw = fh.read()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(data_path)
        from skillassay.report.charts import write_report_charts

        write_report_charts(iteration_dir, json.loads(raw) if raw.strip() else None)
    except Exception as exc:  # noqa: BLE001 - nobody is waiting to see a traceback
        with contextlib.suppress(OSError):
            atomic_write_text(iteration_dir / "charts" / ERROR_FILE,
                              f"charts could not be drawn: {type(exc).__name__}: {exc}\n"
                              f"(`skillassay report {iteration_dir}` draws them again)\n")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[2] == "--background":
        background_main(Path(sys.argv[1]), sys.argv[3])
        return
    from skillassay.report.charts import write_report_charts

    raw = sys.stdin.read()
    for path in write_report_charts(Path(sys.argv[1]), json.loads(raw) if raw.strip() else None):
        print(path)


if __name__ == "__main__":
    main()
