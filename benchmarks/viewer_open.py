"""How fast the review viewer opens a workspace of 5,000 runs (100 evals x 2 configurations x
25 runs) in served mode: index build at server start, the index API, and the page load in
headless Chromium until the first run is on screen. The goal is well under 3 s.

With --crowd N, N readers at once (loopback, each its own connection, released together):
every tab's requests (the page, /api/index, a run) counted as answered, reset or failed, with
the median and 95th percentile latency. Issue 40's goal: 200 at once on the 20,000-run
iteration, 0 resets and p95 under 1 s (the old listen backlog of 5 reset them).

With --static, also `skillassay view --static` (in a child process: wall time, peak memory,
page size); with --answer-kb, answers (and transcripts) of that size. The big-workspace goals
(issue 15): 20,000 runs of 50 KB answers give a static page in under 60 s and 1 GB, and the
served /api/benchmark answers in under 1 s.

    python benchmarks/viewer_open.py [--runs-per-arm 25] [--evals 100] [--keep DIR]
    python benchmarks/viewer_open.py --runs-per-arm 100 --answer-kb 50 --static --no-browser
    python benchmarks/viewer_open.py --runs-per-arm 100 --no-browser --crowd 200

The crowd is measured twice: against the server in this process (its threads share the GIL
with the 200 readers'), then against a real `skillassay view` process.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skillassay.store.jsonio import write_json
from skillassay.viewer.server import ViewerServer, start_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
CONFIGS = ("with_skill", "without_skill")


def write_run(run_dir: Path, eval_id: int, config: str, k: int, passed: bool, answer_kb: int = 0) -> None:
    """The files the engine writes for one trial, small but real (answer_kb: pad the answer with
    markdown paragraphs to that size, as a long agent answer would be)."""
    out = run_dir / "outputs"
    out.mkdir(parents=True)
    answer = f"# Answer {eval_id}/{config}/{k}\n\nThe port is {'4433' if passed else 'unknown'}.\n"
    para = "The **client** connects to `vpn.acme.example` on port 4433 and retries with backoff.\n\n"
    answer += para * (answer_kb * 1024 // len(para))
    (out / "answer.md").write_text(answer)
    write_json(out / "metrics.json", {"total_tool_calls": 0, "total_steps": 1, "status": "ok", "output_chars": len(answer)})
    write_json(run_dir / "timing.json", {"total_tokens": 180, "total_duration_seconds": 1.5})
    write_json(run_dir / "grading.json", {
        "expectations": [{"text": "The output contains '4433'", "passed": passed, "evidence": "synthetic"}],
        "summary": {"passed": int(passed), "failed": int(not passed), "total": 1, "pass_rate": float(passed)}})
    (run_dir / "transcript.md").write_text(f"# Transcript\n\n{answer}")


def build_workspace(root: Path, n_evals: int, runs_per_arm: int, answer_kb: int = 0) -> Path:
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
                write_run(eval_dir / config / f"run-{k}", e, config, k, passed, answer_kb)
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


def crowd(server: Any, n: int, run_ids: list[str]) -> None:
    """n readers released at once, each on its own connection: the page, the index or a run.
    `server`: anything with the port it listens on (the in-process server, or a Served process)."""
    paths = ["/", "/api/index"] + [f"/api/run?id={quote(r, safe='')}" for r in run_ids]
    gate = threading.Barrier(n)
    results: list[tuple[str, float]] = [("failed", 0.0)] * n

    def reader(i: int) -> None:
        path = paths[i % len(paths)]
        gate.wait()
        t0 = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            conn.close()
            results[i] = ("ok" if resp.status == 200 else f"status {resp.status}", time.perf_counter() - t0)
        except ConnectionResetError:
            results[i] = ("reset", time.perf_counter() - t0)
        except OSError as exc:
            results[i] = (f"failed ({type(exc).__name__})", time.perf_counter() - t0)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    load = os.getloadavg()  # the machine's, as `uptime` says it: the figures depend on it
    outcomes = collections.Counter(o for o, _ in results)
    times = sorted(s for o, s in results if o == "ok")
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))] if times else float("nan")
    print(f"{n} readers at once (page, /api/index, {len(run_ids)} runs in turn): {outcomes.get('ok', 0)} answered, "
          f"{outcomes.get('reset', 0)} reset, {n - outcomes.get('ok', 0) - outcomes.get('reset', 0)} other; "
          f"median {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms, "
          f"all done in {wall:.1f} s (goal: 0 resets, p95 < 1 s); load average {' '.join(f'{x:.1f}' for x in load)}"
          if times else f"{n} readers: {dict(outcomes)}")


class Served:
    """A real `skillassay view` process (its own interpreter: the readers' threads here do not
    share its GIL), on the port it prints."""

    def __init__(self, it: Path) -> None:
        import re

        src = str(Path(__file__).resolve().parent.parent / "src")
        self.proc = subprocess.Popen([sys.executable, "-m", "skillassay", "view", str(it), "--no-browser"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONPATH": src, "COLUMNS": "200"})
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        found = re.search(r"127\.0\.0\.1:(\d+)", line)
        if not found:
            self.proc.kill()
            raise SystemExit(f"`skillassay view` did not say its port: {line}")
        self.port = int(found.group(1))
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def close(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def time_static(it: Path) -> None:
    """`skillassay view --static` in a child process, so its peak memory is its own."""
    out = it.parent / "page.html"
    code = ("import resource, sys, time; from pathlib import Path; t = time.perf_counter(); "
            "from skillassay.viewer.static_html import write_static; write_static(Path(sys.argv[1]), Path(sys.argv[2])); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code, str(it), str(out)], capture_output=True, text=True, check=True)
    seconds, peak_kb = done.stdout.split()
    html = out.read_text(encoding="utf-8")
    boot = json.loads(html.split('id="boot">', 1)[1].split("</script>", 1)[0])
    embedded = sum(1 for d in boot["details"].values() if all(f["kind"] != "skipped" for f in d["files"]))
    print(f"view --static: {float(seconds):.1f} s (goal < 60 s), peak memory {int(peak_kb) / 1024:.0f} MB "
          f"(goal < 1024 MB), page {out.stat().st_size / 1e6:.0f} MB; outputs of {embedded:,} of "
          f"{len(boot['details']):,} runs embedded; budget note on the page: {'budget_note' in boot['index']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=100)
    ap.add_argument("--runs-per-arm", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    ap.add_argument("--answer-kb", type=int, default=0, help="pad each answer to this many KB")
    ap.add_argument("--static", action="store_true", help="also time `view --static`")
    ap.add_argument("--no-browser", action="store_true", help="skip the headless Chromium page loads")
    ap.add_argument("--crowd", type=int, default=0, help="also N concurrent readers (issue 40: 200)")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="viewer-open-"))
    t0 = time.perf_counter()
    it = root / "iteration-1"
    if not (it / "benchmark.json").is_file():  # --keep DIR of an earlier run: reuse it
        it = build_workspace(root, args.evals, args.runs_per_arm, args.answer_kb)
    n_runs = len(json.loads((it / "benchmark.json").read_bytes())["runs"])
    print(f"workspace: {n_runs} runs written in {time.perf_counter() - t0:.1f} s at {it}")

    t0 = t_start = time.perf_counter()
    server, _ = start_server(it)
    start = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        body = urllib.request.urlopen(server.url + "api/index").read()
        api = time.perf_counter() - t0
        assert len(json.loads(body)["runs"]) == n_runs
        print(f"server start (index of {n_runs} runs, no output read): {start * 1000:.0f} ms")
        print(f"GET /api/index: {api * 1000:.0f} ms, {len(body) / 1e6:.2f} MB")
        # The server prepares the Benchmark tab in the background from its start; a GET right
        # after the index waits for that (the worst case), a GET once a reviewer clicks the tab
        # (here: after the page loads, or 2 s later) is what a reviewer sees.
        t0 = time.perf_counter()
        urllib.request.urlopen(server.url + "api/benchmark").read()
        print(f"GET /api/benchmark at once after start (waits for the background preparation): "
              f"{(time.perf_counter() - t0) * 1000:.0f} ms, ready {time.perf_counter() - t_start:.1f} s after start")
        if args.no_browser:
            time.sleep(2)
        else:
            loads = time_page_loads(server, args.repeats)
            print(f"page load to first run shown, headless Chromium, {args.repeats} cold loads: "
                  f"median {statistics.median(loads) * 1000:.0f} ms, max {max(loads) * 1000:.0f} ms")
            print(f"open time (server start + median page load): {(start + statistics.median(loads)):.2f} s (goal < 3 s)")
        t0 = time.perf_counter()
        urllib.request.urlopen(server.url + "api/benchmark").read()
        print(f"GET /api/benchmark when the tab is opened: {(time.perf_counter() - t0) * 1000:.0f} ms (goal < 1 s)")
        if args.crowd:
            runs = json.loads(body)["runs"]
            crowd(server, args.crowd, [r["id"] for r in runs[:: max(1, len(runs) // 20)]])
    finally:
        server.shutdown()
        server.server_close()
    if args.crowd:  # again, against the real command in a process of its own
        served = Served(it)
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{served.port}/api/benchmark", timeout=600).read()  # prepared
            print("`skillassay view` in its own process:")
            crowd(served, args.crowd, [r["id"] for r in runs[:: max(1, len(runs) // 20)]])
        finally:
            served.close()
    try:
        if args.static:
            time_static(it)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
