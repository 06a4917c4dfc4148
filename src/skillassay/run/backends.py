"""Where a trial's executor runs: here (the thread pool's own thread) or on a Ray cluster.

The seam is one call, `Backend.execute`, which TrialRunner makes in place of execute_trial;
everything around it (planning, resume, grading, the atomic writes, grading.json last) stays
on the driver, so a Ray run has the local run's layout and resume rules by construction.

Ray: each trial is one Ray task. The skill folder and the eval's input files travel as bytes
through the object store (ray.put, once per skill and per eval), never through a filesystem
the nodes would have to share. The worker runs execute_trial exactly as the local backend
does, in its own temporary run folder, and returns the TrialResult, metrics, timing and every
file it wrote; the driver writes them into the real run folder. `ray` is imported only here,
only when the Ray backend is chosen (an optional extra)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skillassay.errors import InputError, Problem
from skillassay.executors import Executor, ExecutorSettings, TrialResult, check_executor, load_executor_class
from skillassay.models import Metrics, Timing
from skillassay.run.execute import RetryPolicy, execute_trial
from skillassay.run.plan import Trial
from skillassay.spec.skill import Skill
from skillassay.store.jsonio import dump_json
from skillassay.store.layout import ANSWER_FILE, remove_tree
from skillassay.store.redact import disk_redactor, looks_secret

BACKENDS = ("local", "ray")
SLOT_RESOURCE = "skillassay_slots"  # custom Ray resource: how many trials a node runs at once
MAX_OUTPUT_BYTES = 64 * 2**20  # the agent's output files a trial may send back from a worker
TASK_RETRIES = 3  # a trial whose worker or node dies runs again (Ray's max_retries)
PREFLIGHT_SECONDS = 120.0
# The files execute_trial itself writes (the agent's own files are everything else in outputs/).
OWN_FILES = frozenset({"transcript.jsonl", "transcript.md", f"outputs/{ANSWER_FILE}", "outputs/metrics.json"})
Executed = tuple[TrialResult, Metrics, Timing]


class Backend:
    """The local thread pool: the trial runs in the calling thread, as it always did."""

    name = "local"

    def preflight(self, executor: Executor) -> None:
        check_executor(executor)

    def default_concurrency(self) -> int:
        return 1

    def execute(self, trial: Trial, executor: Executor, skill: Skill | None, input_files: list[Path],
                policy: RetryPolicy, redactor: Callable[[str], str]) -> Executed:
        return execute_trial(trial, executor, skill, input_files, policy, redactor, write_timing=False)

    def node_of(self, run_dir: Path | None) -> str | None:
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the cluster connection, if any."""


def open_backend(name: str | None, address: str | None, executor: Executor) -> Backend:
    """The chosen backend, connected and checked (preflight) before any trial is spent."""
    name = name or "local"
    if name not in BACKENDS:
        raise InputError.one("--backend", name, f"unknown backend; expected one of: {', '.join(BACKENDS)}")
    backend: Backend = Backend() if name == "local" else RayBackend(address)
    try:
        backend.preflight(executor)
    except BaseException:
        backend.close()
        raise
    return backend


def key_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's secret-looking variables (API keys), for the workers' runtime_env: the
    only way a key reaches a node, never a file. Ray's own settings (RAY_AUTH_MODE) stay out."""
    env = dict(os.environ) if env is None else env
    return {k: v for k, v in env.items() if looks_secret(k) and not k.startswith("RAY_")}


# ---------------------------------------------------------------------------------------------
# What travels: a skill folder and input files as bytes, the worker's files back as bytes.

@dataclass(frozen=True)
class SkillPack:
    """A skill without its path: its folder is `tar` bytes in the object store."""

    name: str
    description: str
    body: str
    frontmatter: dict
    digest: str


@dataclass
class Returned:
    """What a worker sends back for one trial; the driver writes `files` (relative to the run
    folder) with `dirs` created first, then grades as it does locally."""

    result: TrialResult
    metrics: Metrics
    timing: Timing
    files: dict[str, bytes]
    dirs: list[str]
    node: str


def pack_tree(root: Path) -> bytes:
    """The folder as an uncompressed tar (skill folders are small; gzip would cost CPU both
    ends for little), without VCS and cache folders, as hash_tree leaves them out."""
    buf = io.BytesIO()

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = PurePosixPath(info.name).parts
        return None if any(p in {".git", "__pycache__"} or p.endswith("-workspace") for p in parts) else info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        for entry in sorted(os.listdir(root)):
            tar.add(root / entry, arcname=entry, filter=keep)
    return buf.getvalue()


