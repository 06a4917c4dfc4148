"""Bad input never crashes: every file we read goes through one guarded parse (depth, size,
integer digits, lone surrogates) and its model, and answers exit 2 naming the file and the
field; a crash that still happens is our own exit code with a log file, never 1 (a failed gate).

The property tests at the end damage real files at random (hypothesis) and call every reader;
`scripts/fuzz.py --cases N` runs the same cases through the CLI for longer."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import repo_paths
from cli_runner import invoke as cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from iteration_factory import write_iteration

from skillassay.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, InputError
from skillassay.store.jsonio import MAX_DEPTH, MAX_INT_DIGITS, JSONLimitError, parse_json_bytes, read_json

DEEP = b"[" * 100_000 + b"]" * 100_000
BIG_INT = b"9" * 5_000


def assert_bad_input(result: Any, file: str, fragment: str = "") -> None:
    """Exit 2, no traceback, and a message naming the file (and the fragment: field or reason)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    assert file in result.output and fragment in result.output, result.output


# --- the guarded parse ---------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "where", "why"), [
    (DEEP, "line 1 column", "nested too deeply"),
    (b'{"a": ' + b"[" * 300 + b"]" * 300 + b"}", "$.a[0][0]", "nested too deeply"),
    (b'{"a":\n 1, "n": ' + BIG_INT + b"}", "line 2 column 10", f"5,000 digits (at most {MAX_INT_DIGITS})"),
    (b'{"evals": [{"value": "ok \\ud800"}]}', "$.evals[0].value", "unpaired surrogate \\ud800"),
    (b'{"k\\udfff": 1}', "$", "unpaired surrogate \\udfff"),
], ids=["100k-deep", "300-deep", "5000-digits", "surrogate-value", "surrogate-key"])
def test_limits_name_the_place(raw: bytes, where: str, why: str) -> None:
    with pytest.raises(JSONLimitError) as exc:
        parse_json_bytes(raw)
    assert where in exc.value.location and why in exc.value.message


