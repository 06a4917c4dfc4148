"""What a sandbox costs per trial, as a user feels it: the real `skillassay run` (worktree
code) as whole processes, one eval, one trial per arm (two trials), the `command` executor
running `bash -c 'echo 4433'`, under --sandbox none, bwrap and docker. The difference to none,
halved, is the sandbox's cost per trial (bwrap: the probe and a namespace per trial; docker: a
container per trial, plus the daemon, image and program preflight once per run).

    python benchmarks/sandbox_cost.py [--rounds 5] [--kinds none,bwrap,docker]

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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))
from sandbox_image import docker_daemon, import_image  # noqa: E402
from wholeproc import Series, load, make_bench_skill, ours_env, run_once, skillassay_cmd  # noqa: E402

IMAGE = "skillassay-sandbox-bench:1"
AGENT = json.dumps(["bash", "-c", "echo 4433"])


def config_for(kind: str) -> dict[str, object]:
    if kind == "docker":
        return {"sandbox": {"kind": "docker", "image": IMAGE, "mounts": ["/usr"], "network": "none"}}
    return {"sandbox": kind}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kinds", default="none,bwrap,docker")
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
        series = {k: Series(f"1-trial run, --sandbox {k}") for k in kinds}
        for n in range(args.rounds):
            for kind in kinds:
                config = root / f"{kind}.json"
                config.write_text(json.dumps(config_for(kind)))
                cmd = skillassay_cmd("run", str(skill), "--executor", "command", "--trials", "1", "--config",
                                     str(config), "--workspace", str(root / f"ws-{kind}-{n}"), "-o",
                                     f"argv={AGENT}")
                series[kind].samples.append(run_once(cmd, env))
        print(load())
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
