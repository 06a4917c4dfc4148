"""analyze/compare.eval_content for a multi-turn eval: a change in any turn's message, or an
expectation moved to another turn, makes the eval "changed" between iterations, while a
single-prompt eval's digests stay what they were."""

from __future__ import annotations

from skillassay.analyze.compare import _digest, eval_content


def meta(second: str, on_turn: int = 1) -> dict:
    check = {"type": "contains", "value": "x"}
    turns = [{"prompt": "first", "expectations": [check] if on_turn == 1 else []},
             {"prompt": second, "expectations": [check] if on_turn == 2 else []}]
    return {"eval_id": 1, "prompt": "first", "expectations": [check], "turns": turns}


def test_a_later_turn_or_a_moved_expectation_changes_the_content() -> None:
    base = eval_content(meta("second"))
    assert eval_content(meta("second")) == base
    assert eval_content(meta("another second"))["prompt"] != base["prompt"]
    moved = eval_content(meta("second", on_turn=2))
    assert moved["prompt"] == base["prompt"] and moved["expectations"] != base["expectations"]


def test_a_single_prompt_eval_keeps_its_digests() -> None:
    exps = [{"type": "contains", "value": "x"}]
    assert eval_content({"prompt": "p", "expectations": exps}) == {"prompt": _digest("p"),
                                                                  "expectations": _digest([exps, []])}
