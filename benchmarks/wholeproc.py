"""Timing whole commands from outside, as a user feels them: a fresh interpreter per run
(start-up and imports included), wall time from the parent, and the peak resident memory and
CPU time of the process tree from wait4(2). Shared by aggregate.py and overhead.py."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


@dataclass
class Sample:
    seconds: float
    cpu_seconds: float  # user + system of the process and the workers it waited for
    peak_rss_mb: float  # the largest process of the tree (the command or one of its workers)


@dataclass
class Series:
    label: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def peak_mb(self) -> float:
        return max(s.peak_rss_mb for s in self.samples)

    def line(self) -> str:
        secs = sorted(s.seconds for s in self.samples)
        cpu = statistics.median(s.cpu_seconds for s in self.samples)
        return (f"{self.label:<34} median {self.median:7.3f} s  (min {secs[0]:.3f}, max {secs[-1]:.3f}, "
                f"n={len(secs)}; CPU {cpu:.2f} s)  peak RSS {self.peak_mb:6.1f} MB")


def make_bench_skill(root: Path, name: str, description: str, expectations: list[dict[str, object]],
                     evals: int) -> Path:
    """The benchmarks' skill: `evals` evals asking for the magic number its SKILL.md holds."""
    skill = root / name
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n"
                                    "The magic number is 4433.\n")
    items = [{"id": i, "name": f"e{i}", "prompt": f"Question {i}: what is the magic number?",
              "expectations": expectations} for i in range(1, evals + 1)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": name, "evals": items}))
    return skill


def ours_env() -> dict[str, str]:
    """The worktree's code, whatever is installed: PYTHONPATH=src first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


def with_bytecode_cache(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env` with Python's bytecode cached in `folder`, as an installed package has it (pip
    compiles every module at install). Without it, an environment that sets
    PYTHONDONTWRITEBYTECODE (this VM's does) recompiles all ~80 of the worktree's modules on the
    run path in every process, ~0.2 CPU-s that no installed user pays; the source tree itself
    is left untouched (PYTHONPYCACHEPREFIX)."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(folder)
    return out


def skillassay_cmd(*args: str) -> list[str]:
    """The `skillassay` console script's own two lines, run by this interpreter."""
    return [sys.executable, "-c", "import sys; from skillassay.cli.main import script; sys.exit(script())", *args]


def run_once(cmd: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Sample:
    """One whole process: wall time from fork to reaping, rusage from wait4 (children's
    ru_maxrss is the largest of the process and the descendants it waited for)."""
    t = time.perf_counter()
    proc = subprocess.Popen(list(cmd), env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.decode(errors='replace')[-2000:]}")
    return Sample(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


