"""Reading a whole iteration for `skillassay aggregate` in one pass and in flat memory.

Each run is read once (store.read.read_trial), counted into its eval's cells.Arm and the
ExpectationTally, and its benchmark.json runs[] entry is serialised straight into a spool file;
then the run is dropped. What stays in memory is per eval and configuration (counts, and one
8-byte value per trial where medians need them), never an object per run. Big iterations are
read in worker processes, one eval at a time (parsing JSON is CPU-bound, so threads would share
one GIL; twice as many workers as cores, because with a cold page cache they wait on the disk),
and the spooled entries are copied into benchmark.json in record order at the end.

Most runs are plain (completed, every expectation graded, files of the documented shapes): those
take store.read.read_plain_run, which opens their files relative to the configuration folder and
builds no record; the counts and the runs[] entry come from its facts directly (_add_graded,
benchmark.graded_run_json). Every other run, and every run with something to report, is read by
read_trial and counted through its record, as before.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter
from pathlib import Path
from typing import IO, TYPE_CHECKING

from skillassay.analyze.benchmark import graded_run_json, run_json
from skillassay.analyze.cells import Arm, EvalCell
from skillassay.analyze.turns import Counts as TurnCounts
from skillassay.analyze.turns import add_record, merge_counts
from skillassay.stats.ufuncs import preload
from skillassay.store.benchmark_file import RUN_SEPARATOR, write_run_texts
from skillassay.store.discover import EvalDir, RunDir, check_unique, eval_runs, find_evals
from skillassay.store.read import Figures, RunIssue, open_run_dir, read_plain_run, read_trial
from skillassay.store.records import ExpectationTally, record_order

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

SEPARATOR = RUN_SEPARATOR.encode()
# Below this many run folders the pool costs more than it saves (fork + result transfer).
PARALLEL_FROM_RUNS = 4000
MAX_WORKERS = 8


@dataclass
class SpooledRuns:
    """One configuration folder's runs[] entries, in a spool file: where they are and which
    runs they are (so entries of one eval split over two folders can still be put in order)."""

    eval_id: int | str
    configuration: str
    spool: str
    offset: int
    eval_index: int = 0  # the eval folder's place in discovery order: breaks ties as records sorted stably did
    run_numbers: array[int] = field(default_factory=lambda: array("q"))
    sizes: array[int] = field(default_factory=lambda: array("q"))  # bytes of each entry

    @property
    def size(self) -> int:
        return sum(self.sizes) + len(SEPARATOR) * (len(self.sizes) - 1)


@dataclass
class EvalRead:
    """What reading one eval folder gave."""

    eval: EvalDir
    arms: dict[str, Arm] = field(default_factory=dict)  # configuration -> its trials' figures
    folders: dict[str, int] = field(default_factory=dict)  # configuration -> run folders, graded or not
    tally: ExpectationTally = field(default_factory=ExpectationTally)
    turns: dict[int, TurnCounts] = field(default_factory=dict)  # a multi-turn eval's (analyze/turns.py)
    spooled: list[SpooledRuns] = field(default_factory=list)
    skipped: list[RunIssue] = field(default_factory=list)  # runs left out (no usable grading.json)
    warnings: list[str] = field(default_factory=list)  # runs kept, a side file was unusable
    runs: list[RunDir] | None = None  # kept only when needed to report a clash


@dataclass
class IterationRead:
    """Everything aggregation needs from an iteration's files, in record order."""

    evals: list[EvalDir]
    cells: list[EvalCell]
    tally: ExpectationTally
    spooled: list[SpooledRuns]
    configurations: list[str]  # every configuration folder name, in discovery order
    graded_configurations: list[str]  # those with a usable run, in record order
    run_folders: int
    trials_found: int  # the most run folders any eval / configuration has
    skipped: list[RunIssue]
    warnings: list[str]
    turns: dict[int, TurnCounts] = field(default_factory=dict)  # per turn of multi-turn evals

    @property
    def runs_read(self) -> int:
        return sum(len(s.sizes) for s in self.spooled)


def read_eval(ev: EvalDir, spool: IO[bytes], spool_path: str) -> EvalRead:
    """Read one eval folder's runs, appending their runs[] entries to `spool`."""
    out = EvalRead(ev)
    runs = eval_runs(ev)
    with _ParentFolders() as parents:
        for config, group in groupby(runs, key=attrgetter("configuration")):
            _read_config(out, config, group, parents, spool, spool_path)
    if len({(r.configuration, r.run_number) for r in runs}) != len(runs):
        out.runs = runs  # two folders claim one run (run-1 and run-01): reported by _combine
    return out