def unpack_skill(pack: tuple[SkillPack, Callable[[], bytes]] | None, cache: Path) -> Skill | None:
    """The skill on this node, extracted once per content digest (trials of one run share it):
    its bytes are fetched (`load`) only when this node has not extracted it yet. Extracted to a
    private folder then renamed, so concurrent workers never see half a skill; `filter="data"`
    refuses absolute paths, `..` and links leaving the folder."""
    if pack is None:
        return None
    meta, load = pack
    target = cache / meta.digest
    if not target.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".x", dir=cache))
        with tarfile.open(fileobj=io.BytesIO(load()), mode="r") as tar:
            tar.extractall(tmp, filter="data")
        try:
            os.rename(tmp, target)
        except OSError:  # another worker got there first: same digest, same content
            shutil.rmtree(tmp, ignore_errors=True)
    return Skill(path=target, name=meta.name, description=meta.description, body=meta.body,
                 frontmatter=meta.frontmatter)


def collect(run: Path) -> tuple[dict[str, bytes], list[str]]:
    """Every file under the worker's run folder (relative POSIX paths) and every folder.
    Symbolic links are not followed: a link the agent made to /etc/passwd on the worker must
    not bring that file back."""
    files: dict[str, bytes] = {}
    dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(run):
        rel_dir = os.path.relpath(dirpath, run)
        dirs += [d if rel_dir == "." else f"{rel_dir}/{d}" for d in dirnames
                 if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                files[name if rel_dir == "." else f"{rel_dir}/{name}"] = fh.read()
    return files, sorted(dirs)


def enforce_limit(files: dict[str, bytes], result: TrialResult, metrics: Metrics,
                  limit: int) -> tuple[dict[str, bytes], TrialResult, Metrics]:
    """Over the limit, the agent's files stay on the worker and the trial is an error that
    says so (status error: the next run tries it again); never a silently partial outputs/."""
    agent = {k: len(v) for k, v in files.items() if k not in OWN_FILES}
    total = sum(agent.values())
    if total <= limit:
        return files, result, metrics
    error = (f"the agent's output files ({len(agent)} files, {total} bytes) exceed the Ray backend's limit of "
             f"{limit} bytes per trial; they were not sent back")
    metrics = metrics.model_copy(update={"status": "error", "error": error, "files_created": [],
                                         "errors_encountered": metrics.errors_encountered + 1})
    kept = {k: v for k, v in files.items() if k in OWN_FILES}
    kept["outputs/metrics.json"] = dump_json(metrics).encode()
    return kept, replace(result, status="error", error=error), metrics


def safe_relative(rel: str) -> PurePosixPath:
    """A path a worker sent, checked before the driver writes it: relative, no `..`."""
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or any(p in {"..", ".", ""} for p in path.parts) or "\\" in rel:
        raise ValueError(f"refusing a returned path outside the run folder: {rel!r}")
    return path


def write_returned(run_dir: Path, returned: Returned) -> None:
    """The worker's files into the run folder: outputs/ replaced (a killed attempt's left-overs
    go first, as execute_trial does locally), each file written to a temp name and renamed, so
    a driver killed here leaves no half file (and no grading.json: the trial runs again).
    Every file passes the driver's disk redactor, the agent's own included: the driver writes
    them, and no file the driver writes carries a key (locally the agent writes its files)."""
    outputs = run_dir / "outputs"
    if outputs.exists() or outputs.is_symlink():
        remove_tree(outputs, run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    for rel in returned.dirs:
        (run_dir / safe_relative(rel)).mkdir(parents=True, exist_ok=True)
    mask = disk_redactor().bytes
    for rel, data in returned.files.items():
        dest = run_dir / safe_relative(rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(mask(data))
        os.replace(tmp, dest)


# ---------------------------------------------------------------------------------------------
# The worker side: module-level functions, so Ray pickles them by reference (every node has
# skillassay installed) and a worker process keeps its executor between trials.

_executors: dict[bytes, Executor] = {}
_executors_lock = threading.Lock()


def worker_executor(name: str, settings: ExecutorSettings) -> Executor:
    """One executor per worker process and settings (a local model loads once, not per trial)."""
    key = hashlib.sha256(repr((name, settings)).encode()).digest()
    with _executors_lock:
        if key not in _executors:
            _executors[key] = load_executor_class(name)(settings)
        return _executors[key]


_label: list[str] = []


def node_label() -> str:
    """This worker's node as preflight names it (address/id): looked up once per process."""
    if not _label:
        import ray

        own = ray.get_runtime_context().get_node_id()
        node = next((n for n in ray.nodes() if n.get("NodeID") == own), {"NodeID": own})
        _label.append(node_text(node))
    return _label[0]


def worker_ready(name: str, settings: ExecutorSettings) -> tuple[str, str | None]:
    """Preflight on one node: the executor's own ready() check, run there."""
    try:
        missing = worker_executor(name, settings).ready()
    except Exception as exc:  # an executor that cannot even be built there (not installed)
        missing = f"{type(exc).__name__}: {exc}"
    return node_label(), missing


def worker_trial(name: str, settings: ExecutorSettings, trial: Trial, skill: tuple[SkillPack, list[Any]] | None,
                 inputs: list[tuple[str, bytes]], policy: RetryPolicy, limit: int) -> Returned:
    """One trial on a worker: execute_trial in a temporary run folder, its files sent back.
    The skill's object comes nested in a list, so Ray does not fetch it for every trial."""
    import ray

    executor = worker_executor(name, settings)
    cache = Path(tempfile.gettempdir()) / f"skillassay-ray-{os.getuid()}" / "skills"
    root = Path(tempfile.mkdtemp(prefix="skillassay-trial-"))
    try:
        local_skill = unpack_skill(None if skill is None else (skill[0], lambda: ray.get(skill[1][0])), cache)
        (root / "in").mkdir()
        paths = []
        for i, (filename, data) in enumerate(inputs):
            (root / "in" / str(i)).mkdir()
            path = root / "in" / str(i) / filename  # execute_trial copies it to outputs/<name>
            path.write_bytes(data)
            paths.append(path)
        result, metrics, timing = execute_trial(replace(trial, run_dir=root / "run"), executor, local_skill, paths,
                                                policy, disk_redactor().text, write_timing=False)
        files, dirs = collect(root / "run")
        files, result, metrics = enforce_limit(files, result, metrics, limit)
        return Returned(result, metrics, timing, files, dirs, node_label())
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The driver side.

class RayBackend(Backend):
    """Trials as Ray tasks. `address` is what ray.init takes (`auto`, `ray://host:10001`,
    `host:6379`); None starts a local Ray instance on this machine.

    Concurrency: the engine's thread pool keeps at most `--concurrency` tasks in flight (the
    cluster-wide bound). A node's own bound is the custom resource `skillassay_slots` (each
    trial takes one; `ray start --resources '{"skillassay_slots": 4}'`); when no node declares
    it, each trial takes one CPU, Ray's default."""

    name = "ray"

    def __init__(self, address: str | None, *, max_output_bytes: int = MAX_OUTPUT_BYTES,
                 retries: int = TASK_RETRIES) -> None:
        try:
            import ray
        except ImportError as exc:
            raise InputError.one("--backend", "ray", "the Ray backend needs Ray here: pip install 'ray>=2.60' "
                                 "(or the [ray] extra: pip install -e '.[ray]' in a skillassay checkout)") from exc
        self.ray = ray
        self.max_output_bytes, self.retries = max_output_bytes, retries
        t0 = time.perf_counter()
        kwargs: dict[str, Any] = {"address": address, "runtime_env": {"env_vars": key_env()},
                                  "log_to_driver": False, "logging_level": "ERROR"}
        if address is None:
            kwargs["include_dashboard"] = False
        try:
            ray.init(**kwargs)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise InputError.one("--ray-address", address or "(local)", f"cannot connect to Ray: {exc}") from exc
        self.startup_seconds = time.perf_counter() - t0
        errors_to_stderr(ray)
        slots = ray.cluster_resources().get(SLOT_RESOURCE, 0)
        self.task_options: dict[str, Any] = (
            {"num_cpus": 0, "resources": {SLOT_RESOURCE: 1}} if slots else {"num_cpus": 1})
        self.task_options["max_retries"] = retries
        self.remote_trial = ray.remote(worker_trial)
        self.remote_ready = ray.remote(worker_ready)
        self.refs: dict[object, Any] = {}  # skill / eval inputs -> their object in the store
        self.refs_lock = threading.Lock()
        self.nodes: dict[str, str] = {}  # run dir -> the node its trial ran on

    def trial_nodes(self) -> list[dict[str, Any]]:
        """The alive nodes a trial can be placed on (with slots, when slots are in use)."""
        resource = SLOT_RESOURCE if "resources" in self.task_options else "CPU"
        return [n for n in self.ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(resource, 0) > 0]

    def default_concurrency(self) -> int:
        """Without --concurrency: what the cluster can run at once."""
        resource = SLOT_RESOURCE if "resources" in self.task_options else "CPU"
        return max(1, int(self.ray.cluster_resources().get(resource, 1)))

    def preflight(self, executor: Executor) -> None:
        """One small task pinned to each node asks the executor's ready() there; the run is
        refused (exit 2) naming every node that cannot run a trial."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = self.trial_nodes()
        if not nodes:
            raise InputError.one("--backend ray", "", f"no alive node offers {SLOT_RESOURCE} or a CPU for trials")
        refs = {self.remote_ready.options(
            num_cpus=0, max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False),
        ).remote(executor.name, executor.settings): n for n in nodes}
        ready, pending = self.ray.wait(list(refs), num_returns=len(refs), timeout=PREFLIGHT_SECONDS)
        problems = [Problem("--backend ray", f"node {node_text(refs[r])}",
                            f"did not answer the preflight check in {PREFLIGHT_SECONDS:g}s") for r in pending]
        for ref in ready:
            try:
                label, missing = self.ray.get(ref)
            except Exception as exc:  # a worker that cannot import skillassay, say
                label, missing = node_text(refs[ref]), f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            if missing:
                problems.append(Problem("--backend ray", f"node {label}",
                                        f"--executor {executor.name} cannot run there: {missing}"))
        if problems:
            raise InputError(sorted(problems, key=lambda p: p.location))

    def put_once(self, key: object, make: Callable[[], object]) -> Any:
        with self.refs_lock:
            if key not in self.refs:
                self.refs[key] = make()
            return self.refs[key]

    def skill_ref(self, skill: Skill | None) -> Any:
        """(metadata with the content digest, [the tar's object]), made once per skill."""
        if skill is None:
            return None

        def make() -> tuple[SkillPack, list[Any]]:
            data = pack_tree(skill.path)
            meta = SkillPack(skill.name, skill.description, skill.body, dict(skill.frontmatter),
                             hashlib.sha256(data).hexdigest()[:32])
            return meta, [self.ray.put(data)]
        return self.put_once(("skill", str(skill.path), skill.name), make)

    def inputs_ref(self, eval_id: object, input_files: list[Path]) -> Any:
        return self.put_once(("inputs", eval_id),
                             lambda: self.ray.put([(f.name, f.read_bytes()) for f in input_files]))

    def execute(self, trial: Trial, executor: Executor, skill: Skill | None, input_files: list[Path],
                policy: RetryPolicy, redactor: Callable[[str], str]) -> Executed:
        ref = self.remote_trial.options(**self.task_options).remote(
            executor.name, executor.settings, trial, self.skill_ref(skill),
            self.inputs_ref(trial.eval.id, input_files), policy, self.max_output_bytes)
        try:
            returned: Returned = self.ray.get(ref)
        except Exception as exc:  # retries used up (the node kept dying), or the task could not run
            return self.failed(trial, executor, f"the Ray task failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
        write_returned(trial.run_dir, returned)
        self.nodes[str(trial.run_dir)] = returned.node
        return returned.result, returned.metrics, returned.timing

    def failed(self, trial: Trial, executor: Executor, error: str) -> Executed:
        """A trial Ray could not run is a failed trial (error), written like any other."""
        result = TrialResult(status="error", error=error)
        return execute_trial(trial, _Failed(executor, result), None, [], RetryPolicy(attempts=1),
                             disk_redactor().text, write_timing=False)

    def node_of(self, run_dir: Path | None) -> str | None:
        return self.nodes.get(str(run_dir)) if run_dir is not None else None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ray.shutdown()


def errors_to_stderr(ray: Any) -> None:
    """Ray prints the raylet's warnings pushed to the driver ("N worker processes have been
    started...") on stdout, where `run --json` writes its one JSON document; they go to stderr
    instead. Ray offers no setting for it, so its printer (private, looked up by name when a
    message arrives) is wrapped; if a Ray version lacks it, nothing changes."""
    module = getattr(getattr(ray, "_private", None), "worker", None)
    printer = getattr(module, "print_to_stdstream", None)
    if printer is None or getattr(printer, "skillassay_stderr", False):
        return

    def to_stderr(data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return printer({**data, "is_err": True}, *args, **kwargs)

    to_stderr.skillassay_stderr = True  # type: ignore[attr-defined]
    module.print_to_stdstream = to_stderr  # type: ignore[union-attr]


class _Failed(Executor):
    """Stands in for the executor of a trial Ray could not run, so its files are written by
    the one writer of trial files (execute_trial) instead of a second copy of it."""

    handles_timeout = True

    def __init__(self, real: Executor, result: TrialResult) -> None:
        super().__init__(real.settings)
        self.name = real.name  # type: ignore[misc]
        self.result = result

    def run(self, request: Any) -> TrialResult:
        return replace(self.result)


def node_text(node: dict[str, Any]) -> str:
    return f"{node.get('NodeManagerAddress', '?')}/{str(node.get('NodeID', '?'))[:8]}"
