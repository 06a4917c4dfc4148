"""Where a trial's executor runs: here (the thread pool's own thread) or on a Ray cluster.

The seam is one call, `Backend.execute`, which TrialRunner makes in place of execute_trial;
everything around it (planning, resume, grading, the atomic writes, grading.json last) stays
on the driver, so a Ray run has the local run's layout and resume rules by construction.

Ray: a pool of long-lived threaded actors, one per node, created once per run, each running its
node's `skillassay_slots` trials at once with one executor (a task per trial started a worker
process each, 1-3 s of CPU, more than the trials cost on a small node). The skill folder and the
eval's input files travel as bytes through the object store (once per skill and per eval), never
through a shared filesystem. The actor runs execute_trial as the local backend does, in its own
temporary run folder, and returns the TrialResult, metrics, timing and every file it wrote; the
driver writes them into the real run folder. `ray` is imported only here, only when the Ray
backend is chosen (an optional extra)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import queue
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skillassay import plugins
from skillassay.errors import InputError, Problem
from skillassay.executors import Executor, ExecutorSettings, TrialResult, check_executor, load_executor_class
from skillassay.executors.process_group import STOP_GRACE_SECONDS, end_all
from skillassay.extras import import_optional
from skillassay.models import Metrics, Timing
from skillassay.run.execute import RetryPolicy, execute_trial
from skillassay.run.plan import Trial
from skillassay.spec.skill import Skill
from skillassay.store.jsonio import dump_json
from skillassay.store.layout import ANSWER_FILE, remove_tree
from skillassay.store.redact import disk_redactor, looks_secret
from skillassay.store.writebehind import DIRECT, FileSink

SLOT_RESOURCE = "skillassay_slots"  # custom Ray resource: how many trials a node runs at once
MAX_OUTPUT_BYTES = 64 * 2**20  # the agent's output files a trial may send back from a worker
TASK_RETRIES = 3  # a trial whose actor (its node) dies runs again on another node, this many times
PREFLIGHT_SECONDS = 120.0
# The files execute_trial itself writes (the agent's own files are everything else in outputs/).
OWN_FILES = frozenset({"transcript.jsonl", "transcript.md", f"outputs/{ANSWER_FILE}", "outputs/metrics.json"})
Executed = tuple[TrialResult, Metrics, Timing]


class Backend:
    """The local thread pool: the trial runs in the calling thread, as it always did."""

    name = "local"

    def __init__(self, address: str | None = None) -> None:
        """A `skillassay.backends` plugin class is called with the cluster address (unused here)."""

    def preflight(self, executor: Executor) -> None:
        check_executor(executor)

    def default_concurrency(self) -> int:
        return 1

    # Whether `execute` hands its files to the caller's sink (store/writebehind.py). The Ray
    # backend writes what a worker returns itself, before grading: its sink goes unused.
    uses_sink = True

    def execute(self, trial: Trial, executor: Executor, skill: Skill | None, input_files: list[Path],
                policy: RetryPolicy, redactor: Callable[[str], str], sink: FileSink = DIRECT) -> Executed:
        return execute_trial(trial, executor, skill, input_files, policy, redactor, write_timing=False,
                             sink=sink)

    def node_of(self, run_dir: Path | None) -> str | None:
        return None

    def stop(self) -> None:  # noqa: B027 - optional hook
        """End agents running elsewhere (run/interrupt.py); here the stop itself ends them."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the cluster connection, if any."""


def open_backend(name: str | None, address: str | None, executor: Executor) -> Backend:
    """The chosen backend plugin (plugins.py), connected and checked (preflight) before any trial is spent."""
    name = name or "local"
    if plugins.find("backends", name) is None:
        raise InputError.one("--backend", name, plugins.unknown("backends", name))
    backend: Backend = plugins.load("backends", name)(address)
    try:
        backend.preflight(executor)
    except BaseException:
        backend.close()
        raise
    return backend