class _ParentFolders:
    """Descriptors of the folders holding run folders (a configuration folder, or the eval folder
    for a run without a run-K level), opened once each, so each run's files are opened relative
    to them (read_trial_in). None for a folder that cannot be opened this way: its runs are then
    read by path (read_trial), which says what is wrong."""

    def __init__(self) -> None:
        self._fds: dict[str, int | None] = {}

    def __enter__(self) -> _ParentFolders:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)

    def fd(self, folder: str) -> int | None:
        if folder not in self._fds:
            self._fds[folder] = open_run_dir(folder)
        return self._fds[folder]


def _read_config(out: EvalRead, config: str, group: Iterable[RunDir], parents: _ParentFolders,
                 spool: IO[bytes], spool_path: str) -> None:
    """One configuration's runs of an eval: counted into its Arm and the tally, entries spooled."""
    ev = out.eval
    eval_id, eval_name = ev.eval_id, ev.eval_name
    arm = out.arms.setdefault(config, Arm())
    spooled = SpooledRuns(eval_id, config, spool_path, spool.tell())
    # (bound once: this loop runs once per run, 200,000 times in a big iteration)
    tally_add, write, numbers, sizes = out.tally.add, spool.write, spooled.run_numbers, spooled.sizes
    folders = 0
    for run in group:
        folders += 1
        parent, _, name = run.path.rpartition(os.sep)  # discovery joins run folders with os.sep
        fd = parents.fd(parent)
        plain = None if fd is None else read_plain_run(fd, name)
        if plain is not None:
            facts, f = plain
            _add_graded(arm, facts.passed, facts.total, f)
            tally_add(eval_id, config, run.run_number, facts.expectations)
            entry = graded_run_json(eval_id, eval_name, config, run.run_number, facts.passed, facts.total,
                                    f.duration, f.tokens, f.tool_calls, f.errors, facts.expectations, facts.notes)
        else:
            record, issues = read_trial(run.path, eval_id, eval_name, config, run.run_number)
            if record is None:
                out.skipped.extend(issues)
                continue
            out.warnings.extend(str(i) for i in issues)
            arm.add(record)
            if record.completed:
                tally_add(eval_id, config, run.run_number, record.expectations)
                add_record(out.turns, record)  # a conversation's results name their turn: never a plain run
            entry = run_json(record)
        if sizes:
            write(SEPARATOR)
        write(entry)
        numbers.append(run.run_number)
        sizes.append(len(entry))
    out.folders[config] = out.folders.get(config, 0) + folders
    if sizes:
        out.spooled.append(spooled)


def _add_graded(arm: Arm, passed: int, total: int, f: Figures) -> None:
    """Arm.add of the record of a completed run with every expectation graded (read_plain_run's),
    without building the record: its verdict is total > 0 and passed == total. (Checked against
    Arm.add on the same runs: tests/analyze/test_cell_reader.py.)"""
    arm.add_completed(f.tokens, f.duration, f.tool_calls, f.triggered, False, total > 0 and passed == total,
                      passed, total, f.cost_usd)


# --- worker processes ---------------------------------------------------------------------------

_spool: IO[bytes] | None = None
_spool_path = ""


def _worker_start(spool_dir: str) -> None:
    """Each worker appends to its own spool file for its whole life: one open per process."""
    global _spool, _spool_path
    _spool_path = os.path.join(spool_dir, f"runs-{os.getpid()}.jsonl")
    _spool = open(_spool_path, "wb")  # noqa: SIM115 - flushed after each eval, closed at exit


def _worker_read(ev: EvalDir) -> EvalRead:
    assert _spool is not None
    out = read_eval(ev, _spool, _spool_path)
    _spool.flush()  # the parent reads the spool once every eval is back
    return out


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _idle_cores() -> float:
    """Cores no other process is using, by the 1-minute load average (as `make -l` judges it)."""
    try:
        return _cpus() - os.getloadavg()[0]
    except OSError:  # no load average (Windows): assume the cores are free
        return float(_cpus())


