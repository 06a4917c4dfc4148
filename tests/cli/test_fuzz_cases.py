"""Crashes (exit 70) scripts/fuzz.py --level cli found after issue 40's first round of fixes, each
reproduced on a workspace made by `run`; the earlier ones are in test_fuzz_exit70.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runner import invoke
from repo_paths import EXAMPLE

CLEAN = {0, 1, 2, 3}


@pytest.fixture(scope="module")
def iteration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """iteration-1 of the example skill cut to 3 evals, made by `run` with the echo executor."""
    root = tmp_path_factory.mktemp("fuzzcases")
    skill = root / "acme-vpn"
    shutil.copytree(EXAMPLE, skill)
    evals_path = skill / "evals" / "evals.json"
    evals = json.loads(evals_path.read_text())
    evals["evals"] = evals["evals"][:3]
    evals_path.write_text(json.dumps(evals))
    result = invoke("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(root / "ws"))
    assert result.exit_code in CLEAN, result.output
    return root / "ws" / "iteration-1"


@pytest.fixture
def it(iteration: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(iteration, tmp_path / "iteration-1"))


@pytest.mark.parametrize("bounds", [[0.5], [0.1, 0.5, 0.9], []])
@pytest.mark.parametrize("command", ["report", "gate"])
def test_a_gates_interval_of_other_than_two_bounds_does_not_crash(it: Path, command: str, bounds: list[float]) -> None:
    """Fuzzing (seed 1, case 852): a threshold's interval of one bound in benchmark.json's
    statistics.gates made `report` raise IndexError (exit 70) in report.threshold_sentence."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    gates = bench["statistics"]["gates"]
    assert gates
    for gate in gates.values():
        gate["interval"] = bounds
    path.write_text(json.dumps(bench))
    result = invoke(command, str(it))
    assert not result.crashed and result.exit_code in CLEAN, result.output


@pytest.mark.parametrize("value", ["1e400", "-1e400"])
@pytest.mark.parametrize("key", ["min_improvement_ratio", "max_avg_tokens"])
def test_an_infinite_threshold_is_bad_input_naming_it(it: Path, tmp_path: Path, key: str, value: str) -> None:
    """Fuzzing (seed 3, case 1218): min_improvement_ratio 1e400 (read as infinity) in the config
    made `gate --config` raise ValueError (exit 70) in the ratio's sign-flip test (inf x 0 is NaN)."""
    config = tmp_path / "benchmark_config.json"
    config.write_text('{"trials_per_eval": 1, "thresholds": {"%s": %s}}' % (key, value))  # noqa: UP031 - JSON text
    result = invoke("gate", str(it), "--config", str(config))
    assert not result.crashed and result.exit_code == 2, result.output
    assert key in result.output and "benchmark_config.json" in result.output


