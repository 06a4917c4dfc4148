"""`report ITERATION --format pr-comment`: the iteration's gate and comparison read from disk, then
rendered by report/pr_comment.py."""

from __future__ import annotations

from pathlib import Path

from skillassay.report.pr_comment import CommentInputs, render_pr_comment
from skillassay.workflows.compare_on_disk import compare
from skillassay.workflows.gate_iteration import check_iteration


def comment_for_iteration(iteration: Path, *, base: Path | None = None, head_sha: str | None = None,
                          link: str | None = None, warn_only: bool = False, config: Path | None = None,
                          strict: bool = False, point_estimate: bool = False) -> str:
    """The iteration's gate as `gate` computes it; the change against `base` (the base branch's
    iteration), else against the previous iteration `run` compared with."""
    check = check_iteration(iteration, config, strict=strict, point_estimate=point_estimate)
    comparison = compare(iteration, base, config, write=False) if base is not None else check.comparison
    return render_pr_comment(CommentInputs(check.benchmark, check.result, comparison, head_sha, link, warn_only))
