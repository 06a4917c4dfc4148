"""The design line counts the suite right after a changed eval (analyze.compare, issue 34): a
changed eval is reported, never compared, and the line said "(this suite has 5)" of a suite of 6."""

from __future__ import annotations

import json
from pathlib import Path

from iteration_factory import write_iteration

from skillassay.analyze.compare import detection_limit
from skillassay.workflows.compare_on_disk import compare

EVALS = {i: ("PPP", "FFF") for i in range(1, 7)}


def test_a_changed_eval_is_counted_in_the_suite_but_not_compared(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, EVALS)
    it = write_iteration(tmp_path, 2, EVALS)
    meta = it / "eval-6-e6" / "eval_metadata.json"
    data = json.loads(meta.read_text())
    data["prompt"] = "a different question"
    meta.write_text(json.dumps(data))
    result = compare(it)
    assert result is not None and [r["eval_id"] for r in result["changed_evals"]] == [6]
    text = result["detection_limit"]["text"]
    assert "(this suite has 6, 5 of them compared)" in text, text
    assert result["detection_limit"]["n_evals"] == 5  # the correction is over the evals compared


def test_an_unchanged_suite_says_its_size_once() -> None:
    assert "(this suite has 6)" in detection_limit(6, 3)["text"]
    assert "(this suite has 6)" in detection_limit(6, 3, suite_evals=6)["text"]