@pytest.mark.parametrize("bounds", [[0.5], [0.1, 0.5, 0.9]])
def test_a_trigger_split_interval_of_other_than_two_bounds_does_not_crash_report(it: Path, bounds: list[float]) -> None:
    """Fuzzing (seed 3, case 1161): a Wilson interval of one bound in benchmark.json's
    trigger_conditioned made `report` raise IndexError (exit 70) in report/loading._ci."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    split = bench.get("trigger_conditioned")
    assert isinstance(split, dict), sorted(bench)
    found = _set_wilson(split, bounds)
    assert found > 0
    path.write_text(json.dumps(bench))
    result = invoke("report", str(it))
    assert not result.crashed and result.exit_code in CLEAN, result.output


def _set_wilson(data: object, bounds: list[float]) -> int:
    """Set every `wilson` and `load_rate_wilson` interval under `data`; how many were set."""
    found = 0
    if isinstance(data, dict):
        for k in list(data):
            if k in ("wilson", "load_rate_wilson"):
                data[k] = bounds
                found += 1
            else:
                found += _set_wilson(data[k], bounds)
    elif isinstance(data, list):
        found += sum(_set_wilson(v, bounds) for v in data)
    return found


@pytest.fixture
def skill(iteration: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(iteration.parent.parent / "acme-vpn", tmp_path / "acme-vpn"))


def test_a_nul_in_the_eval_set_path_is_bad_input_naming_it(skill: Path, tmp_path: Path) -> None:
    """Fuzzing (seed 1, case 2159): eval_set_path "a\\u0000b" in benchmark_config.json made `run`
    raise ValueError (embedded null byte, exit 70) in run/preflight.find_evals."""
    path = skill / "evals" / "benchmark_config.json"
    config = json.loads(path.read_text())
    config["eval_set_path"] = "a\u0000b"
    path.write_text(json.dumps(config))
    result = invoke("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(tmp_path / "ws"))
    assert not result.crashed and result.exit_code == 2, result.output
    assert "eval_set_path" in result.output and "benchmark_config.json" in result.output


def test_an_infinite_threshold_stops_run_before_any_trial(skill: Path, tmp_path: Path) -> None:
    """Fuzzing (seed 2, case 2047): the same infinite min_improvement_ratio made `run` crash after
    its trials."""
    path = skill / "evals" / "benchmark_config.json"
    path.write_text(path.read_text().replace('"min_improvement_ratio": 1.25', '"min_improvement_ratio": 1e400'))
    result = invoke("run", str(skill), "--executor", "echo", "--trials", "1", "--workspace", str(tmp_path / "ws"))
    assert not result.crashed and result.exit_code == 2, result.output
    assert "min_improvement_ratio" in result.output and not (tmp_path / "ws").exists()


@pytest.mark.parametrize("value", [{}, [1]])
def test_a_run_number_of_the_wrong_type_does_not_crash_view(it: Path, tmp_path: Path, value: object) -> None:
    """Fuzzing (seed 2, cases 3179 and 3181): a dict as a run's run_number in benchmark.json made
    `view --static` raise TypeError (unhashable, exit 70) in viewer/build._bench_results."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    bench["runs"][0]["run_number"] = value
    path.write_text(json.dumps(bench))
    result = invoke("view", str(it), "--static", str(tmp_path / "page.html"))
    assert not result.crashed and result.exit_code in CLEAN, result.output


def test_a_per_eval_arm_without_its_pass_count_does_not_crash_report(it: Path) -> None:
    """Fuzzing (seed 2, case 544): a per_eval arm without `passes` in benchmark.json's statistics
    (every count is optional in the schema) made `report` raise KeyError (exit 70) in
    report.certainty_notes."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    arms = [arm for row in bench["statistics"]["per_eval"] for arm in row["configurations"].values()]
    assert arms and all(arm.get("completed") for arm in arms)
    for arm in arms:
        del arm["passes"]
    path.write_text(json.dumps(bench))
    result = invoke("report", str(it))
    assert not result.crashed and result.exit_code in CLEAN, result.output


def _edit_key(data: object, key: str, value: object) -> int:
    """Delete (value is DELETE) or set every `key` under `data`; how many were found."""
    found = 0
    if isinstance(data, dict):
        for k in list(data):
            if k == key:
                found += 1
                if value is DELETE:
                    del data[k]
                else:
                    data[k] = value
            else:
                found += _edit_key(data[k], key, value)
    elif isinstance(data, list):
        found += sum(_edit_key(v, key, value) for v in data)
    return found


DELETE = object()


@pytest.mark.parametrize(("key", "value"), [("configurations", DELETE), ("effect", None)], ids=["deleted", "null"])
def test_a_cost_section_without_a_part_does_not_crash_report(it: Path, key: str, value: object) -> None:
    """Found by deleting (or nulling) each key of benchmark.json in turn (a scan of the fuzz's
    `delete` and `retype` cases): a `cost` without configurations or effect (each optional in the
    schema) made `report` raise UndefinedError in cost.md.j2, AttributeError in
    report.summary_rows or KeyError/TypeError in analyze/cost.extra_success_text (exit 70)."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    assert _edit_key(bench["cost"], key, value) > 0
    path.write_text(json.dumps(bench))
    result = invoke("report", str(it))
    assert not result.crashed and result.exit_code in CLEAN, result.output


