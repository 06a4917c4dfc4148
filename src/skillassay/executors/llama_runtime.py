"""How the embedded model is run (threads, batch sizes) and what its answers depend on.

llama-cpp-python runs generation on half the CPUs unless told otherwise (one core on a 2-core
machine: the example took twice as long as it needed); here it gets every CPU this process may
use. The thread count does not change an answer (measured: docs/local-model.md), so it is
recorded in iteration.json but is not part of the fingerprint. What does change answers at the
same seed (the prompt batch size, the llama.cpp build and the CPU features it uses, the model
file) is recorded beside it, so two runs that disagree can be told apart."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from typing import Any


def import_llama_cpp() -> Any:
    """llama_cpp, with OpenMP's idle threads told to sleep instead of spin unless the user
    chose otherwise (libgomp reads OMP_WAIT_POLICY once, when llama.cpp's library loads). Its
    spinning threads wait for a CPU that another process holds: measured on this 2-core
    machine under a load of ~11, two spinning threads took 6x the CPU time and 3x the wall time
    of one thread, two sleeping threads the same CPU time as one and half its wall time.
    The child processes (the batch probe) inherit the setting."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    return llama_cpp


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (what taskset or a container's
    cpuset allow), not the machine's count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


@cache
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_sha256(path: Path) -> str:
    """The model file's hash (once per process per file version: 98 MB takes ~0.2 s)."""
    st = path.stat()
    return _file_sha256(str(path), st.st_size, st.st_mtime_ns)


@cache
def build_info() -> dict[str, str]:
    """llama-cpp-python's version and what its llama.cpp build uses on this CPU (SIMD flags,
    llamafile GEMM, repacking, OpenMP): answers at the same seed can differ between builds."""
    llama_cpp = import_llama_cpp()
    return {"llama_cpp_python": llama_cpp.__version__,
            "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip()}


def runtime_record(model: Path, n_threads: int, n_batch: int, n_batch_source: str) -> dict[str, Any]:
    """What iteration.json records about how the embedded model ran."""
    return {"n_threads": n_threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
            "n_batch": n_batch, "n_ubatch": n_batch, "n_batch_source": n_batch_source,
            "model_file": model.name, "model_sha256": model_sha256(model), **build_info()}
