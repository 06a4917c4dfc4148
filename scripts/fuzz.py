"""Fuzz every file skillassay reads: damage one file of a real workspace in one hostile way,
read it, and count every crash as a finding.

--level readers (default): the suite's property test (tests/cli/test_fuzz.py: its workspace, its
damage strategies, its readers called as library functions), for many more cases; a finding is
any exception other than InputError.
--level cli: a workspace made by `run` with the echo executor, the CLI commands that read the
damaged file (run, validate, aggregate, grade, gate, compare, report, view --static, history);
a finding is a traceback or an exit code outside 0-3. Slower (about 1 s a case).
--level keys: the same workspace and commands, without chance: every key of each JSON file
(--targets) deleted, and replaced by each of KEY_DAMAGE's values, read by every command that
reads that file. It finds what a random draw reaches rarely (one key of forty, one command of five).

    PYTHONPATH=src python3 scripts/fuzz.py --cases 5000 [--level cli] [--seed 1] [--skip N] [--shard K/N] [--keep DIR]
        [--charts skip|in-process|child] [--findings DIR] [--replay DIR/seed<S>-case<N>]
    PYTHONPATH=src python3 scripts/fuzz.py --level keys --targets grading.json timing.json [--shard K/N] [--findings DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from typer.testing import CliRunner

from skillassay.cli.main import app

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "acme-vpn"
HOLE = "\u0000hole\u0000"  # stands for the damaged node until the text is written
CLEAN_EXITS = {0, 1, 2, 3}


# --- the workspace -------------------------------------------------------------------------


def build_base(root: Path) -> Path:
    """skill/ (3 evals) and ws/ with two iterations of 1 trial each, made by the real CLI."""
    skill = root / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text())
    evals["evals"] = evals["evals"][:3]
    evals_path.write_text(json.dumps(evals, indent=2))
    args = ["run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(root / "ws")]
    for n in (1, 2):
        result = CliRunner().invoke(app, args, catch_exceptions=False)
        if result.exit_code not in CLEAN_EXITS:
            raise RuntimeError(f"building the base workspace failed: {result.output}")
        if n == 1:  # a new skill version, so the second run is iteration-2
            md = skill / "SKILL.md"
            md.write_text(md.read_text() + "\nThe help desk answers within a day.\n")
    it2 = root / "ws" / "iteration-2"
    (it2 / "feedback.json").write_text(json.dumps(
        {"reviews": [{"run_id": "eval-1-server-port/with_skill/run-1", "feedback": "ok", "timestamp": "x"}],
         "status": "in_progress"}))
    return root


# Which file a case damages (relative to the base), and the commands that read it; {it} is
# iteration-2, {ws} the workspace, {skill} the skill folder, {out} a scratch file.
RUN = ["run", "{skill}", "--executor", "echo", "--trials", "1", "--workspace", "{ws}"]
RUN_DIR = "ws/iteration-2/eval-1-server-port/with_skill/run-1"
TARGETS: dict[str, tuple[str, list[list[str]]]] = {
    "evals.json": ("acme-vpn/evals/evals.json", [["validate", "{skill}/evals/evals.json"], RUN,
                                                 ["grade", "{it}", "--evals", "{skill}/evals/evals.json"]]),
    "benchmark_config.json": ("acme-vpn/evals/benchmark_config.json",
                              [["validate", "{skill}/evals/benchmark_config.json"], RUN,
                               ["gate", "{it}", "--config", "{skill}/evals/benchmark_config.json"]]),
    "SKILL.md": ("acme-vpn/SKILL.md", [["validate", "{skill}"], RUN]),
    "grading.json": (f"{RUN_DIR}/grading.json", [["aggregate", "{it}"], ["view", "{it}", "--static", "{out}"], RUN]),
    "timing.json": (f"{RUN_DIR}/timing.json", [["aggregate", "{it}"], ["view", "{it}", "--static", "{out}"]]),
    "metrics.json": (f"{RUN_DIR}/outputs/metrics.json", [["aggregate", "{it}"], ["grade", "{it}"],
                                                          ["view", "{it}", "--static", "{out}"]]),
    "eval_metadata.json": ("ws/iteration-2/eval-1-server-port/eval_metadata.json",
                           [["aggregate", "{it}"], ["grade", "{it}"], ["view", "{it}", "--static", "{out}"], RUN]),
    "iteration.json": ("ws/iteration-2/iteration.json", [["aggregate", "{it}"], ["gate", "{it}"], ["compare", "{it}"],
                                                         ["grade", "{it}"], ["history", "record", "{it}"], RUN]),
    "benchmark.json": ("ws/iteration-2/benchmark.json", [["gate", "{it}"], ["report", "{it}"], ["compare", "{it}"],
                                                         ["view", "{it}", "--static", "{out}"],
                                                         ["history", "record", "{it}"]]),
    "previous benchmark.json": ("ws/iteration-1/benchmark.json", [["compare", "{it}"], ["gate", "{it}"]]),
    "history.json": ("ws/history.json", [["history", "show", "{ws}"], ["history", "record", "{it}"]]),
    "feedback.json": ("ws/iteration-2/feedback.json", [["view", "{it}", "--static", "{out}"]]),
}


# --- hostile content -----------------------------------------------------------------------


def _suite() -> Any:
    """tests/cli/test_fuzz.py, whose cases and helpers both levels share, so the long run and the
    suite cannot drift apart."""
    import sys

    tests = Path(__file__).resolve().parent.parent / "tests"
    for folder in (str(tests), str(tests / "cli")):  # its helpers, then the module itself
        if folder not in sys.path:
            sys.path.insert(0, folder)
    import test_fuzz

    return test_fuzz


def _copy_and_parent(data: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    """A deep copy of `data` and, in it, the node holding `path`'s last key (path not empty)."""
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    return data, node


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    data, parent = _copy_and_parent(data, path)
    parent[path[-1]] = value
    return data


