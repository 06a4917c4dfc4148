"""What a sandbox costs per trial, as a user feels it: the real `skillassay run` (worktree
code) as whole processes, one eval, one trial per arm (two trials), the `command` executor
running `bash -c 'echo 4433'`, under --sandbox none, bwrap and docker. The difference to none,
halved, is the sandbox's cost per trial (bwrap: the probe and a namespace per trial; docker: a
container per trial, plus the daemon, image and program preflight once per run).

    python benchmarks/sandbox_cost.py [--rounds 5] [--kinds none,bwrap,docker] [--agent claude]

--agent claude runs the real `claude` CLI instead, against the loopback fake of the Anthropic
API in tests/fake_model_api.py (one scripted answer per trial): confined, it also goes through
the metering proxy, so that figure is the whole cost a Claude Code user pays.

Docker uses the daemon at DOCKER_HOST, else starts a private dockerd (root), and an image
built offline by scripts/sandbox_image.py that borrows the host's /usr (config `mounts`).
Rounds are interleaved so a load change hits every kind alike."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "src"))
from sandbox_image import docker_daemon, import_image  # noqa: E402
from wholeproc import Sample, Series, load, make_bench_skill, ours_env, run_once, skillassay_cmd  # noqa: E402

IMAGE = "skillassay-sandbox-bench:1"
AGENT = json.dumps(["bash", "-c", "echo 4433"])


def config_for(kind: str, agent: str) -> dict[str, object]:
    """A command needs no network; the agent CLI must reach the metering proxy on the host."""
    if kind == "docker":
        return {"sandbox": {"kind": "docker", "image": IMAGE, "mounts": ["/usr"],
                            "network": "none" if agent == "command" else "host"}}
    return {"sandbox": kind}


def one_run(root: Path, skill: Path, kind: str, n: int, agent: str, env: dict[str, str]) -> Sample:
    config = root / f"{kind}.json"
    config.write_text(json.dumps(config_for(kind, agent)))
    args = ["run", str(skill), "--trials", "1", "--config", str(config), "--workspace", str(root / f"ws-{kind}-{n}")]
    if agent == "command":
        return run_once(skillassay_cmd(*args, "--executor", "command", "-o", f"argv={AGENT}"), env)
    from fake_model_api import FakeModelAPI, Reply

    with FakeModelAPI([Reply(text="The magic number is 4433.")] * 2) as api:
        return run_once(skillassay_cmd(*args, "--executor", "claude-code", "-o", f"base_url={api.base_url}"),
                        {**env, "ANTHROPIC_API_KEY": "sk-ant-bench-0123456789", "CLAUDE_CODE_MAX_RETRIES": "0"})


def launch_cost(kinds: list[str], env: dict[str, str], n: int = 30) -> None:
    """The wrapper alone: one `bash -c true` launched plain and confined, n times each (the
    whole-run figures above carry start-up and load noise of a second or more)."""
    from skillassay.sandbox import SandboxSpec, confined

    for kind in kinds:
        spec = SandboxSpec(kind=kind, image=IMAGE, mounts=("/usr",), network="none")
        times = []
        for _ in range(n):
            with confined(spec, ["bash", "-c", "true"], cwd=Path("/tmp"), writable=[], env=env) as argv:
                t = time.perf_counter()
                subprocess.run(argv, capture_output=True, env=env, check=True)
                times.append(time.perf_counter() - t)
        times.sort()
        print(f"one launch of `bash -c true`, --sandbox {kind:<6} median {times[n // 2] * 1000:7.1f} ms "
              f"(min {times[0] * 1000:.1f}, n={n})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kinds", default="none,bwrap,docker")
    ap.add_argument("--agent", choices=("command", "claude"), default="command")
    args = ap.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    with contextlib.ExitStack() as stack:
        env = ours_env()
        if "docker" in kinds:
            try:
                env = {**env, **{k: v for k, v in stack.enter_context(docker_daemon()).items()
                                 if k == "DOCKER_HOST"}}
            except RuntimeError as exc:
                print(f"docker left out: {exc}")
                kinds.remove("docker")
            else:
                done = import_image(IMAGE, env)
                if done.returncode != 0:
                    raise SystemExit(done.stderr.decode())
                stack.callback(subprocess.run, ["docker", "image", "rm", "-f", IMAGE], capture_output=True,
                               env=env)
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skillassay-sandbox-bench-")))
        skill = make_bench_skill(root, "magic", "Knows the magic number. Use for magic numbers.",
                                 [{"type": "contains", "value": "4433"}], evals=1)
        series = {k: Series(f"{args.agent} 1-trial run, --sandbox {k}") for k in kinds}
        for n in range(args.rounds):
            for kind in kinds:
                series[kind].samples.append(one_run(root, skill, kind, n, args.agent, env))
        print(load())
        launch_cost(kinds, env)
        for s in series.values():
            print(s.line())
        if "none" in series:
            base = series["none"].median
            for kind, s in series.items():
                if kind != "none":
                    print(f"--sandbox {kind}: +{(s.median - base) * 1000:.0f} ms per run, "
                          f"+{(s.median - base) * 500:.0f} ms per trial (2 trials per run)")


if __name__ == "__main__":
    main()
