"""The one validation path: everything that decides whether a benchmark's inputs are usable,
checked before any trial runs. `skillassay validate` and `skillassay run` both call
`check_inputs`, so neither accepts what the other refuses (a second copy of these checks is
how `validate` came to say "1 valid" for evals that `run` refused, and `run` to accept a skill
name that `validate` refused).

It lives here, above `spec/`, because two of its checks need plugins: typed assertions are
built (unknown type, missing parameter, uncompilable regex) by `grade.compile_expectations`,
and the executor is asked whether it can run here (`executors.check_executor`, `run` only:
it depends on this machine, not on the files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from skillassay import plugins
from skillassay.errors import InputError, Problem
from skillassay.grade.grader import (
    CompiledExpectation,
    compile_expectations,
    deprecation_notes,
    plain_expectation_problems,
)
from skillassay.models import BenchmarkConfig, EvalSet
from skillassay.models.config import MAX_SKILL_FILE_BYTES, SandboxConfig
from skillassay.spec.scaffold import placeholder_problems
from skillassay.spec.skill import Skill, load_skill
from skillassay.spec.skillmd import check_skill_folder
from skillassay.spec.trigger_evals import TRIGGER_EVALS_FILE, trigger_eval_problems
from skillassay.spec.validate import (
    FILE_KINDS,
    kind_of,
    resolve_input_files,
    skill_name_problems,
    unknown_kind,
    validate_file,
)
from skillassay.store.jsonio import load_model
from skillassay.store.layout import skill_file_problems

CONFIG_FILE = Path("evals") / "benchmark_config.json"
EVALS_FILE = Path("evals") / "evals.json"
M = TypeVar("M", BenchmarkConfig, EvalSet)


@dataclass(frozen=True)
class Inputs:
    """A benchmark's inputs, every check passed: what `run` needs to plan and grade trials."""

    skill: Skill
    config: BenchmarkConfig
    config_path: Path | None
    evals: EvalSet
    evals_path: Path
    input_files: dict[int, list[Path]]
    compiled: dict[int, list[CompiledExpectation]]

    def notes(self) -> list[str]:
        """Warnings that refuse nothing: assertion parameters given by their old names."""
        return deprecation_notes(self.evals.evals, self.compiled, self.evals_path)


def find_config(skill_dir: Path, explicit: Path | None) -> Path | None:
    """--config, else SKILL_DIR/evals/benchmark_config.json when it exists."""
    if explicit is not None:
        return explicit
    default = Path(skill_dir) / CONFIG_FILE
    return default if default.is_file() else None


def find_evals(skill_dir: Path, explicit: Path | None, config: BenchmarkConfig | None,
               config_path: Path | None) -> Path:
    """--evals, else the config's eval_set_path (relative to the config file), else
    SKILL_DIR/evals/evals.json."""
    if explicit is not None:
        return explicit
    if config is not None and config.eval_set_path and config_path is not None:
        return (config_path.parent / config.eval_set_path).resolve()
    return Path(skill_dir) / EVALS_FILE


def _load(path: Path, model: type[M], problems: list[Problem]) -> M | None:
    try:
        return load_model(path, model)
    except InputError as exc:
        problems += exc.problems
    except RecursionError:  # json.loads on e.g. 100000 nested "[": not an InputError there
        problems.append(Problem(str(path), "", "invalid JSON: nested too deeply to read"))
    return None


# --judge's names (grade.judge.JUDGES, which `validate` does not import: jinja2, tenacity, ...)


def config_problems(config: BenchmarkConfig, path: Path) -> list[Problem]:
    """What the config names that `run` would refuse later, said against the config's file and
    key (not as a flag the user never passed): an executor that is not installed."""
    from skillassay.executors import executor_names, load_executor_class, unknown_executor
    from skillassay.run.agent_checks import agent_problems

    if problems := agent_problems(config.agents, path):
        return problems
    if config.executor is not None and config.executor not in executor_names():
        return [Problem(str(path), "$.executor", f"{config.executor!r}: {unknown_executor(config.executor)}")]
    if unknown := plugin_problems(config, path):
        return unknown
    if config.executor is not None and config.model is not None:  # else --executor may choose another
        try:
            refused = load_executor_class(config.executor).model_problem(config.model)
        except InputError:  # an extra not installed: said where the executor is loaded to run
            refused = None
        if refused:
            return [Problem(str(path), "$.model", f"{config.model}: {refused}")]
    return []


def plugin_problems(config: BenchmarkConfig, path: Path) -> list[Problem]:
    """The config's backend and sandbox are plugin names (plugins.py), as its executor is: one
    no installed distribution registers is refused by key, with the names that are installed."""
    boxed = isinstance(config.sandbox, SandboxConfig)
    sandbox = config.sandbox.kind if isinstance(config.sandbox, SandboxConfig) else config.sandbox
    named = [("backends", "$.backend", config.backend)]
    if sandbox != "auto":  # not a plugin: confine.resolve decides it
        named.append(("sandboxes", "$.sandbox.kind" if boxed else "$.sandbox", sandbox))
    return [Problem(str(path), key, f"{name!r}: {plugins.unknown(kind, name)}")
            for kind, key, name in named if name is not None and plugins.find(kind, name) is None]


