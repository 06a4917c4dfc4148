"""`run --backend ray` against a real Ray cluster started here: a head and a second node, both
`ray start` on this machine (tests/ray_cluster.py), one session for the whole file to keep CI
time low. The second node's PATH lacks a tool the head has, so preflight can refuse it; the
last test kills it mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray
pytest.importorskip("ray")

from ray_cluster import REPO, Cluster, ray_env, start_cluster  # noqa: E402

from skillassay.run.backends import Returned, enforce_limit, safe_relative  # noqa: E402

EXAMPLE = REPO / "examples" / "acme-vpn"
KEY = "sk-test-raybackend-0123456789abcdef"
TOOL = "sa-head-only-tool"
# Timestamps and durations: the only things allowed to differ between the backends.
VOLATILE = re.compile(r"(_at|start|end|timestamp|duration|seconds|_ms|time)", re.IGNORECASE)
# ...and in llama.cpp's responses kept in transcripts: a random completion id, a Unix time
RESPONSE_ID = re.compile(rb'"(id|created)": ("chatcmpl-[0-9a-f-]+"|\d+)')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tools = tmp_path_factory.mktemp("tools")
    tool = tools / TOOL
    tool.write_text("#!/bin/sh\necho tool-answer\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    c = start_cluster(slots=4, head_env={"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"})
    try:
        c.add_node(4)  # PATH without tools/: preflight must name this node
        yield c
    finally:
        c.stop()


def skill_copy(tmp: Path) -> Path:
    """The example skill with a small eval set: two evals, one with an input file."""
    skill = tmp / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    (skill / "evals" / "data.txt").write_text("input file content\n")
    evals = {"skill_name": "acme-vpn", "evals": [
        {"id": 1, "name": "port", "prompt": "What port does the Acme VPN server use?",
         "expectations": [{"type": "contains", "value": "4433"}]},
        {"id": 2, "name": "with-file", "prompt": "Read data.txt.", "files": ["evals/data.txt"],
         "expectations": [{"type": "file_exists", "path": "echo.txt"}]},
    ]}
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    return skill


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillassay", "run", *args], capture_output=True, text=True,
                          env=ray_env(env), timeout=timeout, cwd=REPO)


def normalized(data: object) -> object:
    if isinstance(data, dict):
        return {k: normalized(v) for k, v in data.items() if not VOLATILE.search(k)}
    if isinstance(data, list):
        return [normalized(v) for v in data]
    return data


def trial_files(iteration: Path) -> dict[str, object]:
    """Every file of every trial, JSON without timestamps and durations."""
    out: dict[str, object] = {}
    for path in sorted(iteration.glob("eval-*/*/run-*/**/*")):
        if path.is_file() and path.name != "timing.json":
            rel = str(path.relative_to(iteration))
            raw = path.read_bytes()
            out[rel] = normalized(json.loads(raw)) if path.suffix == ".json" else RESPONSE_ID.sub(rb"\1", raw)
    for path in sorted(iteration.glob("eval-*/eval_metadata.json")):
        out[str(path.relative_to(iteration))] = json.loads(path.read_bytes())
    return out


@pytest.mark.parametrize("executor", [
    ["--executor", "echo", "-o", "write_file=echo.txt"],
    # ~75 s on the loaded 2-core CI machine (each Ray worker loads the model): opt in
    pytest.param(["--executor", "local", "--max-tokens", "12", "--temperature", "0.7"], marks=[
        pytest.mark.model, pytest.mark.skipif(not os.environ.get("SKILLASSAY_RAY_MODEL_TEST"),
                                              reason="set SKILLASSAY_RAY_MODEL_TEST=1 to run it")]),
], ids=["echo", "local-model"])
def test_ray_writes_the_same_files_as_local(cluster: Cluster, tmp_path: Path, executor: list[str]) -> None:
    """Same seeds, deterministic executor: the same files, timestamps and durations aside.
    The embedded model samples at temperature 0.7 from each trial's seed, on the workers."""
    skill = skill_copy(tmp_path)
    common = [str(skill), *executor, "--trials", "2", "--seed", "7"]
    local = cli(*common, "--workspace", str(tmp_path / "local"))
    ray = cli(*common, "--workspace", str(tmp_path / "ray"), "--backend", "ray", "--ray-address", cluster.address,
              "--concurrency", "2")
    assert local.returncode == ray.returncode, ray.stderr
    a, b = trial_files(tmp_path / "local" / "iteration-1"), trial_files(tmp_path / "ray" / "iteration-1")
    # 8 trials x 5 files (6 with echo's own file), plus eval_metadata.json x 2
    assert len(a) == 2 * 2 * 2 * (6 if "echo" in executor else 5) + 2
    assert a.keys() == b.keys()
    for rel in a:
        assert a[rel] == b[rel], rel
    if "echo" in executor:
        assert b["eval-2-with-file/with_skill/run-1/outputs/echo.txt"]  # the agent's file came back
    answers = {k: v for k, v in b.items() if k.endswith("answer.md")}
    assert len(set(answers.values())) > 1  # the arms and trials really differ: nothing trivially equal
    # every trial line names the node it ran on
    assert len(re.findall(r"run-\d on \S+/[0-9a-f]{8}: ", ray.stderr)) == 8, ray.stderr