def _workers(n_evals: int, n_runs_guess: int) -> int:
    if n_runs_guess < PARALLEL_FROM_RUNS:
        return 1
    # Workers only pay when a core is idle: on a busy machine they add fork, copy-on-write and
    # result transfer, and contend with each other for the same cores (20,000 runs at load 18 on
    # 2 CPUs: 2.53-3.41 CPU-s in one process, 0.3 more with 4 workers, and no faster).
    if _idle_cores() < 1:
        return 1
    # Twice the cores: with a cold page cache each worker mostly waits on the disk (200,000 runs
    # on this 2-core VM: 84 s with 2 workers, 53 s with 4); warm, 4 cost what 2 do (7.5 s).
    return max(1, min(2 * _cpus(), n_evals, MAX_WORKERS))


EvalsRead = Callable[[int, int], None]  # (evals read so far, evals in all): progress


def _read_all(evals: list[EvalDir], spool_dir: Path, on_eval: EvalsRead | None = None) -> list[EvalRead]:
    """Read every eval, in worker processes when there is enough to share."""
    guess = len(eval_runs(evals[0])) * len(evals) if evals else 0
    workers = _workers(len(evals), guess)
    done: list[EvalRead] = []
    if workers == 1:
        path = str(spool_dir / "runs.jsonl")
        with open(path, "wb") as spool:
            for ev in evals:
                done.append(read_eval(ev, spool, path))
                if on_eval:
                    on_eval(len(done), len(evals))
        return done
    # Imported here: a process that reads alone (small iterations, busy machines) never needs
    # multiprocessing or concurrent.futures (~20 ms of imports).
    from concurrent.futures import ProcessPoolExecutor

    with _pool_context() as context, ProcessPoolExecutor(
            workers, mp_context=context, initializer=_worker_start, initargs=(str(spool_dir),)) as pool:
        reads = pool.map(_worker_read, evals)  # submitted (and the workers forked) here
        preload()  # the statistics' imports, while the workers read instead of after
        for read in reads:  # in eval order, each as soon as it and those before it are done
            done.append(read)
            if on_eval:
                on_eval(len(done), len(evals))
    return done


@contextmanager
def _pool_context() -> Iterator[BaseContext]:
    """fork on Linux: workers inherit the imported modules, where spawn would import numpy and
    scipy again in each (seconds). Python 3.12+ warns that forking a process with threads may
    deadlock; numpy's BLAS threads are the only ones here and the workers only read files and
    never call BLAS, so the warning is silenced for this fork alone. Elsewhere (macOS, where fork
    is unsafe with system frameworks, and Windows) the platform's default start method."""
    import multiprocessing

    if not sys.platform.startswith("linux"):
        yield multiprocessing.get_context()
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)
        yield multiprocessing.get_context("fork")


# --- putting the evals together --------------------------------------------------------------------


@contextmanager
def read_iteration(iteration: Path, spool_parent: Path, on_eval: EvalsRead | None = None) -> Iterator[IterationRead]:
    """Read every run of an iteration; the spool (a hidden folder in `spool_parent`, removed on
    exit) holds the runs[] entries until benchmark.json is written (write_spooled_runs)."""
    evals, warnings = find_evals(iteration)
    _check_shared_ids(evals)
    created = not spool_parent.exists()
    spool_parent.mkdir(parents=True, exist_ok=True)
    spool_dir = Path(tempfile.mkdtemp(prefix=".skillassay-spool-", dir=spool_parent))
    failed = True
    try:
        reads = _read_all(evals, spool_dir, on_eval)
        yield _combine(evals, reads, warnings)
        failed = False
    finally:
        shutil.rmtree(spool_dir, ignore_errors=True)
        if failed and created:  # an -o folder made for an aggregation that failed goes too
            with suppress(OSError):
                spool_parent.rmdir()


def _check_shared_ids(evals: list[EvalDir]) -> None:
    """Two eval folders may share an eval id (one holds a configuration the other lacks), but
    never a run: refuse before reading anything, as discover() does."""
    shared = {i for i, n in Counter(ev.eval_id for ev in evals).items() if n > 1}
    if shared:
        check_unique(r for ev in evals if ev.eval_id in shared for r in eval_runs(ev))


