"""How fast the review viewer opens a workspace of 5,000 runs (100 evals x 2 configurations x
25 runs) in served mode: index build at server start, the index API, and the page load in
headless Chromium until the first run is on screen. The goal is well under 3 s.

    python benchmarks/viewer_open.py [--runs-per-arm 25] [--evals 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from skillassay.store.jsonio import write_json
from skillassay.viewer.server import ViewerServer, start_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
CONFIGS = ("with_skill", "without_skill")


def write_run(run_dir: Path, eval_id: int, config: str, k: int, passed: bool) -> None:
    """The files the engine writes for one trial, small but real."""
    out = run_dir / "outputs"
    out.mkdir(parents=True)
    answer = f"# Answer {eval_id}/{config}/{k}\n\nThe port is {'4433' if passed else 'unknown'}.\n"
    (out / "answer.md").write_text(answer)
    write_json(out / "metrics.json", {"total_tool_calls": 0, "total_steps": 1, "status": "ok", "output_chars": len(answer)})
    write_json(run_dir / "timing.json", {"total_tokens": 180, "total_duration_seconds": 1.5})
    write_json(run_dir / "grading.json", {
        "expectations": [{"text": "The output contains '4433'", "passed": passed, "evidence": "synthetic"}],
        "summary": {"passed": int(passed), "failed": int(not passed), "total": 1, "pass_rate": float(passed)}})
    (run_dir / "transcript.md").write_text(f"# Transcript\n\n{answer}")


def build_workspace(root: Path, n_evals: int, runs_per_arm: int) -> Path:
    it = root / "iteration-1"
    runs, per_eval = [], []
    for e in range(1, n_evals + 1):
        eval_dir = it / f"eval-{e}-case-{e}"
        eval_dir.mkdir(parents=True)
        write_json(eval_dir / "eval_metadata.json", {"eval_id": e, "eval_name": f"case-{e}", "prompt": f"Question {e}?"})
        rates = {}
        for config in CONFIGS:
            passes = 0
            for k in range(1, runs_per_arm + 1):
                passed = (e + k) % (2 if config == "with_skill" else 5) == 0
                passes += passed
                write_run(eval_dir / config / f"run-{k}", e, config, k, passed)
                runs.append({"eval_id": e, "eval_name": f"case-{e}", "configuration": config, "run_number": k,
                             "result": {"pass_rate": float(passed), "passed": int(passed), "failed": int(not passed),
                                        "total": 1, "time_seconds": 1.5, "tokens": 180, "errors": 0}})
            rates[config] = passes / runs_per_arm
        per_eval.append({"eval_id": e, "eval_name": f"case-{e}", "trials": runs_per_arm,
                         "with_skill": {"pass_rate": rates["with_skill"], "trials_completed": runs_per_arm},
                         "baseline": {"pass_rate": rates["without_skill"], "trials_completed": runs_per_arm}})
    write_json(it / "benchmark.json", {
        "metadata": {"skill_name": "synthetic", "runs_per_configuration": runs_per_arm}, "runs": runs,
        "skill_name": "synthetic", "iteration": 1,
        "summary": {"total_evals": n_evals, "with_skill": {"pass_rate": 0.5}, "baseline": {"pass_rate": 0.2}},
        "per_eval": per_eval})
    return it


def time_page_loads(server: ViewerServer, repeats: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeats):
            context = browser.new_context()  # a cold page each time
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']", timeout=30000)
            times.append(time.perf_counter() - t0)
            context.close()
        browser.close()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=100)
    ap.add_argument("--runs-per-arm", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="viewer-open-"))
    t0 = time.perf_counter()
    it = build_workspace(root, args.evals, args.runs_per_arm)
    n_runs = args.evals * len(CONFIGS) * args.runs_per_arm
    print(f"workspace: {n_runs} runs written in {time.perf_counter() - t0:.1f} s at {it}")

    t0 = time.perf_counter()
    server, _ = start_server(it)
    start = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        body = urllib.request.urlopen(server.url + "api/index").read()
        api = time.perf_counter() - t0
        assert len(json.loads(body)["runs"]) == n_runs
        print(f"server start (index of {n_runs} runs, no output read): {start * 1000:.0f} ms")
        print(f"GET /api/index: {api * 1000:.0f} ms, {len(body) / 1e6:.2f} MB")
        loads = time_page_loads(server, args.repeats)
        print(f"page load to first run shown, headless Chromium, {args.repeats} cold loads: "
              f"median {statistics.median(loads) * 1000:.0f} ms, max {max(loads) * 1000:.0f} ms")
        print(f"open time (server start + median page load): {(start + statistics.median(loads)):.2f} s (goal < 3 s)")
        t0 = time.perf_counter()
        urllib.request.urlopen(server.url + "api/benchmark").read()
        print(f"GET /api/benchmark (first, draws the charts): {(time.perf_counter() - t0) * 1000:.0f} ms")
    finally:
        server.shutdown()
        server.server_close()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
