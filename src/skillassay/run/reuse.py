"""`run --baseline-from ITERATION`: reuse an earlier iteration's baseline runs instead of
paying for them again.

Only the skill changes between most iterations, and the baseline arm never sees the skill, so
its runs are the same measurement as long as everything else is the same: the model and
executor settings (seed included) and the eval set. Those are compared through the two
iterations' fingerprints, and any difference refuses the reuse with the reason, because a
baseline measured under other conditions would silently bias the improvement ratio. Runs are
copied (not linked) so each iteration folder stays self-contained; the ones missing from the
source are left for the engine to run (topping up to the requested trials).

When only the eval set differs, the baseline runs of the evals that did not change (same id,
prompt, expectations and input files, as `compare` decides it) are still the same measurement
and are reused; the changed evals' baselines run again. In that case the with_skill runs of the
unchanged evals are reused too, without being asked (`reuse_unchanged_skill_runs`): same skill,
same settings and seed, same eval.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from skillassay.analyze.compare import eval_content
from skillassay.errors import InputError
from skillassay.run.plan import hash_tree
from skillassay.store.discover import METADATA
from skillassay.store.jsonio import load_json_lenient, parse_json_bytes, write_json
from skillassay.store.layout import SNAPSHOT_DIR, existing_iterations, iteration_dir, remove_tree

PROVENANCE = "baseline_reuse.json"
SKILL_PROVENANCE = "skill_reuse.json"  # with_skill runs reused from an iteration with the same skill
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


def same_eval(source: Path, target: Path, slug: str) -> bool:
    """Whether an eval folder holds the same eval in both iterations: identical content parts
    in both eval_metadata.json files (an older file that lacks one, e.g. input files, is not
    proof of sameness, so it does not match)."""
    try:
        a = parse_json_bytes((source / slug / METADATA).read_bytes())
        b = parse_json_bytes((target / slug / METADATA).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(a, dict) and isinstance(b, dict) and a.get("eval_id") == b.get("eval_id") \
        and bool(eval_content(a)) and eval_content(a) == eval_content(b)


def reusable_evals(source_fp: dict[str, str], current_fp: dict[str, str], source: Path, target: Path,
                   eval_slugs: list[str]) -> list[str] | None:
    """The eval folders whose baseline runs measure the same thing: all of them when the
    fingerprints agree, the unchanged ones when only the eval set differs, None otherwise."""
    if refusal(source_fp, current_fp) is None:
        return eval_slugs
    if source_fp.get("settings") != current_fp.get("settings"):
        return None
    return [slug for slug in eval_slugs if same_eval(source, target, slug)] or None


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
    source_fp = source_fingerprint(source)
    same = reusable_evals(source_fp, fingerprint, source, target, eval_slugs)
    reason = refusal(source_fp, fingerprint) if same is None else None
    eval_slugs = eval_slugs if same is None else same
    if reason is None and configuration == "old_skill" and previous_snapshot_hash(source) != previous_snapshot_hash(target):
        reason = "cannot reuse its baseline runs: its baseline ran a different previous version of the skill"
    if reason:
        raise InputError.one(source / "iteration.json", "--baseline-from", reason)
    copied = copy_runs(source, target, configuration, eval_slugs, trials)
    if copied:
        write_provenance(target, source, configuration, copied)
    return copied


def copy_runs(source: Path, target: Path, configuration: str, eval_slugs: list[str], trials: int) -> list[Path]:
    """The source's graded runs run-1..run-`trials` of these evals, copied into `target`
    (not linked: each iteration folder stays self-contained); runs `target` already has are kept."""
    copied = []
    for slug in eval_slugs:
        for k in range(1, trials + 1):
            src = source / slug / configuration / f"run-{k}"
            dst = target / slug / configuration / f"run-{k}"
            if (src / "grading.json").is_file() and not (dst / "grading.json").is_file():
                if dst.exists() or dst.is_symlink():
                    remove_tree(dst, target)
                shutil.copytree(src, dst, symlinks=True)
                copied.append(dst)
    return copied


def reuse_unchanged_skill_runs(workspace: Path, target: Path, fingerprint: dict[str, str],
                               eval_slugs: list[str], trials: int) -> tuple[Path, list[Path]] | None:
    """A new iteration that only changed the eval set: the with_skill runs of the evals that did
    not change were made with the same skill, settings, seed and eval, so they are the same
    measurement and are copied from the latest such iteration instead of paid for again. (With
    any other change, or no earlier iteration, nothing is reused.) Returns the source and the
    runs copied, or None."""
    for n in reversed(existing_iterations(workspace)):
        source = iteration_dir(workspace, n)
        if source.resolve() == target.resolve():
            continue
        try:
            fp = source_fingerprint(source)
        except InputError:
            continue
        if fp.get("skill") != fingerprint.get("skill") or fp.get("settings") != fingerprint.get("settings"):
            continue
        same = [slug for slug in eval_slugs if same_eval(source, target, slug)]
        copied = copy_runs(source, target, "with_skill", same, trials)
        if copied:
            write_provenance(target, source, "with_skill", copied, SKILL_PROVENANCE)
        return source, copied
    return None


def write_provenance(target: Path, source: Path, configuration: str, copied: list[Path],
                     name: str = PROVENANCE) -> None:
    """Which runs came from where, merged with an earlier record when a reuse is resumed."""
    path = target / name
    data = load_json_lenient(path)
    earlier = data.get("runs") if isinstance(data, dict) else None
    earlier = [r for r in earlier if isinstance(r, str)] if isinstance(earlier, list) else []
    runs = list(dict.fromkeys([*earlier, *(str(p.relative_to(target)) for p in copied)]))
    write_json(path, {"schema_version": 1, "source": str(source.resolve()), "configuration": configuration,
                      "runs": runs})


# ---------------------------------------------------------------- failed trials, run again

ATTEMPTS_DIR = "attempts"
RUN_AGAIN = frozenset({"error", "timeout"})  # a trial that never measured anything
_ATTEMPT_FILES = ("grading.json", "timing.json", "transcript.jsonl", "transcript.md", "outputs/metrics.json",
                  "turns.json")  # a conversation's turns (run/execute_turns.py)


def archive_failed_attempt(run_dir: Path) -> Path:
    """Keep a failed trial's record in run-K/attempts/N/ and unmark the trial as done, so the
    next `run` runs it again (after the cause was fixed, an errored trial is not a result) while
    the earlier attempt's error and transcript stay in the run folder as evidence.

    The copy is finished (renamed into place) before grading.json goes, so a kill in between
    at worst archives the same attempt twice; it never loses it."""
    attempts = run_dir / ATTEMPTS_DIR
    attempts.mkdir(exist_ok=True)
    n = 1 + max((int(p.name) for p in attempts.iterdir() if p.name.isdigit()), default=0)
    partial = attempts / f".{n}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    for rel in _ATTEMPT_FILES:
        src = run_dir / rel
        if src.is_file():
            shutil.copy2(src, partial / Path(rel).name)
    dest = attempts / str(n)
    partial.rename(dest)
    (run_dir / "grading.json").unlink(missing_ok=True)
    return dest


def reuse_hint(workspace: Path, target: Path, fingerprint: dict[str, str], configuration: str,
               eval_slugs: list[str], trials: int) -> str | None:
    """The `--baseline-from` suggestion after a run that paid for baseline trials an earlier
    iteration already had under the same eval set and settings (only the skill changed, and
    the no-skill baseline never sees it). None when no earlier iteration qualifies, or for a
    previous_version baseline (its old skill changes with every iteration)."""
    if configuration != "without_skill":
        return None
    for n in reversed(existing_iterations(workspace)):
        source = iteration_dir(workspace, n)
        if source.resolve() == target.resolve():
            continue
        try:
            same = reusable_evals(source_fingerprint(source), fingerprint, source, target, eval_slugs)
        except InputError:
            continue
        if same is None:
            continue
        graded = sum((source / slug / configuration / f"run-{k}" / "grading.json").is_file()
                     for slug in same for k in range(1, trials + 1))
        if graded:
            what = ("same eval set and settings; only the skill changed" if len(same) == len(eval_slugs) else
                    f"same settings, and {len(same)} of {len(eval_slugs)} evals unchanged")
            return (f"the baseline arm is unchanged since iteration {n} ({what}): next time, `--baseline-from {n}` "
                    f"reuses its {graded} graded baseline trials instead of running them again")
    return None