def _delete(data: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return data
    data, parent = _copy_and_parent(data, path)
    del parent[path[-1]]
    return data


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
    max_leaves=6)

# Text spliced where HOLE was: what json.dumps cannot produce from Python values.
RAW_NODES = [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 5_000 + "1" + "}" * 5_000,
    "[" * 300 + "]" * 300,
    "9" * 5_000,
    "-" + "1" * 30,
    '"\\ud800"',
    '"\\udfff tail"',
    '"a\\u0000b"',
    "NaN", "Infinity", "-Infinity", "1e400", "-0",
]


@st.composite
def damaged_json(draw: st.DrawFn, original: Any) -> bytes:
    """One hostile variant of a valid JSON document."""
    kind = draw(st.sampled_from(["raw", "retype", "delete", "bytes", "truncate"]))
    if kind == "bytes":
        return draw(st.sampled_from([b"", b"\xff\xfe", b"\xef\xbb\xbf", b"null", b"[]", b'"x"', b"1", b"{"]))\
            + draw(st.binary(max_size=8))
    text = json.dumps(original, indent=1)
    if kind == "truncate":
        return text[: draw(st.integers(0, max(len(text) - 1, 0)))].encode()
    path = draw(st.sampled_from(_suite()._paths(original)))
    if kind == "delete":
        return json.dumps(_delete(original, path)).encode()
    if kind == "retype":
        return json.dumps(_replace(original, path, draw(json_values))).encode()
    raw = draw(st.sampled_from(RAW_NODES))
    return json.dumps(_replace(original, path, HOLE)).replace(json.dumps(HOLE), raw).encode()


@st.composite
def damaged_skill_md(draw: st.DrawFn, original: str) -> bytes:
    body = original.split("---", 2)[2] if original.count("---") >= 2 else "\nbody\n"
    front = draw(st.sampled_from([
        "name: " + "[" * 50_000 + "]" * 50_000,
        "name: acme-vpn\ndescription: " + "- " * 2_000 + "x",
        "name: acme-vpn\ndescription: {" + "a: {" * 3_000 + "}" * 3_001,
        "a: &a [x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\nname: acme-vpn\ndescription: d",
        "name: [1, 2]\ndescription: {a: 1}",
        "name: acme-vpn\ndescription: !!python/object:os.system x",
        "name: acme-vpn\ndescription: 1e400",
        "name: 12345678901234567890123456789\ndescription: x",
        "name: acme-vpn\ndescription: \"\\ud800\"",
        "- a\n- b",
        "name: acme-vpn\ndescription: ok\nmetadata: {" + "x: " * 100 + "1}",
    ]))
    text = f"---\n{front}\n---{body}"
    if draw(st.booleans()):
        return text.encode()
    return text.encode() + draw(st.sampled_from([b"\xff", b"\x00", b"\xed\xa0\x80"]))


@dataclass
class Case:
    target: str
    content: bytes
    command: list[str]