def test_node_without_the_tool_is_refused_at_preflight(cluster: Cluster, tmp_path: Path) -> None:
    skill = skill_copy(tmp_path)
    done = cli(str(skill), "--executor", "command", "-o", f'argv=["{TOOL}"]', "--workspace", str(tmp_path / "ws"),
               "--backend", "ray", "--ray-address", cluster.address)
    assert done.returncode == 2, done.stderr
    refused = re.findall(r"node (\S+): --executor command cannot run there: (.*)", done.stderr)
    assert len(refused) == 1, done.stderr  # the head has the tool; only the second node is named
    assert "not found on PATH" in refused[0][1]
    assert "Traceback" not in done.stderr
    assert not list((tmp_path / "ws").glob("iteration-*/eval-*/*/run-*")), "no trial ran"


def graded(ws: Path) -> list[Path]:
    return sorted(ws.glob("iteration-1/eval-*/*/run-*/grading.json"))


def test_driver_killed_then_resumed_runs_only_the_missing(cluster: Cluster, tmp_path: Path) -> None:
    skill = skill_copy(tmp_path)
    ws = tmp_path / "ws"
    args = [sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "echo", "-o", "delay_seconds=0.5",
            "--trials", "2", "--concurrency", "2", "--workspace", str(ws), "--backend", "ray",
            "--ray-address", cluster.address]
    proc = subprocess.Popen(args, env=ray_env(), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while len(graded(ws)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = len(graded(ws))
    assert 2 <= before < 8
    again = cli(*args[4:])
    assert again.returncode in (0, 1, 3), again.stderr
    assert f"{before} trials already graded, {8 - before} to run" in again.stderr
    assert len(re.findall(r"^\[\d+/\d+\] eval", again.stderr, re.M)) == 8 - before
    assert len(graded(ws)) == 8


def test_outputs_over_the_limit_are_an_error_that_says_so() -> None:
    from skillassay.executors import TrialResult
    from skillassay.models import Metrics

    files = {"outputs/answer.md": b"a", "outputs/metrics.json": b"{}", "transcript.jsonl": b"", "transcript.md": b"",
             "outputs/big.bin": b"x" * 101}
    kept, result, metrics = enforce_limit(files, TrialResult(final_text="a"), Metrics(status="ok"), 100)
    assert "outputs/big.bin" not in kept and result.status == "error" and metrics.status == "error"
    assert "101 bytes" in (result.error or "") and "limit of 100 bytes" in (metrics.error or "")
    assert json.loads(kept["outputs/metrics.json"])["status"] == "error"
    same, result, _ = enforce_limit(files, TrialResult(), Metrics(status="ok"), 1000)
    assert same == files and result.status == "ok"
    for bad in ("/etc/passwd", "../x", "outputs/../../x", ""):
        with pytest.raises(ValueError):
            safe_relative(bad)
    assert Returned  # the type the worker sends back


def test_ctrl_c_ends_the_agents_on_the_nodes(cluster: Cluster, tmp_path: Path) -> None:
    """Issue 40: a Ray run's agents are children of the nodes' actors, out of the driver's reach;
    on Ctrl-C each actor ends its own at once, so the trials return and the run exits 130."""
    skill, ws, pids = skill_copy(tmp_path), tmp_path / "ws", tmp_path / "pids"
    argv = json.dumps(["/bin/sh", "-c", f"echo $$ >> {pids}; sleep 60; echo hi"])
    args = [sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "command", "-o", f"argv={argv}",
            "--trials", "2", "--concurrency", "4", "--workspace", str(ws), "--backend", "ray",
            "--ray-address", cluster.address, "--timeout", "120",
            "--sandbox", "none"]  # the agents record their host pids outside their work folder
    proc = subprocess.Popen(args, env=ray_env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not (pids.exists() and len(pids.read_text().split()) >= 4):
            assert time.monotonic() < deadline and proc.poll() is None, "the agents never started"
            time.sleep(0.1)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
        assert proc.returncode == 130, err
        # Without the actors ending their agents the driver waited out STOP_WAIT_SECONDS for the
        # trials (5.5 s here; 0.3 s with them), and the agents died only with their actors.
        assert took < 4, f"the run took {took:.1f}s to stop"
        agents = [int(p) for p in pids.read_text().split()]
        deadline = time.monotonic() + 10
        while (left := [p for p in agents if _cmdline(p).startswith("/bin/sh")]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], "agents outlived the run on the nodes"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in (int(p) for p in pids.read_text().split()) if pids.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_node_killed_mid_run_reruns_its_trials_elsewhere(cluster: Cluster, tmp_path: Path) -> None:
    """Last (it leaves the cluster one node short): the second node is killed while it runs
    trials; they run again on the head and each is written once. The agent (a `command`)
    also writes the API key the driver had in its environment, which reaches the workers only
    through its node's actor: it arrives, and no file of the workspace holds it, nor any file
    of Ray's own on the nodes (a runtime_env's env_vars end up in runtime_env_agent.log)."""
    victim = cluster.nodes[1]
    skill = skill_copy(tmp_path)
    ws = tmp_path / "ws"
    argv = json.dumps(["/bin/sh", "-c", 'sleep 2; printf "%s" "$SA_RAYTEST_API_KEY" > key.txt; '
                                        'echo "key=$SA_RAYTEST_API_KEY"'])
    # 6 at once, and the head has 4 slots: the victim gets at least 2
    args = [sys.executable, "-m", "skillassay", "run", str(skill), "--executor", "command", "-o", f"argv={argv}",
            "--trials", "2", "--concurrency", "6", "--workspace", str(ws), "--backend", "ray",
            "--ray-address", cluster.address, "--timeout", "60",
            "--sandbox", "none"]  # the agent reads the driver's key (confined, it would get none)
    proc = subprocess.Popen(args, env=ray_env({"SA_RAYTEST_API_KEY": KEY}), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    # a trial runs there when its agent (a child of the node's actor, /bin/sh) does; Ray's
    while not (running := any(_cmdline(pid).startswith("/bin/sh\0-c\0sleep 2") for pid in victim.pids())):
        assert time.monotonic() < deadline and proc.poll() is None, "the victim node never ran a trial"
        time.sleep(0.1)
    victim.kill()
    out, err = proc.communicate(timeout=120)
    assert running and proc.returncode in (0, 1, 3), err
    assert len(graded(ws)) == 8
    statuses = [json.loads(p.read_text())["status"] for p in ws.glob("iteration-1/eval-*/*/run-*/outputs/metrics.json")]
    assert statuses == ["ok"] * 8, err
    assert not list(ws.glob("iteration-1/eval-*/*/run-*/attempts")), "each trial written once"
    answers = [p.read_text() for p in ws.glob("iteration-1/eval-*/*/run-*/outputs/answer.md")]
    assert len(answers) == 8 and all("key=[REDACTED]" in a for a in answers), answers  # it arrived, masked
    assert all(p.read_text() == "[REDACTED]" for p in ws.glob("iteration-1/eval-*/*/run-*/outputs/key.txt"))
    for path in ws.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in out + err
    leaked = [str(path) for node in cluster.nodes for path in node.temp_dir.rglob("*")
              if path.is_file() and not path.is_symlink() and _holds(path, KEY.encode())]
    assert not leaked, f"Ray's own files on the nodes hold the key: {leaked[:5]}"


def _holds(path: Path, needle: bytes) -> bool:
    try:
        return needle in path.read_bytes()
    except OSError:  # sockets, files Ray removes meanwhile
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