def _combine(evals: list[EvalDir], reads: list[EvalRead], warnings: list[str]) -> IterationRead:
    """Per-eval reads -> one IterationRead in record order (eval id, configuration, run), as
    records sorted by records.record_order would give, even when folders share an eval id."""
    for r in reads:
        if r.runs is not None:
            check_unique(r.runs)
    for i, r in enumerate(reads):
        for s in r.spooled:
            s.eval_index = i
    order = sorted(range(len(reads)), key=lambda i: record_order(reads[i].eval.eval_id, "", 0))
    cells: dict[int | str, EvalCell] = {}
    first_run: dict[int | str, tuple] = {}  # eval id -> (configuration, run) of its first record
    tally = ExpectationTally()
    turns: dict[int, TurnCounts] = {}
    trials: dict[tuple[int | str, str], int] = {}
    for i in order:
        r = reads[i]
        for config in sorted(r.arms):
            if not r.arms[config].recorded:
                continue
            cell = cells.get(r.eval.eval_id) or cells.setdefault(
                r.eval.eval_id, EvalCell(r.eval.eval_id, r.eval.eval_name, {}))
            if config in cell.arms:
                cell.arms[config].merge(r.arms[config])
            else:
                cell.arms[config] = r.arms[config]
        firsts = [(s.configuration, s.run_numbers[0]) for s in r.spooled]
        if firsts and (r.eval.eval_id not in first_run or min(firsts) < first_run[r.eval.eval_id]):
            first_run[r.eval.eval_id] = min(firsts)
            cells[r.eval.eval_id].eval_name = r.eval.eval_name  # the name its first record carries
        tally.merge(r.tally)
        merge_counts(turns, r.turns)
        for config, n in r.folders.items():
            trials[(r.eval.eval_id, config)] = trials.get((r.eval.eval_id, config), 0) + n
    graded = sorted({(record_order(s.eval_id, s.configuration, 0), s.configuration)
                     for r in reads for s in r.spooled})
    return IterationRead(
        evals=evals, cells=list(cells.values()), tally=tally, turns=turns,
        spooled=[s for r in reads for s in r.spooled],
        configurations=list(dict.fromkeys(c for r in reads for c in r.folders)),
        graded_configurations=list(dict.fromkeys(config for _, config in graded)),
        run_folders=sum(sum(r.folders.values()) for r in reads),
        trials_found=max(trials.values(), default=0),
        skipped=[i for r in reads for i in r.skipped],
        warnings=warnings + [w for r in reads for w in r.warnings],
    )


def with_arms(cells: list[EvalCell], configs: list[str]) -> list[EvalCell]:
    """Every cell with an Arm for every configuration (an empty one where it ran none), as
    cells.group_records gives, so a missing arm shows rather than breaks a lookup."""
    for cell in cells:
        for config in configs:
            cell.arms.setdefault(config, Arm())
    return cells


COPY_BLOCK = 1 << 20


def write_spooled_runs(fh: IO[str], spooled: list[SpooledRuns]) -> None:
    """benchmark.json's runs[] from the spool, in record order (eval, configuration, run),
    copied a block at a time: one eval's 200,000 trials never sit in memory at once."""
    groups: dict[tuple, list[SpooledRuns]] = {}
    for s in spooled:
        groups.setdefault(record_order(s.eval_id, s.configuration, 0), []).append(s)
    with ExitStack() as files:
        spools: dict[str, IO[bytes]] = {}

        def blocks(path: str, offset: int, size: int) -> Iterator[bytes]:
            if path not in spools:
                spools[path] = files.enter_context(open(path, "rb"))  # noqa: SIM115 - closed by the stack
            spool = spools[path]
            spool.seek(offset)
            while size > 0:
                block = spool.read(min(size, COPY_BLOCK))
                if not block:
                    raise OSError(f"{path}: spool ended {size} bytes early")
                size -= len(block)
                yield block

        write_run_texts(fh, (blocks(*piece) for key in sorted(groups) for piece in _pieces(groups[key])))


def _pieces(group: list[SpooledRuns]) -> Iterator[tuple[str, int, int]]:
    """(spool, offset, size) to copy: a folder's entries in one piece, or entry by entry in run
    order when one eval's configuration is split over several folders (legacy + current root,
    or two eval ids that print alike, 3 and "3"; ties keep discovery order)."""
    if len(group) == 1:
        yield group[0].spool, group[0].offset, group[0].size
        return
    entries = []
    for s in group:
        offset = s.offset
        for run_number, size in zip(s.run_numbers, s.sizes, strict=True):
            entries.append((run_number, s.eval_index, offset, s.spool, size))
            offset += size + len(SEPARATOR)
    for _, _, offset, path, size in sorted(entries):
        yield path, offset, size