def case_strategy(base: Path) -> st.SearchStrategy[Case]:
    originals = {name: (base / rel).read_bytes() for name, (rel, _) in TARGETS.items()}

    @st.composite
    def one(draw: st.DrawFn) -> Case:
        target = draw(st.sampled_from(sorted(TARGETS)))
        rel, commands = TARGETS[target]
        original = originals[target]
        if target == "SKILL.md":
            content = draw(damaged_skill_md(original.decode()))
        else:
            content = draw(damaged_json(json.loads(original)))
        return Case(target, content, draw(st.sampled_from(commands)))

    return one()


# --- running one case ----------------------------------------------------------------------


def _draw_in_process(iteration_dir: Path, data: Any = None, timeout: float = 120) -> list[Path]:
    """What the chart child does with the JSON it is sent, done here: the same code on the same
    data, without a Python start and a matplotlib import per case (~5 s a case on a loaded
    machine: most of a `run`, `report` or `view --static` case)."""
    from skillassay.report.charts import write_report_charts

    return write_report_charts(iteration_dir, json.loads(json.dumps(data)) if data is not None else None)


class _InProcessDrawer:
    """report_charts.ChartDrawer's interface, drawing in this process."""

    def draw(self, iteration_dir: Path, data: Any, timeout: float = 120) -> list[Path]:
        return _draw_in_process(iteration_dir, data, timeout)

    def close(self) -> None:
        pass


def _no_charts(iteration_dir: Path, data: Any = None, timeout: float = 120) -> list[Path]:
    json.dumps(data)  # what the parent does with the data before the child draws
    return []


class _NoDrawer(_InProcessDrawer):
    def draw(self, iteration_dir: Path, data: Any, timeout: float = 120) -> list[Path]:
        return _no_charts(iteration_dir, data, timeout)


def set_charts(how: str) -> None:
    """--charts: `child` as the CLI does; `in-process` draws here; `skip` draws nothing. The
    drawing is matplotlib's savefig (~1 s a chart set idle, 3-9 s on a loaded machine: most of
    a `run`, `report` or `view --static` case), and a chart that fails to draw, or a child that
    dies or times out, is caught by the report (report.draw_charts: the report loses a picture),
    so skipping it cannot hide an exit 70: the data the charts get is still serialised."""
    if how == "child":
        return
    import skillassay.report.report_charts as report_charts
    import skillassay.run.engine as engine

    in_process = how == "in-process"
    report_charts.draw_report_charts = _draw_in_process if in_process else _no_charts
    engine.ChartDrawer = _InProcessDrawer if in_process else _NoDrawer  # type: ignore[assignment,misc]


@dataclass
class Finding:
    case: Case
    exit_code: int | None
    kind: str  # exception type and where it was raised
    detail: str


def run_case(base: Path, scratch: Path, case: Case) -> Finding | None:
    """Copy the base, damage one file, run one command in-process. None when it ended cleanly.
    Each case gets a new scratch folder: a drawing a command left behind may still write into
    the last one (the old one is removed, whatever it still receives)."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch = Path(tempfile.mkdtemp(prefix="case-", dir=scratch.parent))
    shutil.copytree(base, scratch, symlinks=True, dirs_exist_ok=True)
    (scratch / TARGETS[case.target][0]).write_bytes(case.content)
    fields = {"skill": str(scratch / "acme-vpn"), "ws": str(scratch / "ws"), "it": str(scratch / "ws" / "iteration-2"),
              "out": str(scratch / "page.html")}
    args = [a.format(**fields) for a in case.command]
    result = CliRunner().invoke(app, args)
    shutil.rmtree(scratch, ignore_errors=True)
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        ours = [f for f in traceback.extract_tb(exc.__traceback__) if "/skillassay/" in f.filename.replace("\\", "/")]
        where = f"{Path(ours[-1].filename).parent.name}/{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
        detail = "".join(traceback.format_exception(exc))[-3000:]
        return Finding(case, result.exit_code, f"{type(exc).__name__} at {where}", detail)
    if result.exit_code not in CLEAN_EXITS:
        return Finding(case, result.exit_code, f"exit {result.exit_code}", result.output[-2000:])
    return None


def save_finding(stem: Path, found: Finding) -> None:
    """The damaged file's bytes (stem.bin) and what it damaged, the command and the traceback (stem.txt)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".bin").write_bytes(found.case.content)
    stem.with_suffix(".txt").write_text(f"{found.case.target} ({TARGETS[found.case.target][0]})\n"
                                        f"skillassay {' '.join(found.case.command)}\n{found.kind}\n\n{found.detail}\n")


