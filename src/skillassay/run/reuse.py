"""`run --baseline-from ITERATION`: reuse an earlier iteration's baseline runs instead of
paying for them again.

Only the skill changes between most iterations, and the baseline arm never sees the skill, so
its runs are the same measurement as long as everything else is the same: the model and
executor settings (seed included) and the eval set. Those are compared through the two
iterations' fingerprints, and any difference refuses the reuse with the reason, because a
baseline measured under other conditions would silently bias the improvement ratio. Runs are
copied (not linked) so each iteration folder stays self-contained; the ones missing from the
source are left for the engine to run (topping up to the requested trials).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from skillassay.errors import InputError
from skillassay.run.plan import hash_tree
from skillassay.store.jsonio import load_json_lenient, parse_json_bytes, write_json
from skillassay.store.layout import SNAPSHOT_DIR, iteration_dir

PROVENANCE = "baseline_reuse.json"
MUST_MATCH = {"settings": "the model or executor settings (seed, temperature, options, baseline type)",
              "evals": "the eval set (prompts, expectations or input files)"}


def resolve_source(value: str | Path, workspace: Path) -> Path:
    """ITERATION is a folder, or a number meaning WORKSPACE/iteration-N."""
    text = str(value)
    path = iteration_dir(workspace, int(text)) if text.isdigit() else Path(text)
    if not path.is_dir():
        raise InputError.one(path, "--baseline-from", "not a folder: expected an iteration folder or its number")
    return path


def source_fingerprint(source: Path) -> dict[str, str]:
    path = source / "iteration.json"
    try:
        data = parse_json_bytes(path.read_bytes())
    except (OSError, ValueError):
        raise InputError.one(path, "fingerprint",
                             "cannot reuse its baseline: no readable iteration.json, so nothing proves the "
                             "runs were made under the same settings") from None
    fp = data.get("fingerprint") if isinstance(data, dict) else None
    if not isinstance(fp, dict):
        raise InputError.one(path, "$.fingerprint", "missing: cannot tell whether the settings match")
    return fp


def refusal(source_fp: dict[str, str], current_fp: dict[str, str]) -> str | None:
    """Why the source's baseline is not the same measurement, or None when it is."""
    differ = [k for k in MUST_MATCH if source_fp.get(k) != current_fp.get(k)]
    if not differ:
        return None
    return "cannot reuse its baseline runs: " + " and ".join(MUST_MATCH[k] for k in differ) + \
        " differ from this run's, so its baseline would measure something else"


def previous_snapshot_hash(it: Path) -> str | None:
    """For baseline_type previous_version: the old skill an iteration's baseline arm ran."""
    n = it.name.removeprefix("iteration-")
    if not n.isdigit():
        return None
    snap = it.parent / f"iteration-{int(n) - 1}" / SNAPSHOT_DIR
    return hash_tree(snap) if snap.is_dir() else None


def reuse_baseline(value: str | Path | None, workspace: Path, target: Path, fingerprint: dict[str, str],
                   configuration: str, eval_slugs: list[str], trials: int) -> list[Path]:
    """Copy the source's graded baseline runs run-1..run-`trials` into `target`; returns the
    copied run folders. Runs already present in `target` are kept (a resumed run)."""
    if value is None:
        return []
    source = resolve_source(value, workspace)
    if source.resolve() == target.resolve():
        return []
    reason = refusal(source_fingerprint(source), fingerprint)
    if reason is None and configuration == "old_skill" and previous_snapshot_hash(source) != previous_snapshot_hash(target):
        reason = "cannot reuse its baseline runs: its baseline ran a different previous version of the skill"
    if reason:
        raise InputError.one(source / "iteration.json", "--baseline-from", reason)
    copied = []
    for slug in eval_slugs:
        for k in range(1, trials + 1):
            src = source / slug / configuration / f"run-{k}"
            dst = target / slug / configuration / f"run-{k}"
            if (src / "grading.json").is_file() and not (dst / "grading.json").is_file():
                if dst.exists():
                    shutil.rmtree(dst)
                shutil.copytree(src, dst, symlinks=True)
                copied.append(dst)
    if copied:
        write_provenance(target, source, configuration, copied)
    return copied


def write_provenance(target: Path, source: Path, configuration: str, copied: list[Path]) -> None:
    """Which runs came from where, merged with an earlier record when a reuse is resumed."""
    path = target / PROVENANCE
    data = load_json_lenient(path)
    earlier = data.get("runs") if isinstance(data, dict) else None
    earlier = [r for r in earlier if isinstance(r, str)] if isinstance(earlier, list) else []
    runs = list(dict.fromkeys([*earlier, *(str(p.relative_to(target)) for p in copied)]))
    write_json(path, {"schema_version": 1, "source": str(source.resolve()), "configuration": configuration,
                      "runs": runs})
