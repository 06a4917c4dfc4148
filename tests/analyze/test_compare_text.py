"""`compare`'s lines say which evals each figure is over (issue 34: what a person reads says one
thing). After a changed eval the pass rates were the whole suite's and the change the compared
evals' ("pass rate 25% -> 75%: +67 pts"), and a ratio of 1.00x came with "the previous baseline
passed nothing"."""

from __future__ import annotations

import json
from pathlib import Path

from iteration_factory import write_iteration

from skillassay.analyze.compare_text import summary_lines
from skillassay.workflows.compare_on_disk import compare


def change_prompt(iteration: Path, eval_id: int) -> None:
    meta = next(iteration.glob(f"eval-{eval_id}-*")) / "eval_metadata.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "prompt": "a different question"}))


def lines_after_a_changed_eval(tmp_path: Path) -> list[str]:
    write_iteration(tmp_path, 1, {1: ("PPP", "PPP"), 2: ("FFF", "FFF"), 3: ("FFF", "FFF"), 4: ("FFF", "FFF")})
    it = write_iteration(tmp_path, 2, {1: ("PPP", "PPP"), 2: ("PPF", "FFF"), 3: ("PPF", "FFF"), 4: ("PPF", "FFF")})
    change_prompt(it, 1)
    result = compare(it)
    assert result is not None
    return summary_lines(result)


def test_the_change_is_said_over_the_evals_it_is_measured_on(tmp_path: Path) -> None:
    lines = lines_after_a_changed_eval(tmp_path)
    rate = next(line for line in lines if line.startswith("pass rate"))
    assert rate.startswith("pass rate 25% -> 75% (all 4 evals); on the 3 evals in both: +67 pts"), rate


def test_a_ratio_is_written_as_a_ratio_and_its_reason_says_where(tmp_path: Path) -> None:
    lines = lines_after_a_changed_eval(tmp_path)
    ratio = next(line for line in lines if line.startswith("improvement ratio"))
    assert ratio.startswith("improvement ratio 1.00x -> 3.00x (all 4 evals); on the 3 evals in both: change n/a"), ratio
    assert "baseline passed nothing" in ratio


def test_an_unchanged_suite_reads_as_before(tmp_path: Path) -> None:
    write_iteration(tmp_path, 1, {1: ("PPP", "FFF"), 2: ("PPP", "PFF")})
    it = write_iteration(tmp_path, 2, {1: ("PPP", "FFF"), 2: ("PPF", "PFF")})
    result = compare(it)
    assert result is not None
    lines = summary_lines(result)
    assert lines[1].startswith("pass rate 100% -> 83%: -17 pts"), lines[1]
    assert lines[-1] == result["detection_limit"]["text"] and "all 2 evals" not in "\n".join(lines)