def replay(base: Path, root: Path, stem: Path) -> int:
    """Run a case save_finding wrote, exactly: its bytes and command (a case cannot be drawn again
    by number, since each process's base workspace shifts Hypothesis's draws). 1 when it still fails."""
    target, command = stem.with_suffix(".txt").read_text().splitlines()[:2]
    case = Case(target.split(" (", 1)[0], stem.with_suffix(".bin").read_bytes(), command.split()[1:])
    found = run_case(base, root / "scratch", case)
    print(f"{describe(case)}: {'clean' if found is None else f'still fails: {found.kind}'}")
    return 0 if found is None else 1


def describe(case: Case) -> str:
    head = case.content[:120]
    return f"{case.target} <- {head!r}{'...' if len(case.content) > 120 else ''} ({len(case.content):,} bytes); " \
           f"skillassay {' '.join(case.command)}"


# --level keys: what each key is replaced by (a deletion comes first). Each stands for a kind
# of damage a reader must refuse or tolerate: nothing, the wrong scalar, a container where a
# scalar belongs and the reverse, an extreme number, a number that is not finite once read.
KEY_DAMAGE: list[tuple[str, str]] = [
    ("null", "null"), ("string", '"x"'), ("empty string", '""'), ("true", "true"), ("zero", "0"),
    ("negative", "-1"), ("fraction", "0.5"), ("huge int", "9" * 400), ("1e308", "1e308"), ("inf", "1e400"),
    ("NaN", "NaN"), ("list", "[]"), ("list of null", "[null]"), ("object", "{}"), ("deep list", "[" * 5000 + "]" * 5000),
]


def key_cases(base: Path, targets: list[str]) -> list[tuple[str, Case]]:
    """(label, case) for every key of each target, deleted and replaced by each KEY_DAMAGE value,
    and each command that reads the file: a fixed list, the same on every run."""
    cases: list[tuple[str, Case]] = []
    for target in targets:
        rel, commands = TARGETS[target]
        original = json.loads((base / rel).read_bytes())
        for path in _suite()._paths(original):
            if not path:
                continue
            where = "/".join(str(k) for k in path)
            damages = [("deleted", json.dumps(_delete(original, path)).encode())]
            template = json.dumps(_replace(original, path, HOLE))
            damages += [(name, template.replace(json.dumps(HOLE), raw).encode()) for name, raw in KEY_DAMAGE]
            for name, content in damages:
                for command in commands:
                    cases.append((f"{target}:{where} {name}", Case(target, content, command)))
    return cases