def key_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's secret-looking variables (API keys), handed to each node's actor when it is
    created: the only way a key reaches a node. Not through runtime_env's env_vars, although
    that is Ray's documented way: Ray 2.60 writes a runtime_env, values included, into every
    node's logs/runtime_env_agent.log and onto its workers' command lines (visible to `ps`),
    which tests/run/test_backends_ray.py caught. Ray's own settings (RAY_AUTH_MODE) stay out."""
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
# The worker side: module-level code, so Ray pickles it by reference (every node has
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


def node_inputs(inputs: list[tuple[str, bytes]], cache: Path) -> list[Path]:
    """An eval's input files on this node, written once per content (every trial of the eval
    shares them: execute_trial copies them into its outputs/), private folder then rename as
    for the skill. A name is a file name the driver took from Path.name: no folder in it."""
    if not inputs:
        return []
    digest = hashlib.sha256()
    for filename, data in inputs:
        digest.update(f"{len(filename)}:{filename}:{len(data)}:".encode())
        digest.update(data)
    target = cache / digest.hexdigest()[:32]
    if not target.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".x", dir=cache))
        for i, (filename, data) in enumerate(inputs):
            (tmp / str(i)).mkdir()
            (tmp / str(i) / PurePosixPath(filename).name).write_bytes(data)
        try:
            os.rename(tmp, target)
        except OSError:  # another thread got there first: same digest, same content
            shutil.rmtree(tmp, ignore_errors=True)
    return [target / str(i) / PurePosixPath(filename).name for i, (filename, _) in enumerate(inputs)]


_trash: list[queue.SimpleQueue[Path]] = []
_trash_lock = threading.Lock()


def discard(folder: Path) -> None:
    """A trial's temporary folder, deleted by a background thread of this worker: rmdir costs
    ~4 ms of I/O wait each on an ext4 disk (and a trial has a few), little CPU, and the trial's
    result need not wait for it."""
    with _trash_lock:
        if not _trash:
            _trash.append(queue.SimpleQueue())

            def empty(q: queue.SimpleQueue[Path]) -> None:
                while True:
                    shutil.rmtree(q.get(), ignore_errors=True)
            threading.Thread(target=empty, args=(_trash[0],), daemon=True, name="skillassay-trash").start()
    _trash[0].put(folder)


def worker_trial(name: str, settings: ExecutorSettings, trial: Trial, skill: tuple[SkillPack, list[Any]] | None,
                 inputs: list[tuple[str, bytes]], policy: RetryPolicy, limit: int) -> Returned:
    """One trial on a worker: execute_trial in a temporary run folder, its files sent back.
    The skill's object comes nested in a list, so Ray does not fetch it for every trial."""
    import ray

    executor = worker_executor(name, settings)
    cache = Path(tempfile.gettempdir()) / f"skillassay-ray-{os.getuid()}"
    root = Path(tempfile.mkdtemp(prefix="skillassay-trial-"))
    try:
        local_skill = unpack_skill(None if skill is None else (skill[0], lambda: ray.get(skill[1][0])),
                                   cache / "skills")
        paths = node_inputs(inputs, cache / "inputs")
        result, metrics, timing = execute_trial(replace(trial, run_dir=root), executor, local_skill, paths,
                                                policy, disk_redactor().text, write_timing=False)
        files, dirs = collect(root)
        files, result, metrics = enforce_limit(files, result, metrics, limit)
        return Returned(result, metrics, timing, files, dirs, node_label())
    finally:
        discard(root)


class TrialActor:
    """One per node for a run: preflight (`ready`) and then that node's trials, up to its
    slots at once (a threaded actor: execute_trial is what the local thread pool runs in its
    threads too). The executor is built here once, not per trial."""

    def __init__(self, name: str, settings: ExecutorSettings, keys: dict[str, str]) -> None:
        # The actor's process is its own (one per node per run): its environment is where the
        # executors look for their keys, as the driver's is locally.
        os.environ.update(keys)
        self.name, self.settings = name, settings

    def ready(self) -> tuple[str, str | None]:
        return worker_ready(self.name, self.settings)

    def trial(self, trial: Trial, skill: tuple[SkillPack, list[Any]] | None, inputs: list[tuple[str, bytes]],
              policy: RetryPolicy, limit: int) -> Returned:
        return worker_trial(self.name, self.settings, trial, skill, inputs, policy, limit)

    def stop(self) -> int:
        """End this node's agents (called in the `control` concurrency group: never queued behind trials)."""
        return end_all()


