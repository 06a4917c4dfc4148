"""Inputs are checked before any trial runs, by one validation path (issue 14): `validate` and
`run` refuse the same mistakes with the same messages (exit 2, file and field named), nothing
is executed for bad input, an unusable executor is caught before trials are spent, and a
threshold the executor cannot measure is named up front and shown as not measured."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The exit code and the output with rich's line wrapping undone."""
    result = invoke(*args, env=env)
    return result.exit_code, result.flat


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def config_of(skill: Path) -> Path:
    return skill / "evals" / "benchmark_config.json"


def evals_of(skill: Path) -> Path:
    return skill / "evals" / "evals.json"


def nothing_ran(ws: Path) -> bool:
    return not list(ws.glob("iteration-*/eval-*/*/run-*"))


def run_echo(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    return cli("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(ws), *extra)


# ---- unknown keys and non-numeric thresholds ---------------------------------------------

@pytest.mark.parametrize(("change", "key", "nearest"), [
    (lambda d: d["thresholds"].update(min_pass_rat=d["thresholds"].pop("min_pass_rate")),
     "min_pass_rat", "min_pass_rate"),
    (lambda d: d.update(trails_per_eval=d.pop("trials_per_eval")), "trails_per_eval", "trials_per_eval"),
    (lambda d: d["thresholds"].update(max_avg_duration_second=0), "max_avg_duration_second",
     "max_avg_duration_seconds"),
])
def test_unknown_config_key_is_refused_with_the_nearest_known_one(
        example_skill: Path, tmp_path: Path, change: Callable[[Any], None], key: str, nearest: str) -> None:
    edit_json(config_of(example_skill), change)
    ws = tmp_path / "ws"
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, ws)):
        assert code == 2, out
        assert "benchmark_config.json" in out and f"unknown key {key!r}" in out, out
        assert f"did you mean {nearest!r}" in out, out
        assert "Traceback" not in out
    assert nothing_ran(ws)


def test_unknown_evals_keys_are_refused(example_skill: Path, tmp_path: Path) -> None:
    def change(d: Any) -> None:
        d["evals"][0]["expectation"] = d["evals"][0].pop("expectations")
        d["skil_name"] = d.pop("skill_name")
    edit_json(evals_of(example_skill), change)
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, tmp_path / "ws")):
        assert code == 2, out
        assert "$.evals[0].expectation: unknown key 'expectation'; did you mean 'expectations'" in out, out
        assert "unknown key 'skil_name'; did you mean 'skill_name'" in out, out


def test_an_unknown_key_with_nothing_near_lists_the_known_ones(example_skill: Path) -> None:
    edit_json(config_of(example_skill), lambda d: d["thresholds"].update(note="tbd"))
    code, out = cli("validate", str(example_skill))
    assert code == 2 and "unknown key 'note'" in out and "min_improvement_ratio" in out, out
    assert "did you mean" not in out


@pytest.mark.parametrize("value", ["0.8", True, [0.8]])
def test_non_numeric_threshold_is_refused_before_any_trial(example_skill: Path, tmp_path: Path,
                                                           value: Any) -> None:
    edit_json(config_of(example_skill), lambda d: d["thresholds"].update(min_pass_rate=value))
    ws = tmp_path / "ws"
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, ws)):
        assert code == 2, out
        assert "$.thresholds.min_pass_rate" in out and "number" in out, out
    assert nothing_ran(ws)


def test_schema_key_for_editors_is_allowed(example_skill: Path) -> None:
    edit_json(config_of(example_skill), lambda d: d.update({"$schema": "config.schema.json"}))
    edit_json(evals_of(example_skill), lambda d: d.update({"$schema": "evals.schema.json"}))
    code, out = cli("validate", str(example_skill))
    assert code == 0, out


# ---- one validation path: validate refuses what run refuses, and the other way round ------

def _first_expectation(value: Any) -> Callable[[Any], None]:
    def change(d: Any) -> None:
        d["evals"][0]["expectations"] = [value]
    return change