def test_the_cost_table_takes_any_cost_section_the_schema_accepts(it: Path) -> None:
    """Every key of a real `cost` section deleted or nulled in turn, wherever it occurs: the cost
    table (report.md, benchmark.md) and line (console, CI summary) take whatever the schema lets through."""
    from skillassay.analyze.cost import cost_summary
    from skillassay.models.checked import problem_at
    from skillassay.models.cost import Cost
    from skillassay.report.benchmark_md import environment

    table = environment().from_string('{% from "cost.md.j2" import cost_table %}{{ cost_table(cost, "##") }}')
    cost = json.loads((it / "benchmark.json").read_text())["cost"]
    keys: set[str] = set()

    def collect(data: object) -> None:
        if isinstance(data, dict):
            keys.update(data)
            for v in data.values():
                collect(v)
        elif isinstance(data, list):
            for v in data:
                collect(v)

    collect(cost)
    assert {"configurations", "effect", "per_extra_success", "total_usd"} <= keys
    tried = 0
    for key in sorted(keys):
        for value in (DELETE, None, {}):
            damaged = json.loads(json.dumps(cost))
            _edit_key(damaged, key, value)
            if problem_at(Cost, damaged) is None:  # what the schema refuses is exit 2 before any table
                assert "Cost (USD)" in table.render(cost=damaged), (key, value)
                assert cost_summary(damaged).startswith("cost: "), (key, value)
                tried += 1
    assert tried > len(keys)


def test_a_cost_effect_of_the_wrong_type_does_not_crash_view(it: Path, tmp_path: Path) -> None:
    """Fuzzing (seed 3, case 4959): a list as cost.effect.per_extra_success.pass_rate_difference
    in benchmark.json made `view --static` raise TypeError (exit 70) in
    analyze/cost.extra_success_text, which the viewer's headline calls on the cost as read."""
    path = it / "benchmark.json"
    bench = json.loads(path.read_text())
    bench["cost"]["effect"]["per_extra_success"]["pass_rate_difference"] = ["x", "y"]
    path.write_text(json.dumps(bench))
    result = invoke("view", str(it), "--static", str(tmp_path / "page.html"))
    assert not result.crashed and result.exit_code in CLEAN, result.output


def test_the_viewers_headline_takes_any_cost_section(it: Path) -> None:
    """Every key of a real `cost` section set to a value of each wrong type in turn: the viewer
    (which reads benchmark.json leniently) builds its headline all the same."""
    from skillassay.viewer.build import headline

    bench = json.loads((it / "benchmark.json").read_text())
    keys: set[str] = set()
    stack: list[object] = [bench["cost"]]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            keys.update(node)
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    assert {"effect", "per_extra_success", "pass_rate_difference", "mean_difference_usd"} <= keys
    for key in sorted(keys):
        for value in ("x", ["x"], {"a": 1}, None, DELETE):
            damaged = json.loads(json.dumps(bench))
            _edit_key(damaged["cost"], key, value)
            assert isinstance(headline(damaged), list), (key, value)


def test_a_history_comparison_of_null_does_not_crash_history_show(iteration: Path, tmp_path: Path) -> None:
    """Found by setting each key of history.json to null in turn: `"comparison": null` in an
    entry made `history show` raise AttributeError (exit 70) in cli/improve.best_reason."""
    ws = Path(shutil.copytree(iteration.parent, tmp_path / "ws"))
    path = ws / "history.json"
    history = json.loads(path.read_text())
    assert history["iterations"]
    for entry in history["iterations"]:
        entry["comparison"] = None
    path.write_text(json.dumps(history))
    result = invoke("history", "show", str(ws))
    assert not result.crashed and result.exit_code in CLEAN, result.output


@pytest.mark.parametrize("bounds", [[-1e29, 1.0], [0.0, 1e300]])
def test_a_history_interval_beyond_28_digits_does_not_crash_history_show(iteration: Path, tmp_path: Path,
                                                                        bounds: list[float]) -> None:
    """Found by scripts/fuzz.py (seeds 1 and 3 on d322803): a comparison interval of -1.1e29 in
    history.json made wording.whole_percent's Decimal.quantize raise InvalidOperation (exit 70)."""
    ws = Path(shutil.copytree(iteration.parent, tmp_path / "ws"))
    path = ws / "history.json"
    history = json.loads(path.read_text())
    assert history["iterations"]
    for entry in history["iterations"]:  # the finding's comparison, with its interval and mean
        entry["comparison"] = {"against": "v0", "result": "tie", "n_paired_evals": 3, "p_value": 1.0,
                               "mean_difference": bounds[0], "interval": bounds}
    path.write_text(json.dumps(history))
    result = invoke("history", "show", str(ws))
    assert not result.crashed and result.exit_code in CLEAN, result.output
