"""docs/workspace.md describes what the code writes: a folder or field added without a word
there fails here, so the reference cannot drift from the files."""

from __future__ import annotations

from pathlib import Path

import repo_paths

from skillassay.models.benchmark import TriggerConditioned, TriggerEval, TriggerOverall
from skillassay.run.reuse import _ATTEMPT_FILES, ATTEMPTS_DIR

ROOT = repo_paths.REPO
DOC = (ROOT / "docs" / "workspace.md").read_text(encoding="utf-8")


def test_attempts_folder_and_the_files_it_keeps_are_documented() -> None:
    assert f"{ATTEMPTS_DIR}/<n>/" in DOC
    missing = [f for f in _ATTEMPT_FILES if f"`{Path(f).name}`" not in DOC]
    assert not missing, missing


def test_ungraded_counts_and_the_trigger_split_fields_are_documented() -> None:
    assert "ungraded_trials" in DOC and "`skill_triggered`" in DOC and "SKILLASSAY_LOADED_SKILLS_FILE" in DOC
    fields = {*TriggerEval.model_fields, *TriggerOverall.model_fields} - {"eval_id", "eval_name", "loaded", "not_loaded"}
    missing = sorted(f for f in fields if f not in DOC)
    assert not missing, missing
    assert "trigger_conditioned" in DOC and "rarely_loaded_below" in DOC
    assert set(TriggerConditioned.model_fields) >= {"per_eval", "overall", "rarely_loaded_evals"}
    assert "docs/workspace.md" in (ROOT / "README.md").read_text(encoding="utf-8")
