"""A multi-turn eval through the whole `run` on the echo executor (it answers each turn with
what that turn showed it: the skill, when given, and the turn's message): per-turn transcript,
turns.json, per-turn figures in metrics.json and timing.json, grading that names each turn, an
and an executor that cannot carry a conversation refused before any trial runs. (An errored turn
and a kill between turns: test_command_turns.py, tests/run/test_interrupt_turns.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import invoke
from plugin_support import on_path, write_distribution

from skillassay import plugins
from skillassay.models import Benchmark, Grading, Metrics, Timing

SKILL_MD = ("---\nname: returns\ndescription: Acme returns facts. Use when asked about Acme returns.\n---\n"
            "Return window: 21 days.\nReturn code: RTN-5521.\n")


def conversation(eval_id: int) -> dict:
    return {"id": eval_id, "name": f"talk-{eval_id}", "turns": [
        {"prompt": "How long may I return?", "expectations": [{"type": "contains", "value": "21 days"},
                                                             {"type": "contains", "value": "How long"}]},
        {"prompt": "Which code?", "expectations": [{"type": "contains", "value": "RTN-5521"}]},
        {"prompt": "Say goodbye", "expectations": [{"type": "contains", "value": "goodbye"}]}],
        "expectations": [{"type": "contains", "value": "How long", "text": "the last answer repeats turn 1"}]}


def make_skill(root: Path, evals: list[dict] | None = None) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    evals = evals or [conversation(1), conversation(2)]
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "returns", "evals": evals}), encoding="utf-8")
    return root


def run_echo(skill: Path, ws: Path, *extra: str) -> tuple[int, str]:
    result = invoke("run", str(skill), "--executor", "echo", "--workspace", str(ws), "--trials", "2", *extra)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_each_turn_is_recorded_graded_and_counted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run_echo(make_skill(tmp_path / "returns"), ws)
    assert code in (0, 1, 3), out
    run = ws / "iteration-1/eval-1-talk-1/with_skill/run-1"
    events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
    assert [e["turn"] for e in events] == [1, 2, 3]
    assert "Which code?" in events[1]["text"] and "How long" not in events[1]["text"]
    md = (run / "transcript.md").read_text()
    assert md.index("# Turn 1") < md.index("# Turn 2") < md.index("# Turn 3")
    turns = json.loads((run / "turns.json").read_text())["turns"]
    assert [t["prompt"] for t in turns] == ["How long may I return?", "Which code?", "Say goodbye"]
    assert (run / "outputs/answer.md").read_text() == turns[2]["answer"]

    metrics = Metrics.model_validate_json((run / "outputs/metrics.json").read_text())
    timing = Timing.model_validate_json((run / "timing.json").read_text())
    assert metrics.turns is not None and [t.turn for t in metrics.turns] == [1, 2, 3]
    assert sum(t.input_tokens or 0 for t in metrics.turns) == metrics.usage["input_tokens"]  # type: ignore[attr-defined]
    assert timing.turns is not None and sum(t.total_tokens or 0 for t in timing.turns) == timing.total_tokens

    grading = Grading.model_validate_json((run / "grading.json").read_text())
    named = [(e.model_extra or {}).get("turn", "absent") for e in grading.expectations]
    assert named == [1, 1, 2, 3, None]
    # Each turn's expectations are checked on that turn's answer ("How long" is only in turn 1's),
    # the whole conversation's on the last answer.
    assert [e.passed for e in grading.expectations] == [True, True, True, True, False]
    base = Grading.model_validate_json((ws / "iteration-1/eval-1-talk-1/without_skill/run-1/grading.json").read_text())
    assert [e.passed for e in base.expectations] == [False, True, False, True, False]

    bench = Benchmark.model_validate_json((ws / "iteration-1/benchmark.json").read_text())
    assert bench.turns is not None
    rows = {t.turn: t for t in bench.turns.per_turn}
    assert sorted(rows) == [1, 2, 3]
    assert (rows[1].with_skill.passes, rows[1].with_skill.trials) == (4, 4)
    assert (rows[1].baseline.passes, rows[1].baseline.trials) == (0, 4)
    assert rows[3].with_skill.pass_rate == rows[3].baseline.pass_rate == 1.0 and rows[1].difference.mean == 1.0
    assert bench.runs and all((e.model_extra or {}).get("turn", "x") != "x" for e in bench.runs[0].expectations)
    meta = json.loads((ws / "iteration-1/eval-1-talk-1/eval_metadata.json").read_text())
    assert meta["prompt"] == "How long may I return?" and len(meta["turns"]) == 3
    for name in ("benchmark.md", "report.md"):
        assert "Per turn: where in the conversation the skill helps" in (ws / "iteration-1" / name).read_text()


def test_a_single_prompt_eval_set_gets_no_turn_fields(tmp_path: Path) -> None:
    evals = [{"id": 1, "prompt": "How long may I return?", "expectations": [{"type": "contains", "value": "21"}]}]
    ws = tmp_path / "ws"
    run_echo(make_skill(tmp_path / "returns", evals), ws)
    run = ws / "iteration-1/eval-1/with_skill/run-1"
    assert not (run / "turns.json").exists()
    assert '"turn"' not in (run / "grading.json").read_text()
    assert "turns" not in json.loads((run / "timing.json").read_text())
    assert "turns" not in json.loads((ws / "iteration-1/benchmark.json").read_text())
    assert "Per turn" not in (ws / "iteration-1/benchmark.md").read_text()


def test_an_executor_without_turns_is_refused_before_any_trial(tmp_path: Path, monkeypatch) -> None:
    """Every built-in executor carries a conversation, so a plugin's single-prompt one is refused."""
    monkeypatch.delenv(plugins.ALLOW_ENV, raising=False)
    write_distribution(tmp_path / "site", "acme-single", {"skillassay.executors": {"single": "acme_single:Single"}},
                       {"acme_single.py": "from skillassay.executors.echo import EchoExecutor\n\n"
                                          "class Single(EchoExecutor):\n    name = 'single'\n"
                                          "    supports_turns = False\n"})
    ws = tmp_path / "ws"
    with on_path(tmp_path / "site"):
        result = invoke("run", str(make_skill(tmp_path / "returns")), "--executor", "single", "--workspace",
                        str(ws), "--trials", "1", "--sandbox", "none")
    assert result.exit_code == 2, result.output
    assert "'single'" in result.output and "eval 1 (talk-1)" in result.output, result.output
    assert not list(ws.glob("iteration-*/eval-*/*/run-*")), "no trial may have run"