def test_what_the_limits_allow_reads_exactly() -> None:
    """20+-digit integers stay exact (orjson would give a float), NaN reads as json reads it,
    a surrogate pair is one character, and MAX_DEPTH levels are fine."""
    data = parse_json_bytes(b'\xef\xbb\xbf{"n": 123456789012345678901234567890, "d": NaN, "e": "\\ud83d\\ude00"}')
    assert data["n"] == 123456789012345678901234567890 and data["d"] != data["d"] and data["e"] == "\U0001f600"
    assert parse_json_bytes(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    assert parse_json_bytes(b'["\\ud800"]', allow_surrogates=True) == ["\ud800"]


def test_read_json_turns_limits_into_input_errors(tmp_path: Path) -> None:
    path = tmp_path / "benchmark_config.json"
    path.write_bytes(b'{"thresholds": ' + DEEP + b"}")
    with pytest.raises(InputError) as exc:
        read_json(path)
    assert str(path) in str(exc.value) and "nested too deeply" in str(exc.value)


# --- every command: exit 2 naming the file ---------------------------------------------------


@pytest.mark.parametrize("content", [DEEP, b'{"skill_name": "acme-vpn", "evals": [{"id": ' + BIG_INT + b"}]}"],
                         ids=["deep", "5000-digit"])
def test_run_refuses_hostile_evals_json(example_skill: Path, tmp_path: Path, content: bytes) -> None:
    evals = example_skill / "evals" / "evals.json"
    evals.write_bytes(content)
    result = cli("run", example_skill, "--executor", "echo", "--trials", "1", "--workspace", tmp_path / "ws")
    assert_bad_input(result, "evals.json")
    assert not (tmp_path / "ws" / "iteration-1").exists()


def test_run_refuses_a_deep_benchmark_config(example_skill: Path, tmp_path: Path) -> None:
    (example_skill / "evals" / "benchmark_config.json").write_bytes(b'{"thresholds": ' + DEEP + b"}")
    result = cli("run", example_skill, "--executor", "echo", "--trials", "1", "--workspace", tmp_path / "ws")
    assert_bad_input(result, "benchmark_config.json", "nested too deeply")


def test_lone_surrogate_in_an_assertion_value_is_bad_input(example_skill: Path, tmp_path: Path) -> None:
    """It used to pass validation and crash later writing eval_metadata.json (PydanticSerializationError)."""
    evals = example_skill / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    data["evals"][0]["expectations"][0]["value"] = "PLACEHOLDER"
    evals.write_text(json.dumps(data).replace("PLACEHOLDER", "\\ud800"))
    result = cli("run", example_skill, "--executor", "echo", "--trials", "1", "--workspace", tmp_path / "ws")
    assert_bad_input(result, "evals.json", "$.evals[0].expectations[0].value")


@pytest.mark.parametrize(("frontmatter", "fragment"), [
    ("name: " + "[" * 50_000 + "]" * 50_000, "frontmatter"),
    ("name: acme-vpn\ndescription: {" + "a: {" * 3_000 + "}" * 3_001, "nested too deeply"),
    ("name: acme-vpn\ndescription: " + "[" * 500 + "x" + "]" * 500, "nested too deeply"),
    ("a: &a [x, x]\nb: [*a, *a]\nname: acme-vpn\ndescription: d", "aliases"),
    ('name: acme-vpn\ndescription: "bad \\ud800"', "unpaired surrogate"),
], ids=["huge", "deep-mapping", "deep-list", "alias", "surrogate"])
def test_hostile_frontmatter_is_bad_input(example_skill: Path, tmp_path: Path, frontmatter: str, fragment: str) -> None:
    md = example_skill / "SKILL.md"
    md.write_text(f"---\n{frontmatter}\n---\nbody\n")
    assert_bad_input(cli("validate", example_skill), "SKILL.md", fragment)
    result = cli("run", example_skill, "--executor", "echo", "--trials", "1", "--workspace", tmp_path / "ws")
    assert_bad_input(result, "SKILL.md", fragment)


@pytest.fixture
def two_iterations(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write_iteration(ws, 1, {1: ("PF", "FF"), 2: ("PP", "FP")})
    write_iteration(ws, 2, {1: ("PP", "FF"), 2: ("PP", "FF")})
    return ws


@pytest.mark.parametrize(("field", "value"), [
    ("skill_name", [1]), ("trials_per_eval", "3"), ("iteration", {"a": 1}), ("fingerprint", "x"),
    ("configurations", 5), ("seed", 1.5),
])
@pytest.mark.parametrize("command", ["aggregate", "compare", "grade", "gate"])
def test_wrong_types_in_iteration_json_are_bad_input(two_iterations: Path, field: str, value: Any,
                                                     command: str) -> None:
    """`grade` with skill_name [1] raised pydantic's ValidationError deep in build_benchmark."""
    it = two_iterations / "iteration-2"
    path = it / "iteration.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, field: value}))
    result = cli(command, it)
    if command == "gate" and result.exit_code != EXIT_BAD_INPUT:  # gate reads benchmark.json, not iteration.json
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return
    assert_bad_input(result, "iteration.json", f"$.{field}")


@pytest.mark.parametrize("comparison", ["x", {"mean_difference": [1]}, {"against": {"a": 1}},
                                        {"interval": ["a", "b"]}, {"p_value": "small"}])
def test_wrong_types_in_history_json_are_bad_input(two_iterations: Path, comparison: Any) -> None:
    """`history show` printed these: TypeError (format a list), rich's NotRenderableError (a dict)."""
    assert cli("history", "record", two_iterations / "iteration-1").exit_code == 0
    assert cli("history", "record", two_iterations / "iteration-2").exit_code == 0
    path = two_iterations / "history.json"
    data = json.loads(path.read_text())
    data["iterations"][1]["comparison"] = comparison
    path.write_text(json.dumps(data))
    assert_bad_input(cli("history", "show", two_iterations), "history.json", "iterations[v1].comparison")


def test_wrong_per_eval_rates_in_history_json_are_bad_input(two_iterations: Path) -> None:
    """`history record` indexed per_eval items: TypeError on an integer."""
    assert cli("history", "record", two_iterations / "iteration-1").exit_code == 0
    path = two_iterations / "history.json"
    data = json.loads(path.read_text())
    data["iterations"][0]["per_eval"] = [1]
    path.write_text(json.dumps(data))
    assert_bad_input(cli("history", "record", two_iterations / "iteration-2"), "history.json",
                     "iterations[v0].per_eval[0]")


@pytest.mark.parametrize("name", ["grading.json", "timing.json", "outputs/metrics.json", "../../eval_metadata.json"])
def test_deep_run_files_are_reported_not_crashed_on(two_iterations: Path, name: str) -> None:
    """aggregate read eval_metadata.json with json.loads: RecursionError. Now the file is named."""
    it = two_iterations / "iteration-2"
    run = it / "eval-1-e1" / "with_skill" / "run-1"
    (run / name).resolve().write_bytes(DEEP)
    result = cli("aggregate", it)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, EXIT_BAD_INPUT)
    assert Path(name).name in result.output and "nested too deeply" in result.output, result.output


@pytest.mark.parametrize("extra", [{"a": 1}, "high", [1]])
def test_an_unknown_threshold_key_is_refused_by_the_gate_not_a_crash(two_iterations: Path, extra: Any) -> None:
    """Found by scripts/fuzz.py: float() of an extra key's value in for_thresholds (TypeError,
    ValueError). An unknown threshold is a misspelling nobody should gate past: exit 2, named."""
    it = two_iterations / "iteration-2"
    path = it / "skill-snapshot" / "evals" / "benchmark_config.json"
    data = json.loads(path.read_text())
    data["thresholds"] = {"min_pass_rate": 0.9, "x_unknown": extra}
    path.write_text(json.dumps(data))
    result = cli("gate", it)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    assert "$.thresholds.x_unknown: unknown key" in result.output and "benchmark_config.json" in result.output


@pytest.mark.parametrize(("section", "value", "command"), [
    ("summary", {"with_skill": 1.5}, "compare"), ("statistics", {"gates": {"min_pass_rate": 0.5}}, "gate"),
    ("statistics", {"gates": [1]}, "gate"),
])
def test_odd_sections_of_benchmark_json_do_not_crash(two_iterations: Path, section: str, value: Any,
                                                     command: str) -> None:
    """Found by scripts/fuzz.py --seed 2: `.get` on a number in compare's _summary and gate_check."""
    for it in ("iteration-1", "iteration-2"):
        path = two_iterations / it / "benchmark.json"
        data = json.loads(path.read_text())
        data[section] = value
        path.write_text(json.dumps(data))
    config = two_iterations / "iteration-2" / "skill-snapshot" / "evals" / "benchmark_config.json"
    cfg = json.loads(config.read_text())
    cfg["thresholds"] = {"min_pass_rate": 0.9}  # not the baked 0.5: for_thresholds reads the gates
    config.write_text(json.dumps(cfg))
    result = cli(command, two_iterations / "iteration-2")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 2, 3)


