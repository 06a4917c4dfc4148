"""Path rules shared by the file-reading assertions.

Evals are shared and re-run by other people, so a path in an assertion must never reach
outside the run's outputs/ (or, for schema files and check modules, the eval set folder):
absolute paths and `..` are configuration errors, and symlinks pointing out fail the check."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from skillassay.assertions.base import AssertionConfigError, RunView
from skillassay.store.layout import inside


def relative_param(type_name: str, key: str, value: str) -> str:
    """Reject absolute paths and `..` at configuration time, before any trial runs."""
    pure = PurePosixPath(value.replace("\\", "/"))
    if not value or pure.is_absolute() or ".." in pure.parts:
        raise AssertionConfigError(
            f"'{type_name}' parameter '{key}' must be a relative path inside outputs/, got {value!r}")
    return value


def output_file(run: RunView, rel: str) -> tuple[Path | None, str]:
    """(path, "") when rel names a file inside outputs/, else (None, why not) for evidence."""
    path = run.outputs_dir / rel
    if not inside(run.outputs_dir, path):
        return None, f"{rel!r} resolves outside outputs/ (symlink?)"
    if not path.is_file():
        return None, f"{rel!r} does not exist in outputs/ ({len(list_outputs(run))} files there)"
    return path, ""


def list_outputs(run: RunView) -> list[str]:
    """Files in outputs/ as relative POSIX paths, sorted; symlinks out are left out."""
    root = run.outputs_dir
    if not root.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and inside(root, p))


class UsesEvalDir:
    """Mixin for plugins that read files from the eval set's folder. grade.compile_expectations
    calls bind_eval_dir right after construction, so a missing file is still a configuration
    error reported before any trial runs."""

    eval_dir: Path | None = None

    def bind_eval_dir(self, eval_dir: Path) -> None:
        self.eval_dir = eval_dir
