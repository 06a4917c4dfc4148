"""What masking secrets costs the commands that write a big iteration's files, as a user feels
it: `aggregate` (benchmark.json, its largest write), `report` and `view --static`, each a whole
process (benchmarks/wholeproc.py), on one generated iteration (benchmarks/aggregate.py's layout,
default 20,000 runs) in three settings:

- `none`: no secret-looking variable set; the redactor still looks for key shapes and URL
  userinfo in everything written;
- `env`: SECRETS values in secret-looking variables (API_KEY_1...): each is masked as spelled,
  JSON-escaped, base64 (both alphabets, three alignments), hex, split across a line, and in
  pieces of 16 characters or more;
- `remembered`: the same values remembered by the iteration (iteration.json's salted hashes,
  store/secret_hashes.py), the variables unset: what `report`/`view` do on a later day.

With --before REF (a commit, e.g. 8b8722c^, the last before encoded forms and remembered
hashes) the same commands also run that commit's code (`git archive` into the scratch folder),
in the same rounds, alternating which goes first, on copies of the same iteration.

    python benchmarks/redaction.py [--runs N] [--rounds R] [--secrets K] [--before REF] [--dir D]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aggregate import build_iteration  # noqa: E402
from wholeproc import SRC, Series, load, run_once, skillassay_cmd, with_bytecode_cache  # noqa: E402

REPO = SRC.parent


def secret_values(k: int) -> dict[str, str]:
    """K values of no known key shape: only the variable's name says they are secret."""
    return {f"BENCH_API_KEY_{i}": f"Zx{i:02d}kQ0pLm2nVb7cXz9aQwTy{i:04d}" for i in range(1, k + 1)}


def code_of(ref: str, into: Path) -> Path:
    """src/ of commit `ref`, unpacked under `into`."""
    dest = into / f"src-{ref.replace('/', '_').replace('^', '-prev')}"
    if not dest.exists():
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def environment(src: Path, cache: Path, secrets: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not any(w in k.upper() for w in ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL"))}
    env.update(secrets or {})
    env["PYTHONPATH"] = str(src)
    return with_bytecode_cache(env, cache)


def remember_in(it: Path, src: Path, secrets: dict[str, str]) -> None:
    """iteration.json with the values' salted hashes, as a run that had them set writes it."""
    code = ("import json, sys; from skillassay.store.secret_hashes import new_record; "
            "print(json.dumps(new_record(json.loads(sys.argv[1]))))")
    record = subprocess.run([sys.executable, "-c", code, json.dumps(list(secrets.values()))], check=True,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)}).stdout
    path = it / "iteration.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["redacted_secrets"] = json.loads(record)
    path.write_text(json.dumps(data))


def commands(it: Path, page: Path) -> list[tuple[str, list[str]]]:
    return [("aggregate", skillassay_cmd("aggregate", str(it))), ("report", skillassay_cmd("report", str(it))),
            ("view --static", skillassay_cmd("view", str(it), "--static", str(page)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secrets", type=int, default=5)
    ap.add_argument("--before", help="also time this commit's code (e.g. 8b8722c^)")
    ap.add_argument("--dir", type=Path, help="scratch folder (default: a temporary one, removed)")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="skillassay-redaction-"))
    root.mkdir(parents=True, exist_ok=True)
    secrets = secret_values(args.secrets)
    codes = {"now": SRC, **({f"before ({args.before})": code_of(args.before, root)} if args.before else {})}
    iterations: dict[tuple[str, str], Path] = {}
    for code_label in codes:
        for setting in ("none", "env", "remembered"):
            if setting == "remembered" and code_label != "now":
                continue  # the commit before remembered nothing
            folder = root / f"{code_label.split()[0]}-{setting}"
            if not (folder / "bench-skill-workspace" / "iteration-1").exists():
                shutil.rmtree(folder, ignore_errors=True)
                build_iteration(folder, args.runs)
            iterations[(code_label, setting)] = folder / "bench-skill-workspace" / "iteration-1"
    print(f"{args.runs:,} runs, {args.secrets} secret values, {args.rounds} rounds; {load()}", flush=True)
    series: dict[tuple[str, str, str], Series] = {}
    for r in range(args.rounds):
        order = list(iterations.items())
        if r % 2:
            order.reverse()
        for (code_label, setting), it in order:
            src = codes[code_label]
            env = environment(src, root / f"pycache-{code_label.split()[0]}", secrets if setting == "env" else None)
            if setting == "remembered" and r == 0:
                run_once(skillassay_cmd("aggregate", str(it)), env)  # benchmark.json first, then the record
                remember_in(it, src, secrets)
            for name, cmd in commands(it, it.parent / "page.html"):
                key = (name, code_label, setting)
                series.setdefault(key, Series(f"{name} [{code_label}, {setting}]")).samples.append(run_once(cmd, env))
        print(f"round {r + 1} done; {load()}", flush=True)
    for s in series.values():
        print(s.line())
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
