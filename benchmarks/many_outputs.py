"""What an agent that leaves a huge number of files costs skillassay, as a user feels it: a whole
`skillassay run` process (benchmarks/wholeproc.py) whose one trial's agent (the `command`
executor running Python) writes FILES empty files into its work folder, then `view --static` on
that iteration (its time budget must hold whatever the run holds). The agent's own time is timed
apart (the same script writing into a scratch folder), and the `run` process reports its own
CPU time and peak memory at exit apart from its children's (the agents, the chart drawing): the
tool's share is its own process, whatever the agents' file writing costs on a loaded machine.

    python benchmarks/many_outputs.py [--files N] [--dir D] [--profile]

--profile: also run `run` once in-process under cProfile and print the 25 costliest calls (where
the tool's time goes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholeproc import load, ours_env, run_once, skillassay_cmd, with_bytecode_cache  # noqa: E402

AGENT = ("import os, sys\n"
         "n = int(sys.argv[1])\n"
         "for i in range(n):\n"
         "    open(f'f{i:07d}.txt', 'w').close()\n"
         "print('port 4433')\n")


def make_skill(root: Path) -> Path:
    skill = root / "many-files"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: many-files\ndescription: Writes many files. Use when asked to.\n"
                                    "---\nWrite the files, then give the port: 4433.\n")
    evals = [{"id": 1, "name": "many", "prompt": "Write the files.", "expectations": [{"type": "contains", "value": "4433"}]}]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "many-files", "evals": evals}))
    return skill


def reporting_own_usage(cmd: list[str], into: Path) -> list[str]:
    """skillassay_cmd's `-c` program, writing at exit the process's own CPU seconds and peak RSS
    and its waited-for children's CPU seconds to `into` (wait4 from outside sums the tree)."""
    probe = ("import atexit, resource, sys\n"
             "def _own():\n"
             "    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             f"    open({str(into)!r}, 'w').write(f'{{me.ru_utime + me.ru_stime}} {{me.ru_maxrss}} "
             "{kids.ru_utime + kids.ru_stime}')\n"
             "atexit.register(_own)\n")
    return [cmd[0], "-c", probe + cmd[2], *cmd[3:]]


def run_args(skill: Path, ws: Path, agent: Path, files: int) -> list[str]:
    argv = [sys.executable, "-S", str(agent), str(files)]
    return ["run", str(skill), "--executor", "command", "-o", "argv=" + json.dumps(argv), "--trials", "1",
            "--workspace", str(ws), "--sandbox", "none", "--fail-fast", "0"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="skillassay-many-"))
    root.mkdir(parents=True, exist_ok=True)
    agent = root / "agent.py"
    agent.write_text(AGENT)
    skill = make_skill(root / "skills")
    env = with_bytecode_cache(ours_env(), root / "pycache")
    print(f"{args.files:,} files per trial; {load()}", flush=True)

    scratch = root / "agent-alone"
    scratch.mkdir()
    agent_alone = run_once([sys.executable, "-S", str(agent), str(args.files)], cwd=scratch)
    alone = agent_alone.seconds
    shutil.rmtree(scratch)
    print(f"the agent alone (writing the files)   {alone:7.2f} s  CPU {agent_alone.cpu_seconds:.2f} s", flush=True)

    ws = root / "ws"
    own_file = root / "own-usage.txt"
    run = run_once(reporting_own_usage(skillassay_cmd(*run_args(skill, ws, agent, args.files)), own_file), env)
    own_cpu, own_kb, kids_cpu = (float(x) for x in own_file.read_text().split())
    print(f"skillassay run (1 trial each arm)     {run.seconds:7.2f} s  CPU {run.cpu_seconds:.2f} s  "
          f"peak RSS {run.peak_rss_mb:.0f} MB  (2 trials: the agents' share about {2 * alone:.1f} s, "
          f"CPU {2 * agent_alone.cpu_seconds:.2f} s)", flush=True)
    print(f"  of which skillassay's own process   CPU {own_cpu:.2f} s  peak RSS {own_kb / 1024:.0f} MB; "
          f"its children (the agents, the chart drawing) CPU {kids_cpu:.2f} s", flush=True)
    page = root / "page.html"
    view = run_once(skillassay_cmd("view", str(ws / "iteration-1"), "--static", str(page)), env)
    print(f"skillassay view --static              {view.seconds:7.2f} s  CPU {view.cpu_seconds:.2f} s  "
          f"peak RSS {view.peak_rss_mb:.0f} MB  page {page.stat().st_size / 1e6:.1f} MB; {load()}", flush=True)

    if args.profile:
        import cProfile
        import pstats

        shutil.rmtree(ws)
        sys.path.insert(0, env["PYTHONPATH"].split(":")[0])
        from typer.testing import CliRunner

        from skillassay.cli.main import app

        profile = cProfile.Profile()
        profile.enable()
        result = CliRunner().invoke(app, run_args(skill, ws, agent, args.files))
        profile.disable()
        print(f"in-process run under cProfile: exit {result.exit_code}")
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats("skillassay", 25)
        stats.sort_stats("tottime").print_stats(15)
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