def _files(entry: str) -> Callable[[Any], None]:
    def change(d: Any) -> None:
        d["evals"][0]["files"] = [entry]
    return change


BAD_EVALS = [
    ("unknown-type", _first_expectation({"type": "contain", "value": "4433"}), "unknown assertion type 'contain'"),
    ("missing-value", _first_expectation({"type": "contains"}), "value"),
    ("bad-regex", _first_expectation({"type": "regex", "pattern": "(07:30"}), "regex"),
    ("dotdot", _files("../../../../../../etc/passwd"), "$.evals[0].files[0]"),
    ("absolute", _files("/etc/passwd"), "$.evals[0].files[0]"),
    ("missing-file", _files("nope.txt"), "$.evals[0].files[0]"),
]


@pytest.mark.parametrize(("change", "fragment"), [b[1:] for b in BAD_EVALS], ids=[b[0] for b in BAD_EVALS])
def test_validate_and_run_refuse_the_same_evals(example_skill: Path, tmp_path: Path,
                                                change: Callable[[Any], None], fragment: str) -> None:
    edit_json(evals_of(example_skill), change)
    ws = tmp_path / "ws"
    (code_v, out_v), (code_r, out_r) = cli("validate", str(example_skill)), run_echo(example_skill, ws)
    assert code_v == 2 and fragment in out_v, out_v
    assert code_r == 2 and fragment in out_r, out_r
    errors_v = [line for line in out_v.split("error ") if line]
    assert all(e.strip() in out_r for e in errors_v), (out_v, out_r)  # the same messages
    assert nothing_ran(ws)


def test_a_symlink_leaving_the_skill_folder_is_refused_by_both(example_skill: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    (example_skill / "evals" / "link.txt").symlink_to(outside)
    edit_json(evals_of(example_skill), _files("evals/link.txt"))
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, tmp_path / "ws")):
        assert code == 2 and "$.evals[0].files[0]" in out and "outside" in out, out


def test_a_standalone_evals_file_gets_the_same_checks(example_skill: Path) -> None:
    edit_json(evals_of(example_skill), _first_expectation({"type": "contain", "value": "4433"}))
    code, out = cli("validate", str(evals_of(example_skill)))
    assert code == 2 and "unknown assertion type 'contain'" in out, out


def test_run_applies_the_skill_name_check_that_validate_applies(example_skill: Path, tmp_path: Path) -> None:
    md = example_skill / "SKILL.md"
    md.write_text(md.read_text(encoding="utf-8").replace("name: acme-vpn", "name: Acme_VPN", 1), encoding="utf-8")
    edit_json(evals_of(example_skill), lambda d: d.update(skill_name="Acme_VPN"))
    ws = tmp_path / "ws"
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, ws)):
        assert code == 2, out
        assert "SKILL.md: name: only lowercase" in out, out
    assert nothing_ran(ws) and not ws.exists()


def test_run_refuses_evals_for_another_skill_like_validate(example_skill: Path, tmp_path: Path) -> None:
    edit_json(evals_of(example_skill), lambda d: d.update(skill_name="other-skill"))
    for code, out in (cli("validate", str(example_skill)), run_echo(example_skill, tmp_path / "ws")):
        assert code == 2 and "$.skill_name" in out and "acme-vpn" in out, out


def test_the_example_still_validates_and_runs(example_skill: Path, tmp_path: Path) -> None:
    assert cli("validate", str(example_skill))[0] == 0
    code, out = run_echo(example_skill, tmp_path / "ws")
    assert code in (0, 1, 3), out
    assert not nothing_ran(tmp_path / "ws")


# ---- init's placeholders ------------------------------------------------------------------

@pytest.fixture
def scaffolded(tmp_path: Path) -> Path:
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: Extract tables from PDF files. "
                                    "Use for PDFs.\n---\n# PDF tools\n", encoding="utf-8")
    assert cli("init", str(skill))[0] == 0
    return skill