def eval_set_problems(evals: EvalSet, evals_path: Path, skill: Skill | None, judge: str | None = "none"
                      ) -> tuple[dict[int, list[Path]], dict[int, list[CompiledExpectation]], list[Problem]]:
    """What is wrong with a well-formed eval set: the skill it names, init's placeholders,
    input files leaving the skill folder, typed assertions their plugins refuse, and plain
    expectations when there is no judge (`judge` None or "none"), as `run` refuses them."""
    problems = skill_name_problems(evals, skill.name, evals_path) if skill is not None else []
    if judge in (None, "", "none"):
        problems += plain_expectation_problems(evals.evals, evals_path)
    problems += placeholder_problems(evals, evals_path)
    files, file_problems = resolve_input_files(evals, evals_path, skill.path if skill else None)
    problems += file_problems
    compiled: dict[int, list[CompiledExpectation]] = {}
    for ev in evals.evals:
        try:
            compiled[ev.id] = compile_expectations(ev, evals_path)
        except InputError as exc:
            problems += exc.problems
    return files, compiled, problems


def check_inputs(skill_dir: Path, evals_path: Path | None = None, config_path: Path | None = None,
                 *, require_evals: bool = True, judge: str | None = "none") -> Inputs | None:
    """Every problem of the skill folder, its benchmark config and its eval set, raised
    together as one InputError (exit 2). `require_evals=False` (validate on a bare skill
    folder) returns None when there is no eval set to check, instead of refusing. `judge`:
    the --judge given (plain expectations are refused without one)."""
    cfg = find_config(skill_dir, config_path)
    loading: list[Problem] = []
    config = _load(cfg, BenchmarkConfig, loading) if cfg is not None else BenchmarkConfig()
    # Before anything in the folder is read: a FIFO there would make the read wait forever.
    problems = skill_file_problems(skill_dir, config.max_skill_file_bytes if config else MAX_SKILL_FILE_BYTES)
    problems = problems or check_skill_folder(skill_dir)
    skill = None if problems else load_skill(skill_dir)
    problems += loading
    if config is not None and cfg is not None:
        problems += config_problems(config, cfg)
    path = find_evals(skill_dir, evals_path, config, cfg)
    evals = None
    if require_evals or evals_path is not None or (config and config.eval_set_path) or path.exists():
        evals = _load(path, EvalSet, problems)
    files: dict[int, list[Path]] = {}
    compiled: dict[int, list[CompiledExpectation]] = {}
    if evals is not None:
        files, compiled, more = eval_set_problems(evals, path, skill, judge)
        problems += more
    if problems:
        raise InputError(problems)
    if evals is None or skill is None or config is None:
        return None
    return Inputs(skill, config, cfg.resolve() if cfg else None, evals, path, files, compiled)


def skill_problems(skill_dir: Path, evals_path: Path | None = None, judge: str | None = "none",
                   notes: list[str] | None = None) -> list[Problem]:
    """check_inputs as a list of problems ([]: usable), for `validate`; its warnings go to `notes`."""
    try:
        inputs = check_inputs(skill_dir, evals_path, require_evals=evals_path is not None, judge=judge)
    except InputError as exc:
        return exc.problems
    if inputs is not None and notes is not None:
        notes += inputs.notes()
    return []


def _standalone_evals(path: Path, judge: str | None, notes: list[str] | None) -> list[Problem]:
    """An eval set given alone gets the eval-set checks of `run` too; when it sits in a skill
    folder (`<skill>/evals/evals.json`) that folder is its skill, as `run` would take it."""
    problems = validate_file(path, "evals")
    if problems:
        return problems
    skill_dir = path.resolve().parent.parent
    if (skill_dir / "SKILL.md").is_file() and path.resolve() == (skill_dir / EVALS_FILE).resolve():
        return skill_problems(skill_dir, path, judge, notes)
    evals = load_model(path, EvalSet)
    _, compiled, problems = eval_set_problems(evals, path, None, judge)
    if not problems and notes is not None:
        notes += deprecation_notes(evals.evals, compiled, path)
    return problems


def validate_paths(paths: list[Path], kind: str | None, judge: str | None = "none",
                   notes: list[str] | None = None) -> list[Problem]:
    """`skillassay validate`: every problem in every path. Folders are skill folders (SKILL.md,
    plus its config and eval set when present, checked exactly as `run` checks them, with the
    same --judge); files are spec JSON files of the kind their name says, or --kind. Warnings
    that refuse nothing (deprecated assertion parameters) are added to `notes`."""
    if kind is not None and kind not in FILE_KINDS:
        return [Problem("--kind", "", f"unknown kind {kind!r}; expected one of: " + ", ".join(FILE_KINDS))]
    if judge is not None and judge != "none" and plugins.find("judges", judge) is None:
        return [Problem("--judge", judge, "unknown judge; choose one of: none, " + ", ".join(plugins.names("judges")))]
    problems: list[Problem] = []
    for path in map(Path, paths):
        if path.is_dir():
            if (path / "SKILL.md").is_file():
                problems += skill_problems(path, judge=judge, notes=notes)
                if (path / TRIGGER_EVALS_FILE).is_file():  # what `skillassay triggers` reads
                    problems += trigger_eval_problems(path / TRIGGER_EVALS_FILE)
            else:
                problems.append(Problem(str(path), "", "is a folder without SKILL.md; expected "
                                        "a skill folder or a JSON file"))
        elif not path.exists():
            problems.append(Problem(str(path), "", "file not found"))
        elif path.name == "SKILL.md":
            problems += check_skill_folder(path.parent)
        else:
            file_kind = kind or kind_of(path)
            if file_kind == "evals":
                problems += _standalone_evals(path, judge, notes)
            elif file_kind == "config":
                problems += validate_file(path, file_kind) or config_problems(load_model(path, BenchmarkConfig), path)
            else:
                problems += validate_file(path, file_kind) if file_kind else [unknown_kind(path)]
    return problems