def keys_level(base: Path, root: Path, targets: list[str], shard: int, shards: int,
               findings_dir: Path | None) -> list[Finding]:
    cases = key_cases(base, targets)
    mine = [(i, label, case) for i, (label, case) in enumerate(cases) if i % shards == shard]
    print(f"{len(cases)} cases over {', '.join(targets)}; this process runs {len(mine)}", flush=True)
    found: list[Finding] = []
    t0 = time.perf_counter()
    for n, (i, label, case) in enumerate(mine, 1):
        finding = run_case(base, root / "scratch", case)
        if finding is not None:
            found.append(finding)
            if findings_dir is not None:
                save_finding(findings_dir / f"keys-case{i}", finding)
            print(f"finding at {label}: {finding.kind}: skillassay {' '.join(case.command)}\n{finding.detail}",
                  flush=True)
        if n % 250 == 0:
            print(f"{n} cases, {len(found)} findings, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"\n{len(mine)} cases in {time.perf_counter() - t0:.0f} s; findings: {len(found)}")
    return found


def readers_level(cases: int, seed_value: int, root: Path) -> tuple[int, list[tuple[str, str, str, str]]]:
    """(cases run, findings as (kind, file, reader, traceback)) over tests/cli/test_fuzz.py's readers."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    tf = _suite()

    shutil.rmtree(root / "sample", ignore_errors=True)
    sample = tf.build_sample(root / "sample")
    findings: list[tuple[str, str, str, str]] = []
    done = 0
    scratch = tf.Scratch(sample, root / "scratch")
    t0 = time.perf_counter()

    @seed(seed_value)
    @settings(max_examples=cases, database=None, deadline=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(tf.file_cases(sample))
    def one(case: tuple[str, bytes, str]) -> None:
        nonlocal done
        try:
            scratch.run(case)
        except Exception as exc:  # noqa: BLE001 - every exception but InputError is what we count
            ours = [f for f in traceback.extract_tb(exc.__traceback__) if "/skillassay/" in f.filename]
            where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
            findings.append((f"{type(exc).__name__} at {where}", case[0], case[2],
                             "".join(traceback.format_exception(exc))[-3000:]))
        done += 1
        if done % 250 == 0:
            print(f"{done} cases, {len(findings)} findings, {time.perf_counter() - t0:.0f} s", flush=True)

    one()
    return done, findings


def main() -> None:
    from hypothesis import HealthCheck, Phase, given, seed, settings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--level", choices=["readers", "cli", "keys"], default="readers")
    ap.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=None,
                    help="keys level: the files whose keys are damaged (default: every JSON file)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip", type=int, default=0,
                    help="cli level: draw but do not run the first N cases (a second process takes a seed's later cases)")
    ap.add_argument("--shard", default="0/1", help="cli level: K/N runs only the cases whose number is K modulo N "
                                                   "(N processes share a seed's cases)")
    ap.add_argument("--keep", type=Path, help="build the base workspace here and keep it")
    ap.add_argument("--replay", type=Path, help="cli level: run one saved finding again (DIR/seed<S>-case<N>, "
                                                "as --findings wrote it) on a fresh base workspace")
    ap.add_argument("--findings", type=Path, help="cli level: write each finding's damaged file and command here "
                                                  "(seed<S>-case<N>.bin and .txt), to reproduce it exactly")
    ap.add_argument("--charts", choices=["skip", "in-process", "child"], default="skip",
                    help="cli level: charts not drawn (default: their failures are caught, never an exit 70), "
                         "drawn in this process, or in their own child process as the CLI does")
    args = ap.parse_args()
    args.shard, args.shards = (int(x) for x in args.shard.split("/"))
    set_charts(args.charts)
    root = args.keep or Path(tempfile.mkdtemp(prefix="skillassay-fuzz-"))
    if args.level == "readers":
        t0 = time.perf_counter()
        done, found = readers_level(args.cases, args.seed, root)
        took = time.perf_counter() - t0
        print(f"\n{done} cases in {took:.0f} s ({took / max(done, 1) * 1000:.0f} ms a case)")
        kinds = collections.Counter(k for k, *_ in found)
        print(f"findings: {len(found)} in {len(kinds)} kinds")
        for kind, n in kinds.most_common():
            _, rel, reader, tb = next(f for f in found if f[0] == kind)
            print(f"  {n:5d}  {kind}  e.g. {rel} read by {reader}\n{tb}")
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        raise SystemExit(1 if found else 0)
    t0 = time.perf_counter()
    base = build_base(root / "base")
    print(f"base workspace built in {time.perf_counter() - t0:.1f} s at {base}")
    if args.replay is not None:
        code = replay(base, root, args.replay)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        raise SystemExit(code)
    if args.level == "keys":
        targets = args.targets or sorted(t for t in TARGETS if t != "SKILL.md")
        keys_found = keys_level(base, root, targets, args.shard, args.shards, args.findings)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        raise SystemExit(1 if keys_found else 0)
    findings: list[Finding] = []
    counts: collections.Counter[str] = collections.Counter()
    drawn = [0]

    @seed(args.seed)
    @settings(max_examples=args.cases, database=None, deadline=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(case_strategy(base))
    def fuzz_one(case: Case) -> None:
        drawn[0] += 1
        if drawn[0] <= args.skip or drawn[0] % args.shards != args.shard:
            return
        found = run_case(base, root / "scratch", case)
        counts[case.target] += 1
        if found is not None:
            findings.append(found)
            if args.findings is not None:
                save_finding(args.findings / f"seed{args.seed}-case{drawn[0]}", found)
            print(f"finding at case {drawn[0]}: {found.kind}: {describe(found.case)}\n{found.detail}", flush=True)
        done = sum(counts.values())
        if done % 250 == 0:
            print(f"{done} cases, {len(findings)} findings, {time.perf_counter() - t0:.0f} s", flush=True)

    t0 = time.perf_counter()
    fuzz_one()
    took, done = time.perf_counter() - t0, sum(counts.values())
    print(f"\n{done} cases in {took:.0f} s ({took / max(done, 1) * 1000:.0f} ms a case); per file: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    kinds = collections.Counter(f.kind for f in findings)
    print(f"findings: {len(findings)} in {len(kinds)} kinds")
    for kind, n in kinds.most_common():
        first = next(f for f in findings if f.kind == kind)
        print(f"  {n:5d}  {kind}\n         e.g. {describe(first.case)}")
    if findings:
        print("\nfirst traceback of each kind:")
        for kind in kinds:
            print(f"--- {kind}\n{next(f for f in findings if f.kind == kind).detail}")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    raise SystemExit(1 if findings else 0)


if __name__ == "__main__":
    main()