def test_init_placeholders_are_refused_until_edited(scaffolded: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for code, out in (cli("validate", str(scaffolded)), run_echo(scaffolded, ws)):
        assert code == 2, out
        assert "$.evals[0].prompt" in out and "placeholder" in out and "skillassay init" in out, out
        assert "$.evals[0].expectations[0].value" in out and "$.evals[2].expected_output" in out, out
    assert nothing_ran(ws)

    def fill(d: Any) -> None:
        for ev in d["evals"]:
            ev["prompt"] = f"Extract the table of invoice {ev['id']}."
            ev["expected_output"] = "The table as CSV."
            ev["expectations"] = [{"type": "contains", "value": ","}, "The answer is a CSV table."]
    edit_json(evals_of(scaffolded), fill)
    code, out = cli("validate", str(scaffolded))
    assert code == 2 and "needs a judge" in out, out  # a plain expectation: refused without --judge, as by run
    code, out = cli("validate", str(scaffolded), "--judge", "local")
    assert code == 0, out


def test_one_placeholder_left_is_still_refused(scaffolded: Path) -> None:
    def fill_all_but_one(d: Any) -> None:
        for ev in d["evals"]:
            ev["prompt"], ev["expected_output"] = "Real prompt.", "Real answer."
            ev["expectations"] = ["The answer is right."]
        d["evals"][1]["expectations"].append("TODO: a statement about the output that a judge can check")
    edit_json(evals_of(scaffolded), fill_all_but_one)
    code, out = cli("validate", str(scaffolded))
    assert code == 2 and "$.evals[1].expectations[1]" in out, out
    assert "$.evals[0]" not in out


# ---- the executor is checked before trials are spent ----------------------------------------

def _fake_binary(folder: Path, name: str) -> Path:
    """A real executable on PATH that records being run (it must not be)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    marker = folder / f"{name}.ran"
    path.write_text(f"#!{sys.executable}\nimport pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n",
                    encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return marker


def _env_without(*names: str, path: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in names}
    if path is not None:
        env["PATH"] = path
    return env


def test_claude_code_without_its_cli_exits_2_before_any_trial(example_skill: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    ws = tmp_path / "ws"
    code, out = cli("run", str(example_skill), "--executor", "claude-code", "--workspace", str(ws))
    assert code == 2, out
    assert "--executor claude-code" in out and "claude not found on PATH" in out, out
    assert nothing_ran(ws) and not ws.exists()


def test_claude_code_without_a_key_exits_2_before_any_trial(example_skill: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    marker = _fake_binary(tmp_path / "bin", "claude")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    ws = tmp_path / "ws"
    code, out = cli("run", str(example_skill), "--executor", "claude-code", "--workspace", str(ws))
    assert code == 2, out
    assert "ANTHROPIC_API_KEY not set" in out, out
    assert not marker.exists() and nothing_ran(ws)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_openai_endpoint_not_answering_exits_2_before_any_trial(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, out = cli("run", str(example_skill), "--executor", "openai", "--model", "m", "-o", f"base_url={url}",
                    "--workspace", str(ws))
    assert code == 2, out
    assert "--executor openai" in out and "not answering" in out and url in out, out
    assert nothing_ran(ws)


def test_command_executor_whose_program_is_missing_exits_2(example_skill: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    argv = json.dumps(["no-such-agent-binary-xyz", "{prompt}"])
    code, out = cli("run", str(example_skill), "--executor", "command", "-o", f"argv={argv}", "--workspace", str(ws))
    assert code == 2 and "no-such-agent-binary-xyz" in out and "not found" in out, out
    assert nothing_ran(ws)


# ---- thresholds the executor cannot measure --------------------------------------------------

def test_a_threshold_the_executor_cannot_measure_is_named_and_not_measured(example_skill: Path,
                                                                           tmp_path: Path) -> None:
    """The command executor reports no tokens: max_avg_tokens is named before the trials and
    shown as NOT MEASURED, and it does not hold the gate INCONCLUSIVE (here every eval passes
    with the skill, so min_pass_rate passes and the gate passes)."""
    answers = "4433 WireGuard netops@acme.example 3 acmeguard vpn.acme.example Paris 42"
    script = f"import os; print({answers!r} if os.environ['SKILLASSAY_SKILL_DIR'] else 'no idea')"
    argv = json.dumps([sys.executable, "-c", script])
    edit_json(config_of(example_skill), lambda d: d.update(
        thresholds={"max_avg_tokens": 1000, "min_pass_rate": 0.1}, trials_per_eval=2))
    ws = tmp_path / "ws"
    code, out = cli("run", str(example_skill), "--executor", "command", "-o", f"argv={argv}", "--workspace", str(ws))
    assert "max_avg_tokens cannot be measured with the command executor" in out, out
    assert out.index("cannot be measured") < out.index("trials run"), out
    assert "NOT MEASURED: max_avg_tokens" in out, out
    assert code == 0, out
    code, out = cli("gate", str(ws / "iteration-1"))
    assert code == 0 and "NOT MEASURED: max_avg_tokens" in out, out


def test_a_measurable_threshold_without_a_figure_stays_inconclusive(example_skill: Path, tmp_path: Path) -> None:
    """Only the executor's declared inability makes a threshold "not measured": the echo
    executor reports tokens, so its thresholds are gated as before."""
    edit_json(config_of(example_skill), lambda d: d.update(thresholds={"max_avg_tokens": 1000000}))
    code, out = run_echo(example_skill, tmp_path / "ws")
    assert "cannot be measured" not in out and "NOT MEASURED" not in out, out


class _ModelsEndpoint(BaseHTTPRequestHandler):
    """GET <prefix>/models as the hosted APIs answer it: a model list, or their 401 error body."""

    status = 200
    bodies = {  # (api, status) -> body, as OpenAI and Anthropic send them
        ("openai", 200): {"object": "list", "data": [{"id": "m", "object": "model", "created": 0,
                                                      "owned_by": "me"}]},
        ("openai", 401): {"error": {"message": "Incorrect API key provided: sk-bad.", "type":
                                    "invalid_request_error", "param": None, "code": "invalid_api_key"}},
        ("anthropic", 200): {"data": [{"type": "model", "id": "m", "display_name": "M",
                                       "created_at": "2025-01-01T00:00:00Z"}],
                             "has_more": False, "first_id": "m", "last_id": "m"},
        ("anthropic", 401): {"type": "error", "error": {"type": "authentication_error",
                                                        "message": "invalid x-api-key"}},
    }
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's hook name
        api = "anthropic" if "x-api-key" in self.headers else "openai"
        type(self).seen.append(self.path)
        data = json.dumps(self.bodies[(api, self.status)]).encode()
        self.send_response(self.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def models_endpoint() -> Iterator[tuple[str, type[_ModelsEndpoint]]]:
    handler = type("Handler", (_ModelsEndpoint,), {"status": 200, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_endpoint_probe_accepts_an_answering_server_and_names_a_refused_key(
        api: str, models_endpoint: tuple[str, type[_ModelsEndpoint]], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(api)
    from skillassay.executors import ExecutorSettings, load_executor_class

    url, handler = models_endpoint
    base_url = f"{url}/v1" if api == "openai" else url
    monkeypatch.setenv("OPENAI_API_KEY" if api == "openai" else "ANTHROPIC_API_KEY", "sk-bad")
    executor = load_executor_class(api)(ExecutorSettings(model="m", options={"base_url": base_url}))
    assert executor.ready() is None
    assert [p.split("?")[0] for p in handler.seen] == ["/v1/models"]  # one free request, no completion
    handler.status = 401
    missing = executor.ready()
    assert missing is not None and "refused the key (HTTP 401)" in missing and url in missing


def test_openai_key_refused_exits_2_before_any_trial(example_skill: Path, tmp_path: Path,
                                                     models_endpoint: tuple[str, type[_ModelsEndpoint]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    url, handler = models_endpoint
    handler.status = 401
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    ws = tmp_path / "ws"
    code, out = cli("run", str(example_skill), "--executor", "openai", "--model", "m", "-o",
                    f"base_url={url}/v1", "--workspace", str(ws))
    assert code == 2 and "refused the key (HTTP 401)" in out, out
    assert nothing_ran(ws)
