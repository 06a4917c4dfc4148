"""Advice that keeps its promise: the trials and evals the statistics recommend, how many trials
an iteration planned, and how fast the per-eval trials-to-call advice is."""

from __future__ import annotations

import json
from pathlib import Path

from iteration_factory import write_iteration

from skillassay.analyze.aggregate import aggregate_iteration

# --- item 8: trials_requested is the iteration's, not the config's default --------------------


def test_trials_requested_comes_from_the_iteration_not_the_config_default(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPPPFFF", "PPPFFFFFFF") for e in range(1, 5)})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {"min_pass_rate": 0.5}}))  # no trials_per_eval
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10
    skill = st["configurations"]["with_skill"]
    assert set(skill["pass_at_k"]) == {"1", "2", "3", "5", "10"}
    assert skill["pass_at_k"]["10"] == 1.0


def test_trials_requested_without_iteration_json_is_what_ran(tmp_path: Path) -> None:
    it = write_iteration(tmp_path, 1, {e: ("PPPPPFFFFF", "PFFFFFFFFF") for e in range(1, 4)})
    (it / "iteration.json").unlink()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"thresholds": {}}))
    st = aggregate_iteration(it, config_path=config).benchmark.statistics
    assert st["trials_requested"] == 10
