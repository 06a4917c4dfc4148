"""The report's PNG charts, drawn in a child process.

matplotlib adds ~45 MB of resident memory to whoever imports it and draws; `run` keeps its
own footprint flat by letting a short-lived child do it (the child's start-up, ~1 s, is what
an in-process import would cost anyway)."""

from __future__ import annotations

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
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no detail"]
        raise RuntimeError(f"chart process exited {proc.returncode}: {tail[0]}")
    return [Path(line) for line in proc.stdout.splitlines() if line.strip()]


def main() -> None:
    from skillassay.report.charts import write_report_charts

    raw = sys.stdin.read()
    for path in write_report_charts(Path(sys.argv[1]), json.loads(raw) if raw.strip() else None):
        print(path)


if __name__ == "__main__":
    main()