# ---------------------------------------------------------------------------------------------
# The driver side.

@dataclass
class Member:
    """An actor of the pool as the driver tracks it: its node, how many trials it may run at
    once (the node's slots) and how many the driver has sent it that have not come back."""

    handle: Any
    node: dict[str, Any]
    capacity: int
    busy: int = 0


def pick(pool: list[Member]) -> Member | None:
    """The least loaded actor relative to its node's slots (ties: the first), so trials
    spread over the nodes in proportion to what each declared."""
    return min(pool, key=lambda m: m.busy / m.capacity, default=None)


class RayBackend(Backend):
    """Trials on a pool of Ray actors, one per node. `address` is what ray.init takes
    (`auto`, `ray://host:10001`, `host:6379`); None starts a local Ray instance here.

    Concurrency: the engine's thread pool keeps at most `--concurrency` trials in flight (the
    cluster-wide bound). A node's own bound is the custom resource `skillassay_slots`: its actor
    holds all of the node's slots and runs that many trials at once
    (`ray start --resources '{"skillassay_slots": 4}'`); when no node declares it, a node's
    actor holds its CPUs and runs one trial per CPU, as Ray's default of one CPU a task would."""

    uses_sink = False

    name = "ray"

    def __init__(self, address: str | None, *, max_output_bytes: int = MAX_OUTPUT_BYTES,
                 retries: int = TASK_RETRIES) -> None:
        self.ray = ray = import_optional("ray", "--backend ray")  # the one sentence for a missing extra
        self.max_output_bytes, self.retries = max_output_bytes, retries
        t0 = time.perf_counter()
        kwargs: dict[str, Any] = {"address": address, "log_to_driver": False, "logging_level": "ERROR"}
        if address is None:
            kwargs["include_dashboard"] = False
        try:
            ray.init(**kwargs)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise InputError.one("--ray-address", address or "(local)", f"cannot connect to Ray: {exc}") from exc
        self.startup_seconds = time.perf_counter() - t0
        errors_to_stderr(ray)
        self.resource = SLOT_RESOURCE if ray.cluster_resources().get(SLOT_RESOURCE, 0) else "CPU"
        self.actor_class = ray.remote(concurrency_groups={"control": 1})(TrialActor)
        self.pool: list[Member] = []
        self.pool_lock = threading.Lock()
        self.refs: dict[object, Any] = {}  # skill / eval inputs -> their object in the store
        self.refs_lock = threading.Lock()
        self.nodes: dict[str, str] = {}  # run dir -> the node its trial ran on

    def trial_nodes(self) -> list[dict[str, Any]]:
        """The alive nodes a trial can be placed on (with slots, when slots are in use)."""
        return [n for n in self.ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(self.resource, 0) >= 1]

    def default_concurrency(self) -> int:
        """Without --concurrency: what the pool can run at once."""
        return max(1, sum(m.capacity for m in self.pool))

    def start_actor(self, node: dict[str, Any], executor: Executor) -> Member:
        """The node's actor, pinned there and holding all its slots (or CPUs): no other
        skillassay run places trials on them meanwhile, so the per-node bound holds across runs.
        No restarts: a dead actor's trials go to another node's actor (execute)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        amount = node["Resources"][self.resource]
        capacity = int(amount)
        wants: dict[str, Any] = ({"num_cpus": 0, "resources": {SLOT_RESOURCE: amount}}
                                 if self.resource == SLOT_RESOURCE else {"num_cpus": amount})
        handle = self.actor_class.options(
            **wants, max_concurrency=capacity, max_restarts=0, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
        ).remote(executor.name, executor.settings, key_env())
        return Member(handle, node, capacity)

    def preflight(self, executor: Executor) -> None:
        """Each node's actor, once started, asks the executor's ready() there; the run is
        refused (exit 2) naming every node that cannot run a trial. The actors that pass are
        the run's pool."""
        nodes = self.trial_nodes()
        if not nodes:
            raise InputError.one("--backend ray", "", f"no alive node offers {SLOT_RESOURCE} or a CPU for trials")
        members = [self.start_actor(n, executor) for n in nodes]
        refs = {m.handle.ready.remote(): m for m in members}
        ready, pending = self.ray.wait(list(refs), num_returns=len(refs), timeout=PREFLIGHT_SECONDS)
        problems = [Problem("--backend ray", f"node {node_text(refs[r].node)}",
                            f"did not answer the preflight check in {PREFLIGHT_SECONDS:g}s (are its "
                            f"{self.resource} held by another run?)") for r in pending]
        for ref in ready:
            try:
                label, missing = self.ray.get(ref)
            except Exception as exc:  # a worker that cannot import skillassay, say
                label, missing = node_text(refs[ref].node), f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            if missing:
                problems.append(Problem("--backend ray", f"node {label}",
                                        f"--executor {executor.name} cannot run there: {missing}"))
        if problems:
            for m in members:
                with contextlib.suppress(Exception):
                    self.ray.kill(m.handle)
            raise InputError(sorted(problems, key=lambda p: p.location))
        self.pool = members

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

    def take(self) -> Member | None:
        with self.pool_lock:
            member = pick(self.pool)
            if member is not None:
                member.busy += 1
            return member

    def give_back(self, member: Member, dead: bool) -> None:
        with self.pool_lock:
            member.busy -= 1
            if dead and member in self.pool:
                self.pool.remove(member)

    def execute(self, trial: Trial, executor: Executor, skill: Skill | None, input_files: list[Path],
                policy: RetryPolicy, redactor: Callable[[str], str], sink: FileSink = DIRECT) -> Executed:
        """The trial on the least loaded actor. An actor that died (its node, say) leaves the
        pool and the trial goes to another, up to `retries` times; nothing was written for it,
        so it is written once, when an actor returns it."""
        from ray.exceptions import RayActorError

        skill_arg, inputs = self.skill_ref(skill), self.inputs_ref(trial.eval.id, input_files)
        lost = ""
        for _ in range(self.retries + 1):
            member = self.take()
            if member is None:
                break
            dead = False
            try:
                returned: Returned = self.ray.get(self.send(member, trial, executor, skill_arg, inputs, policy))
            except RayActorError as exc:
                dead, lost = True, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                continue
            except Exception as exc:  # the trial's own code failed on the worker
                return self.failed(trial, executor,
                                   f"the Ray task failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            finally:
                self.give_back(member, dead)
            write_returned(trial.run_dir, returned)
            self.nodes[str(trial.run_dir)] = returned.node
            return returned.result, returned.metrics, returned.timing
        return self.failed(trial, executor, f"the Ray task failed: no node could run it ({lost or 'no actor left'})")

    def send(self, member: Member, trial: Trial, executor: Executor, skill_arg: Any, inputs: Any,
             policy: RetryPolicy) -> Any:  # the remote call; a matrix backend sends the agent too
        return member.handle.trial.remote(trial, skill_arg, inputs, policy, self.max_output_bytes)

    def failed(self, trial: Trial, executor: Executor, error: str) -> Executed:
        """A trial Ray could not run is a failed trial (error), written like any other."""
        result = TrialResult(status="error", error=error)
        return execute_trial(trial, _Failed(executor, result), None, [], RetryPolicy(attempts=1),
                             disk_redactor().text, write_timing=False)

    def node_of(self, run_dir: Path | None) -> str | None:
        return self.nodes.get(str(run_dir)) if run_dir is not None else None

    def stop(self) -> None:
        """Each node's actor ends its agents; the trials then return and are not kept."""
        with contextlib.suppress(Exception):
            refs = [m.handle.stop.options(concurrency_group="control").remote() for m in list(self.pool)]
            self.ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_SECONDS)

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