def test_a_history_without_versions_shows_none(two_iterations: Path) -> None:
    """Found by scripts/fuzz.py --seed 3: `history show` raised StopIteration on "iterations": []."""
    (two_iterations / "history.json").write_text(json.dumps(
        {"started_at": "x", "skill_name": "s", "current_best": "v0", "iterations": []}))
    result = cli("history", "show", two_iterations)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0 and "none yet" in result.output


# --- a crash is a bug: its own exit code, one line, a log file --------------------------------


def test_an_unexpected_exception_exits_70_with_a_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import skillassay.run.preflight as validate_mod
    from skillassay.cli import console
    from skillassay.cli.main import main

    def boom(*_: Any, **__: Any) -> None:
        raise RuntimeError("an invariant broke\nsecond line sk-ant-abcdefghijklmnop")

    monkeypatch.setattr(validate_mod, "validate_paths", boom)
    monkeypatch.setattr(console, "crash_log_dir", lambda: tmp_path / "logs")
    monkeypatch.setattr("sys.argv", ["skillassay", "validate", str(tmp_path)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == EXIT_INTERNAL != 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" in err and "RuntimeError: an invariant broke" in err
    log = Path(re.search(r"traceback in (\S+\.log)", err).group(1))  # type: ignore[union-attr]
    assert log.parent == tmp_path / "logs"
    text = log.read_text()
    assert "Traceback" in text and "boom" in text and "validate" in text
    assert "sk-ant-abcdefghijklmnop" not in text  # redacted like every file we write


def test_input_errors_and_exits_pass_through_the_crash_handler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from skillassay.cli.main import main

    monkeypatch.setattr("sys.argv", ["skillassay", "validate", str(tmp_path / "missing.json")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == EXIT_BAD_INPUT


# --- the served viewer ---------------------------------------------------------------------


def test_deep_feedback_body_is_a_400_not_a_dropped_connection(two_iterations: Path) -> None:
    import http.client

    from skillassay.viewer.server import start_server

    srv, _ = start_server(two_iterations / "iteration-2")
    try:
        for body in (DEEP[:400_000], b'{"run_id": ' + BIG_INT + b"}", b'{"status": "\\ud800"}'):
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            conn.request("POST", "/api/feedback", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            assert resp.status == 400, resp.status
            assert "error" in json.loads(resp.read())
            conn.close()
    finally:
        srv.shutdown()
        srv.server_close()


# --- property tests: damaged files through every reader ---------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=10),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8)
RAW = ["[" * 3_000 + "]" * 3_000, "9" * 5_000, '"\\ud800"', "NaN", "1e400", '{"a":' * 200 + "1" + "}" * 200]


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        out.extend(_paths(value, (*prefix, key)))
    return out


@st.composite
def damaged(draw: st.DrawFn, original: Any) -> bytes:
    """A valid document with one node replaced (by any JSON value, or by text json cannot make:
    deep nesting, huge integers, lone surrogates, NaN), or cut short, or other bytes."""
    kind = draw(st.sampled_from(["value", "raw", "cut", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=12))
    text = json.dumps(original)
    if kind == "cut":
        return text[: draw(st.integers(0, len(text)))].encode()
    path = draw(st.sampled_from(_paths(original)))
    hole = "\u0000HOLE"
    data = json.loads(text)
    if path:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = hole
    else:
        data = hole
    new = draw(json_values) if kind == "value" else None
    out = json.dumps(data).replace(json.dumps(hole), draw(st.sampled_from(RAW)) if kind == "raw" else json.dumps(new))
    return out.encode()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample(tmp_path_factory.mktemp("fuzz") / "ws")


def build_sample(ws: Path) -> Path:
    """Two iterations, a history of both, an eval set in the snapshot (scripts/fuzz.py uses it too)."""
    write_iteration(ws, 1, {1: ("PF", "FF"), 2: ("PP", "FP")})
    write_iteration(ws, 2, {1: ("PP", "FF"), 2: ("PF", "FF")})
    assert cli("history", "record", ws / "iteration-1").exit_code == 0
    assert cli("history", "record", ws / "iteration-2").exit_code == 0
    shutil.copy(EXAMPLE / "evals" / "evals.json", ws / "iteration-2" / "skill-snapshot" / "evals" / "evals.json")
    return ws


EXAMPLE = repo_paths.REPO / "examples" / "acme-vpn"
RUN = "iteration-2/eval-1-e1/with_skill/run-1"
FILES = {  # a file of the sample workspace -> the readers that read it
    "iteration-2/iteration.json": ["aggregate", "compare", "gate"],
    "iteration-2/benchmark.json": ["gate", "compare", "view", "view-benchmark", "history-record"],
    "iteration-1/benchmark.json": ["compare"],
    f"{RUN}/grading.json": ["aggregate", "view"],
    f"{RUN}/timing.json": ["aggregate", "view"],
    f"{RUN}/outputs/metrics.json": ["aggregate", "view"],
    "iteration-2/eval-1-e1/eval_metadata.json": ["aggregate", "view"],
    "history.json": ["history-show", "history-record"],
    "iteration-2/skill-snapshot/evals/benchmark_config.json": ["gate", "validate"],
    "iteration-2/skill-snapshot/evals/evals.json": ["validate", "evals"],
}


def read_with(reader: str, ws: Path) -> None:
    """One reader, as a library call (fast; the CLI adds only the exit-code mapping)."""
    it = ws / "iteration-2"
    if reader == "aggregate":
        from skillassay.workflows.aggregate import aggregate_iteration

        aggregate_iteration(it, output=ws / "out" / "benchmark.json")
    elif reader == "compare":
        from skillassay.analyze.compare import compare

        compare(it, ws / "iteration-1")
    elif reader == "gate":
        from skillassay.workflows.gate_iteration import check_iteration

        check_iteration(it)
    elif reader == "view":
        from skillassay.report.charts import load_benchmark
        from skillassay.viewer.build import build_index, index_payload, run_payload
        from skillassay.viewer.page import script_json

        bench = load_benchmark(it)
        index = build_index(it, bench)
        script_json(index_payload(index, bench, "static"))
        script_json([run_payload(index, r.run_id, None, served=False) for r in index.runs])
    elif reader == "view-benchmark":  # the charts: the slow part of the viewer, so only for benchmark.json
        from skillassay.report.charts import load_benchmark
        from skillassay.viewer.build import benchmark_payload
        from skillassay.viewer.page import script_json

        script_json(benchmark_payload(it, load_benchmark(it)))
    elif reader == "history-show":
        from rich.console import Console

        from skillassay.cli.improve import best_reason, render_history
        from skillassay.improve.history import load_history

        history = load_history(ws)
        if history is not None:
            Console(file=open("/dev/null", "w"), width=120).print(render_history(history), best_reason(history))  # noqa: SIM115
    elif reader == "history-record":
        from skillassay.improve.history import record_iteration

        record_iteration(ws, it)
    elif reader == "validate":
        from skillassay.run.preflight import validate_paths

        snapshot = it / "skill-snapshot" / "evals"
        validate_paths([snapshot / "benchmark_config.json", snapshot / "evals.json"], None)
    elif reader == "evals":  # what `run` does with an eval set it accepted: write each eval's metadata
        from skillassay.models import EvalMetadata, EvalSet
        from skillassay.store.jsonio import dump_json, load_model

        for ev in load_model(it / "skill-snapshot" / "evals" / "evals.json", EvalSet).evals:
            dump_json(EvalMetadata(eval_id=ev.id, eval_name=ev.name, prompt=ev.prompt,
                                   expectations=ev.all_expectations()))


@st.composite
def file_cases(draw: st.DrawFn, ws: Path) -> tuple[str, bytes, str]:
    rel = draw(st.sampled_from(sorted(FILES)))
    return rel, draw(damaged(json.loads((ws / rel).read_text()))), draw(st.sampled_from(FILES[rel]))


class Scratch:
    """A copy of the sample, put back after each case by rewriting only the files that changed
    (a fresh copytree per case costs more than most readers)."""

    def __init__(self, sample: Path, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(sample, path)
        self.path = path
        self.files = {p: (p.read_bytes(), p.stat()) for p in path.rglob("*") if p.is_file()}

    def restore(self) -> None:
        for p in [p for p in self.path.rglob("*") if p.is_file() and p not in self.files]:
            p.unlink()
        for p, (data, was) in self.files.items():
            now = p.stat() if p.exists() else None
            if now is None or (now.st_size, now.st_mtime_ns) != (was.st_size, was.st_mtime_ns):
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
                os.utime(p, ns=(was.st_atime_ns, was.st_mtime_ns))

    def run(self, case: tuple[str, bytes, str]) -> None:
        """Damage one file, read it with one reader, put everything back. Raises what the reader
        raised, except InputError naming a file (the answer to bad input)."""
        rel, content, reader = case
        (self.path / rel).write_bytes(content)
        try:
            read_with(reader, self.path)
        except InputError as exc:
            assert exc.problems and all(p.file for p in exc.problems)
        finally:
            self.restore()


@pytest.mark.slow
def test_damaged_files_never_crash_a_reader(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Any damage to any file: the reader returns, or raises InputError naming that file."""
    scratch = Scratch(sample, tmp_path_factory.mktemp("scratch") / "ws")

    @settings(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(file_cases(sample))
    def one(case: tuple[str, bytes, str]) -> None:
        scratch.run(case)

    one()


@settings(max_examples=150, deadline=None, database=None)
@given(st.one_of(st.binary(max_size=40), st.text(max_size=40).map(str.encode),
                 st.sampled_from(RAW).map(str.encode), json_values.map(lambda v: json.dumps(v).encode())))
def test_parse_json_bytes_raises_only_value_errors(raw: bytes) -> None:
    """The contract every lenient reader relies on: `except ValueError` catches every failure."""
    try:
        data = parse_json_bytes(raw)
    except ValueError:
        return
    json.dumps(data).encode("utf-8")  # what it returns can be written back
